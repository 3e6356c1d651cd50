//! Robustness (issue 10, options): hand-made datagrams at `covey serve` over loopback. A
//! critical option Covey does not process (EDHOC, Q-Block1, Q-Block2) is 4.02, not served,
//! and an OSCORE option no context of the server verifies is 4.01; Proxy-Uri and Proxy-Scheme are 5.05; If-Match and If-None-Match guard every
//! change of `/echo` and of the plugtest resources; a CON larger than a message is answered
//! 4.13 with Size1 instead of silence.

mod raw_client;
mod support;
/// The configuration `covey serve` runs with, from the binary's own source.
#[path = "../src/commands/serve/tuning.rs"]
mod tuning;

use covey_core::{Code, MessageType, OptionNumber};
use raw_client::{path, Raw};
use support::covey_server;

#[test]
fn critical_options_covey_does_not_process_are_bad_option_and_proxies_are_not_supported() {
    let (_server, port) = covey_server(&[]);
    let mut raw = Raw::to(port);
    // First, as the budget of this unverified address then has room for the whole
    // diagnostic. RFC 8613 §8.2: a kid the server has no context for, answered unprotected.
    let options = [(OptionNumber::OSCORE, &[0x09, 0x14][..]), path("time")];
    let a = raw.ask(Code::GET, &options, b"");
    assert_eq!(a.code, Code::UNAUTHORIZED, "{}", a.text());
    assert_eq!(a.payload, b"Security context not found");
    let cases: [(OptionNumber, &[u8]); 3] = [
        (OptionNumber::EDHOC, b""),
        (OptionNumber::Q_BLOCK1, &[0x06]),
        (OptionNumber::Q_BLOCK2, &[0x06]),
    ];
    for (number, value) in cases {
        let mut options = vec![(number, value)];
        options.push(path("time"));
        options.sort_by_key(|(n, _)| *n);
        let a = raw.ask(Code::GET, &options, b"");
        assert_eq!(
            (a.kind, a.code),
            (MessageType::Acknowledgement, Code::BAD_OPTION),
            "{number}"
        );
        let said = format!("unrecognised critical option {}", number.0);
        assert_eq!(a.payload, said.as_bytes());
    }
    let proxy_uri = format!("coap://127.0.0.1:{port}/time");
    for (number, value) in [
        (OptionNumber::PROXY_URI, proxy_uri.as_bytes()),
        (OptionNumber::PROXY_SCHEME, b"coap"),
    ] {
        let a = raw.ask(Code::GET, &[path("time"), (number, value)], b"");
        assert_eq!(
            a.code,
            Code::PROXYING_NOT_SUPPORTED,
            "{number}: {}",
            a.text()
        );
    }
    // The same request without them is served.
    assert_eq!(raw.ask(Code::GET, &[path("time")], b"").code, Code::CONTENT);
}

#[test]
fn if_match_and_if_none_match_guard_every_change() {
    let (_server, port) = covey_server(&["--plugtest"]);
    let mut raw = Raw::to(port);
    let echo = path("echo");
    // /echo holds nothing yet: If-Match fails, If-None-Match creates.
    let a = raw.ask(Code::PUT, &[(OptionNumber::IF_MATCH, b""), echo], b"x");
    assert_eq!(a.code, Code::PRECONDITION_FAILED);
    let a = raw.ask(
        Code::PUT,
        &[(OptionNumber::IF_NONE_MATCH, b""), echo],
        b"first",
    );
    assert_eq!(a.code, Code::CHANGED);
    let tag = a.etag.expect("an ETag");
    // Now it exists: If-None-Match fails, a stale ETag fails, the current one succeeds.
    let a = raw.ask(
        Code::PUT,
        &[(OptionNumber::IF_NONE_MATCH, b""), echo],
        b"lost",
    );
    assert_eq!(a.code, Code::PRECONDITION_FAILED);
    let a = raw.ask(
        Code::POST,
        &[(OptionNumber::IF_MATCH, b"stale"), echo],
        b"lost",
    );
    assert_eq!(a.code, Code::PRECONDITION_FAILED);
    let a = raw.ask(
        Code::DELETE,
        &[(OptionNumber::IF_MATCH, b"stale"), echo],
        b"",
    );
    assert_eq!(a.code, Code::PRECONDITION_FAILED);
    let got = raw.ask(Code::GET, &[echo], b"");
    assert_eq!(
        (got.payload.as_slice(), got.etag.as_ref()),
        (&b"first"[..], Some(&tag))
    );
    let a = raw.ask(
        Code::PUT,
        &[(OptionNumber::IF_MATCH, &tag), echo],
        b"second",
    );
    assert_eq!(a.code, Code::CHANGED);
    assert_ne!(a.etag.as_ref(), Some(&tag), "a change makes a new ETag");
    // The plugtest's /test always exists and has no ETag.
    let test = path("test");
    let a = raw.ask(Code::PUT, &[(OptionNumber::IF_NONE_MATCH, b""), test], b"x");
    assert_eq!(a.code, Code::PRECONDITION_FAILED);
    let a = raw.ask(
        Code::DELETE,
        &[(OptionNumber::IF_MATCH, b"\x01"), test],
        b"",
    );
    assert_eq!(a.code, Code::PRECONDITION_FAILED);
    let a = raw.ask(Code::PUT, &[(OptionNumber::IF_MATCH, b""), test], b"x");
    assert_eq!(a.code, Code::CHANGED);
}

#[test]
fn a_con_request_larger_than_a_message_gets_request_entity_too_large_with_size1() {
    let (_server, port) = covey_server(&[]);
    let mut raw = Raw::to(port);
    let config = tuning::config();
    let body = vec![b'x'; config.max_message_size + 100];
    let a = raw.ask(Code::PUT, &[path("echo")], &body);
    assert_eq!(
        (a.kind, a.code, a.mid),
        (
            MessageType::Acknowledgement,
            Code::REQUEST_ENTITY_TOO_LARGE,
            raw.next_mid
        )
    );
    assert_eq!(a.size1, Some(config.max_body_size as u32));
    assert!(a.block1, "the preferred block size is given");
    // Nothing was stored.
    assert_eq!(raw.ask(Code::GET, &[path("echo")], b"").payload, b"");
}
