//! The URI vectors U1–U6 (docs/architecture.md, "Test vectors"), round trips and properties.

use core::net::{IpAddr, SocketAddr};
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

use proptest::prelude::*;

use super::*;
use crate::{CoapOption, Code, Message, MessageEncoder, MessageType, OptionNumber};

const HOST: OptionNumber = OptionNumber::URI_HOST;
const PORT: OptionNumber = OptionNumber::URI_PORT;
const PATH: OptionNumber = OptionNumber::URI_PATH;
const QUERY: OptionNumber = OptionNumber::URI_QUERY;

type Options = Vec<(OptionNumber, Vec<u8>)>;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn decompose(uri: &str, destination: Option<SocketAddr>) -> Options {
    Uri::parse(uri)
        .unwrap()
        .options(destination)
        .map(|(n, v)| (n, v.to_vec()))
        .collect()
}

fn opts(list: &[(OptionNumber, &[u8])]) -> Options {
    list.iter().map(|(n, v)| (*n, v.to_vec())).collect()
}

fn compose_to_string(options: &Options, destination: SocketAddr, scheme: Scheme) -> String {
    let mut s = String::new();
    let iter = options.iter().map(|(number, value)| CoapOption {
        number: *number,
        value,
    });
    compose(iter, destination, scheme, &mut s).unwrap();
    s
}

#[test]
fn u1_registered_name_default_port() {
    let d = Some(addr("192.0.2.1:5683"));
    assert_eq!(
        decompose("coap://example.com:5683/~sensors/temp.xml", d),
        opts(&[
            (HOST, b"example.com"),
            (PATH, b"~sensors"),
            (PATH, b"temp.xml")
        ])
    );
}

#[test]
fn u2_case_and_percent_encoding_do_not_matter() {
    let d = Some(addr("192.0.2.1:5683"));
    assert_eq!(
        decompose("coap://EXAMPLE.com/%7Esensors/temp.xml", d),
        decompose("coap://example.com:5683/~sensors/temp.xml", d)
    );
}

#[test]
fn u3_ip_literal_root_gives_no_options() {
    let d = Some(addr("[2001:db8::2:1]:5683"));
    assert!(decompose("coap://[2001:db8::2:1]/", d).is_empty());
}

#[test]
fn u4_empty_segments_and_encoded_delimiters() {
    let d = Some(addr("198.51.100.1:61616"));
    assert_eq!(
        decompose("coap://198.51.100.1:61616//%2F//?%2F%2F&?%26", d),
        opts(&[
            (PATH, b""),
            (PATH, b"/"),
            (PATH, b""),
            (PATH, b""),
            (QUERY, b"//"),
            (QUERY, b"?&")
        ])
    );
}

#[test]
fn u5_compose_well_known_core() {
    let options = opts(&[
        (HOST, b"example.net"),
        (PATH, b".well-known"),
        (PATH, b"core"),
    ]);
    assert_eq!(
        compose_to_string(&options, addr("192.0.2.1:5683"), Scheme::Coap),
        "coap://example.net/.well-known/core"
    );
}

#[test]
fn u6_fragment_fails() {
    let e = Uri::parse("coap://h/a#frag").unwrap_err();
    assert_eq!(
        e,
        UriError {
            kind: UriErrorKind::Fragment,
            offset: 10
        }
    );
    assert_eq!(
        e.to_string(),
        "at byte 10: fragment not allowed in a CoAP URI"
    );
}

#[test]
fn ports() {
    // coaps defaults to 5684: no Uri-Port without a destination, or to a 5684 destination.
    assert_eq!(decompose("coaps://h/", None), opts(&[(HOST, b"h")]));
    assert_eq!(
        decompose("coaps://h:5684/", Some(addr("[::1]:5684"))),
        opts(&[(HOST, b"h")])
    );
    // ... but one when the destination port differs.
    assert_eq!(
        decompose("coaps://h/", Some(addr("[::1]:5683"))),
        opts(&[(HOST, b"h"), (PORT, &[0x16, 0x34])])
    );
    assert_eq!(
        decompose("coap://[::1]:5684/a", None),
        opts(&[(PORT, &[0x16, 0x34]), (PATH, b"a")])
    );
    assert_eq!(
        decompose("coap://[::1]:5684/a", Some(addr("[::1]:5684"))),
        opts(&[(PATH, b"a")])
    );
    assert_eq!(
        decompose("coap://h:0/", None),
        opts(&[(HOST, b"h"), (PORT, b"")])
    );
}

#[test]
fn zones_never_become_options() {
    let u = Uri::parse("coap://[fe80::1%25eth0]:61616/x").unwrap();
    assert_eq!(u.zone(), Some("eth0"));
    assert_eq!(u.host(), Host::Ip("fe80::1".parse().unwrap()));
    let d = Some(addr("[fe80::1%2]:61616"));
    assert_eq!(u.options(d).map(|(n, _)| n).collect::<Vec<_>>(), [PATH]);
    assert_eq!(
        u.normalized().to_string(),
        "coap://[fe80::1%25eth0]:61616/x"
    );
    let u = Uri::parse("coap://[FE80::0:1%25%65th0]/").unwrap();
    assert_eq!(u.normalized().to_string(), "coap://[fe80::1%25eth0]/");
}

#[test]
fn host_is_lowered_and_decoded() {
    assert_eq!(
        decompose("coap://EXAMPLE.COM/", None),
        opts(&[(HOST, b"example.com")])
    );
    assert_eq!(
        decompose("coap://ex%41mple/", None),
        opts(&[(HOST, b"example")])
    );
    assert_eq!(
        decompose("coap://%C3%89t%C3%A9/", None),
        opts(&[(HOST, "Été".as_bytes())])
    );
    assert_eq!(
        decompose("coap://h/%7E", None),
        opts(&[(HOST, b"h"), (PATH, b"~")])
    );
    // IPv4 hosts, even percent-encoded, are addresses and never Uri-Host.
    assert!(decompose("coap://%31%39%32.0.2.1/", None).is_empty());
}

#[test]
fn errors_with_offsets() {
    let cases = [
        ("http://h/", UriErrorKind::UnsupportedScheme, 0),
        ("coap:///x", UriErrorKind::EmptyHost, 7),
        ("coap://h/a#frag", UriErrorKind::Fragment, 10),
        ("coap://h/%G1", UriErrorKind::InvalidPercentEncoding, 9),
        ("coap://h:70000/", UriErrorKind::InvalidPort, 9),
        ("coap://[fe80::1%zz]/", UriErrorKind::InvalidZone, 15),
    ];
    for (text, kind, offset) in cases {
        assert_eq!(Uri::parse(text), Err(UriError { kind, offset }), "{text}");
    }
    assert_eq!(
        Uri::parse("coap://h:70000/").unwrap_err().to_string(),
        "at byte 9: invalid port (expected a number up to 65535)"
    );
}

#[test]
fn segment_of_256_decoded_bytes_is_rejected() {
    let ok = format!("coap://h/{}", "%41".repeat(255));
    assert_eq!(decompose(&ok, None)[1].1.len(), 255);
    let too_long = format!("coap://h/a/{}%41", "b".repeat(255));
    assert_eq!(
        Uri::parse(&too_long),
        Err(UriError {
            kind: UriErrorKind::ValueTooLong,
            offset: 11
        })
    );
}

#[test]
fn dot_segments_are_resolved() {
    assert_eq!(
        decompose("coap://h/a/./b/../c/%2E", None),
        opts(&[(HOST, b"h"), (PATH, b"a"), (PATH, b"c"), (PATH, b".")])
    );
    assert_eq!(decompose("coap://h/a/..", None), opts(&[(HOST, b"h")]));
}

#[test]
fn round_trips_give_the_normalised_uri() {
    let cases = [
        (
            "coap://EXAMPLE.com:5683/%7Esensors/temp.xml",
            "coap://example.com/~sensors/temp.xml",
        ),
        (
            "coap://198.51.100.1:61616//%2F//?%2F%2F&?%26",
            "coap://198.51.100.1:61616//%2F//?//&?%26",
        ),
        ("COAPS://h:5684", "coaps://h/"),
        ("coaps://h:5683?", "coaps://h:5683/?"),
        ("coap://[2001:DB8:0::2:1]/", "coap://[2001:db8::2:1]/"),
        ("coap://[::1]:5684/a", "coap://[::1]:5684/a"),
        (
            "coap://h/a/b/../%2e/c%3a%40%21?x=%2f&%3F",
            "coap://h/a/%2E/c:@!?x=/&?",
        ),
        ("coap://h/%C3%A9%20", "coap://h/%C3%A9%20"),
        ("coap://h/a/", "coap://h/a/"),
    ];
    for (input, normal) in cases {
        let u = Uri::parse(input).unwrap();
        let destination = match u.socket_addr() {
            Some(d) => d,
            None => SocketAddr::new(IpAddr::from([192, 0, 2, 1]), 5683),
        };
        let options: Options = u
            .options(Some(destination))
            .map(|(n, v)| (n, v.to_vec()))
            .collect();
        assert_eq!(
            compose_to_string(&options, destination, u.scheme()),
            normal,
            "{input}"
        );
        assert_eq!(u.normalized().to_string(), normal, "{input}");
    }
}

#[test]
fn write_options_into_a_message() {
    let mut buf = [0u8; 64];
    let mut enc = MessageEncoder::new(
        &mut buf,
        MessageType::Confirmable,
        Code::GET,
        0x7d34,
        &[0x1a, 0x2b],
    )
    .unwrap();
    let u = Uri::parse("coap://192.0.2.1/temp").unwrap();
    u.write_options(u.socket_addr(), &mut enc).unwrap();
    let n = enc.finish();
    // Vector E1 of the spec.
    assert_eq!(
        &buf[..n],
        &[0x42, 0x01, 0x7d, 0x34, 0x1a, 0x2b, 0xb4, 0x74, 0x65, 0x6d, 0x70]
    );

    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 1, &[]).unwrap();
    let u = Uri::parse("coap://Example.net:61616/.well-known/core?rt=x").unwrap();
    u.write_options(None, &mut enc).unwrap();
    let n = enc.finish();
    let m = Message::parse(&buf[..n]).unwrap();
    let mut s = String::new();
    compose(m.options(), addr("192.0.2.1:5683"), Scheme::Coap, &mut s).unwrap();
    assert_eq!(s, "coap://example.net:61616/.well-known/core?rt=x");
}

#[test]
fn many_parent_segments_stay_cheap() {
    // Dot-segment removal has no buffer; check it stays fast on a hostile path.
    let mut text = String::from("coap://h");
    for _ in 0..2000 {
        text.push_str("/a");
    }
    for _ in 0..1000 {
        text.push_str("/..");
    }
    let u = Uri::parse(&text).unwrap();
    assert_eq!(u.options(None).filter(|(n, _)| *n == PATH).count(), 1001);
}

// ---- properties ----

const UNRESERVED: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
const SUB_DELIMS: &str = "!$&'()*+,;=";

fn keeps_segment(b: u8) -> bool {
    UNRESERVED.as_bytes().contains(&b)
        || SUB_DELIMS.as_bytes().contains(&b)
        || b == b':'
        || b == b'@'
}

fn keeps_query(b: u8) -> bool {
    b != b'&' && (keeps_segment(b) || b == b'/' || b == b'?')
}

/// Canonical encoding, written independently of the module: upper-case hex, nothing extra.
fn canonical(value: &str, keep: fn(u8) -> bool, whole_dots: bool) -> String {
    let dots = whole_dots && (value == "." || value == "..");
    value
        .bytes()
        .map(|b| {
            if keep(b) && !dots {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A sloppy but equivalent encoding: optional escapes, lower-case hex at random.
fn sloppy(value: &str, keep: fn(u8) -> bool, whole_dots: bool, rng: &mut u64) -> String {
    let mut coin = || {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng & 1 == 1
    };
    let dots = whole_dots && (value == "." || value == "..");
    let mut out = String::new();
    for (i, b) in value.bytes().enumerate() {
        let must = !keep(b) || (dots && i == 0);
        if must || coin() {
            if coin() {
                out.push_str(&format!("%{b:02x}"));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(char::from(b));
        }
    }
    out
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(".".to_string()),
        Just("..".to_string()),
        "[a-z./%?&#:@!=\\[\\] ]{0,6}",
        any::<String>().prop_map(|s| s.chars().take(12).collect()),
    ]
}

#[derive(Debug, Clone)]
enum TestHost {
    Name(String),
    Ip(IpAddr),
}

fn test_host() -> impl Strategy<Value = TestHost> {
    prop_oneof![
        "[a-zA-Z][a-zA-Z0-9-]{0,10}(\\.[a-zA-Z0-9-]{1,8}){0,2}".prop_map(TestHost::Name),
        any::<[u8; 4]>().prop_map(|b| TestHost::Ip(IpAddr::from(b))),
        any::<[u16; 8]>().prop_map(|b| TestHost::Ip(IpAddr::from(b))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics(text in any::<String>()) {
        if let Ok(u) = Uri::parse(&text) {
            let _ = u.options(None).count();
            let _ = u.normalized().to_string();
        }
    }

    #[test]
    fn parse_never_panics_on_uri_like_text(
        text in "(coaps?|COAP|http|)(:|://)[a-zA-Z0-9.:%\\[\\]@/?&#=~ -]{0,40}"
    ) {
        if let Ok(u) = Uri::parse(&text) {
            let normal = u.normalized().to_string();
            let again = Uri::parse(&normal).expect("the normalised form parses");
            prop_assert_eq!(again.normalized().to_string(), normal.clone());
            let a: Options = u.options(None).map(|(n, v)| (n, v.to_vec())).collect();
            let b: Options = again.options(None).map(|(n, v)| (n, v.to_vec())).collect();
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn compose_of_decompose_is_the_normalised_uri(
        coaps in any::<bool>(),
        upper_scheme in any::<bool>(),
        host in test_host(),
        port in proptest::option::of(any::<u16>()),
        segments in proptest::collection::vec(component(), 0..6),
        query in proptest::option::of(proptest::collection::vec(component(), 1..4)),
        seed in 1u64..,
    ) {
        let mut rng = seed;
        let scheme = if coaps { Scheme::Coaps } else { Scheme::Coap };
        let mut raw = String::from(scheme.as_str());
        if upper_scheme {
            raw.make_ascii_uppercase();
        }
        let mut normal = format!("{}://", scheme.as_str());
        raw.push_str("://");
        match &host {
            TestHost::Name(n) => {
                raw.push_str(&sloppy(n, |b| UNRESERVED.as_bytes().contains(&b), false, &mut rng));
                normal.push_str(&n.to_ascii_lowercase());
            }
            TestHost::Ip(IpAddr::V4(ip)) => {
                raw.push_str(&ip.to_string());
                normal.push_str(&ip.to_string());
            }
            TestHost::Ip(IpAddr::V6(ip)) => {
                raw.push_str(&format!("[{ip}]"));
                normal.push_str(&format!("[{ip}]"));
            }
        }
        if let Some(p) = port {
            raw.push_str(&format!(":{p}"));
        }
        let effective = port.unwrap_or(scheme.default_port());
        if effective != scheme.default_port() {
            normal.push_str(&format!(":{effective}"));
        }
        for s in &segments {
            raw.push('/');
            raw.push_str(&sloppy(s, keeps_segment, true, &mut rng));
            normal.push('/');
            normal.push_str(&canonical(s, keeps_segment, true));
        }
        if segments.is_empty() {
            normal.push('/');
        }
        for (i, q) in query.iter().flatten().enumerate() {
            let sep = if i == 0 { '?' } else { '&' };
            raw.push(sep);
            raw.push_str(&sloppy(q, keeps_query, false, &mut rng));
            normal.push(sep);
            normal.push_str(&canonical(q, keeps_query, false));
        }

        let u = Uri::parse(&raw).map_err(|e| TestCaseError::fail(format!("{raw}: {e}")))?;
        let destination = match &host {
            TestHost::Ip(ip) => SocketAddr::new(*ip, 5683),
            TestHost::Name(_) => SocketAddr::new(IpAddr::from([192, 0, 2, 1]), 5683),
        };
        let options: Options = u.options(Some(destination)).map(|(n, v)| (n, v.to_vec())).collect();
        // The path survives as given, except that a lone empty segment is the same as "/".
        let paths: Vec<Vec<u8>> = options.iter().filter(|(n, _)| *n == PATH).map(|(_, v)| v.clone()).collect();
        let expected: Vec<Vec<u8>> = if segments == [""] {
            vec![]
        } else {
            segments.iter().map(|s| s.as_bytes().to_vec()).collect()
        };
        prop_assert_eq!(paths, expected);
        let queries: Vec<Vec<u8>> = options.iter().filter(|(n, _)| *n == QUERY).map(|(_, v)| v.clone()).collect();
        prop_assert_eq!(queries, query.iter().flatten().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>());
        prop_assert_eq!(compose_to_string(&options, destination, scheme), normal.clone());
        prop_assert_eq!(u.normalized().to_string(), normal);
    }
}
