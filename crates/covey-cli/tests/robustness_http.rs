//! Robustness of `covey gateway`'s HTTP side and of Covey's client against attacks over
//! loopback, each bounded in time: idle and slow (slowloris) HTTP connections that would
//! hold every connection place, a web page making the browser use the proxy against a UDP
//! service (cross-site SSRF), proxy targets that name no host or a group, CoAP servers that
//! answer with codes no response may carry, and a Block2 server that sends block 0 forever.

mod bad_server;
mod gateway_support;
mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use bad_server::{always_block_zero, answering_code, BadServer};
use gateway_support::{covey_run, gateway_with_http_and, Scratch};
use reqwest::blocking::Client;
use reqwest::StatusCode;
use support::stderr;

/// The attacker's address: a second loopback address, so its share is not the victim's.
const ATTACKER: &str = "127.0.0.2";

fn http(timeout: Duration) -> Client {
    Client::builder()
        .timeout(timeout)
        .build()
        .expect("HTTP client")
}

/// A TCP connection to `addr` from `local` (port chosen by the system).
fn connect_from(local: &str, addr: &str) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind(format!("{local}:0").parse().expect("local address"))
            .expect("bind");
        socket
            .connect(addr.parse().expect("address"))
            .await
            .expect("connect")
    });
    let stream = stream.into_std().expect("std stream");
    stream.set_nonblocking(false).expect("blocking");
    stream
}

/// Sends `GET /api/info` on `stream` and returns the time until its status line arrived,
/// or `None` when none came within `limit`.
fn served_within(stream: &mut TcpStream, host: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    stream.set_read_timeout(Some(limit)).ok()?;
    write!(stream, "GET /api/info HTTP/1.1\r\nHost: {host}\r\n\r\n").ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    head.starts_with(b"HTTP/1.1 200").then(|| start.elapsed())
}

/// How long until the server closes `stream` (EOF or reset), reading whatever it sends;
/// `None` when it stays open for `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 512];
    while start.elapsed() < limit {
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .ok()?;
        match stream.read(&mut buf) {
            Ok(0) => return Some(start.elapsed()),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Some(start.elapsed()),
        }
    }
    None
}

#[test]
fn idle_connections_from_one_address_do_not_lock_others_out() {
    let scratch = Scratch::new("robust-http-idle");
    // Default bounds: 256 connections in all, 32 per address.
    let (_gateway, base) = gateway_with_http_and(&scratch.join("e.db"), &[]);
    let addr = base.trim_start_matches("http://").to_string();
    // 256 connections that never send a byte: before the per-address share, they took
    // every place and the victim waited until one closed (never, for idle ones).
    let mut idle: Vec<TcpStream> = (0..256).map(|_| connect_from(ATTACKER, &addr)).collect();
    let mut victim = TcpStream::connect(&addr).expect("connect");
    let waited = served_within(&mut victim, &addr, Duration::from_secs(5));
    assert!(waited.is_some(), "the victim was not served within 5 s");
    // Beyond its share, the attacker is told why and disconnected.
    let last = idle.last_mut().expect("connections");
    let mut refusal = String::new();
    last.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = last.read_to_string(&mut refusal);
    assert!(refusal.is_empty() || refusal.contains("503"), "{refusal:?}");
}

#[test]
fn idle_and_slow_connections_are_closed_after_their_timeouts() {
    let scratch = Scratch::new("robust-http-slow");
    let (_gateway, base) = gateway_with_http_and(
        &scratch.join("e.db"),
        &[
            "--http-max-connections",
            "4",
            "--http-header-timeout",
            "1",
            "--http-idle-timeout",
            "2",
        ],
    );
    let addr = base.trim_start_matches("http://").to_string();
    // From the victim's own address, so the per-address share does not help: two idle
    // connections and two that send a request head one byte every 200 ms (slowloris).
    let mut idle: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(&addr).expect("connect"))
        .collect();
    let mut slow: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(&addr).expect("connect"))
        .collect();
    let writer = {
        let mut streams: Vec<TcpStream> = slow.iter().map(|s| s.try_clone().unwrap()).collect();
        std::thread::spawn(move || {
            let head = b"GET /api/info HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
            for byte in head.iter().cycle().take(50) {
                for s in &mut streams {
                    let _ = s.write_all(&[*byte]);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let mut victim = TcpStream::connect(&addr).expect("connect");
    let waited = served_within(&mut victim, &addr, Duration::from_secs(8));
    // The slow heads are cut off after about 1 s, the idle connections after about 2 s.
    let slow_closed = closed_within(&mut slow[0], Duration::from_secs(6));
    let idle_closed = closed_within(&mut idle[0], Duration::from_secs(6));
    writer.join().unwrap();
    assert!(waited.is_some(), "the victim was not served within 8 s");
    assert!(
        slow_closed.is_some(),
        "a slow request head kept its connection"
    );
    assert!(idle_closed.is_some(), "an idle connection stayed open");
}

#[test]
fn a_cross_site_page_cannot_make_the_proxy_send_to_a_udp_service() {
    let scratch = Scratch::new("robust-http-ssrf");
    let (_gateway, base) = gateway_with_http_and(&scratch.join("e.db"), &[]);
    // A UDP service on loopback that takes text commands (memcached's, say).
    let service = UdpSocket::bind("127.0.0.1:0").expect("bind");
    service
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let port = service.local_addr().unwrap().port();
    let url = format!("{base}/hc/coap://127.0.0.1:{port}/%0D%0Aflush_all%0D%0A");
    let client = http(Duration::from_secs(5));
    let attacks = [
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-site", "same-site"),
        ("origin", "http://attacker.example"),
    ];
    for (name, value) in attacks {
        let r = client.get(&url).header(name, value).send().unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{name}: {value}");
        assert!(r.text().unwrap().contains("cross-site"));
        let mut buf = [0u8; 1500];
        assert!(
            service.recv_from(&mut buf).is_err(),
            "{name}: {value} reached the service"
        );
    }
    // The console's own page and clients that are no browser still reach it.
    let r = http(Duration::from_millis(300))
        .get(&url)
        .header("sec-fetch-site", "same-origin")
        .send();
    assert!(r.is_err(), "the service does not answer CoAP");
    let mut buf = [0u8; 1500];
    let (n, _) = service
        .recv_from(&mut buf)
        .expect("the same-origin request");
    assert!(buf[..n].windows(9).any(|w| w == b"flush_all"));
}

#[test]
fn proxy_targets_that_name_no_host_or_a_group_fail_at_once() {
    let scratch = Scratch::new("robust-http-targets");
    let (gateway, base) = gateway_with_http_and(&scratch.join("e.db"), &[]);
    let client = http(Duration::from_secs(10));
    let port = gateway.port;
    let cases = [
        // An IPv4-mapped address is the IPv4 host: the gateway's own Entity Manager.
        (
            format!("coap://[::ffff:127.0.0.1]:{port}/.well-known/core"),
            200,
            "</e",
        ),
        (format!("coap://0.0.0.0:{port}/e"), 400, "names no host"),
        (format!("coap://[::]:{port}/e"), 400, "names no host"),
        (
            format!("coap://[::ffff:0.0.0.0]:{port}/e"),
            400,
            "names no host",
        ),
        (
            "coap://224.0.1.187/x".to_string(),
            403,
            "--http-proxy-multicast",
        ),
        ("coap://[ff02::fd]/x".to_string(), 403, "multicast"),
    ];
    for (target, status, says) in cases {
        let r = client.get(format!("{base}/hc/{target}")).send().unwrap();
        assert_eq!(r.status().as_u16(), status, "{target}");
        let text = r.text().unwrap();
        assert!(text.contains(says), "{target}: {text}");
    }
}

#[test]
fn codes_no_response_may_carry_are_a_bad_gateway_at_once() {
    let scratch = Scratch::new("robust-http-codes");
    let (_gateway, base) = gateway_with_http_and(&scratch.join("e.db"), &[]);
    let client = http(Duration::from_secs(20));
    // 1.01, 3.00, 6.01 and 7.00 are reserved classes; 0.01 is GET.
    for code in [0x21u8, 0x60, 0xc1, 0xe0, 0x01] {
        let server = BadServer::start(answering_code(code));
        // NSTART 1: the second request waits for the first, so both must end at once (a
        // wait for the CoAP timeout would outlast the HTTP client's 20 s).
        for _ in 0..2 {
            let r = client
                .get(format!("{base}/hc/{}", server.uri()))
                .send()
                .unwrap();
            assert_eq!(r.status(), StatusCode::BAD_GATEWAY, "code {code:#04x}");
            let text = r.text().unwrap();
            assert!(text.contains("no response code"), "{code:#04x}: {text}");
        }
        assert_eq!(server.requests(), 2, "code {code:#04x}: sent again");
    }
}

#[test]
fn a_server_sending_block_0_forever_ends_the_transfer_at_once() {
    let server = BadServer::start(always_block_zero());
    let out = covey_run(&["get", "-B", "10", &server.uri()]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("Block2"), "{err}");
    // Before: 65 209 requests, until message IDs ran out.
    assert!(server.requests() <= 3, "{} requests", server.requests());

    let scratch = Scratch::new("robust-http-block0");
    let (_gateway, base) = gateway_with_http_and(&scratch.join("e.db"), &[]);
    let proxied = BadServer::start(always_block_zero());
    let r = http(Duration::from_secs(10))
        .get(format!("{base}/hc/{}", proxied.uri()))
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_GATEWAY);
    assert!(r.text().unwrap().contains("Block2"));
    // Before: 119 229 requests in 10 s.
    assert!(proxied.requests() <= 3, "{} requests", proxied.requests());
}
