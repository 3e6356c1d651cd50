//! ICMP errors over loopback: a request to a closed port fails at once as unreachable
//! (from IPv4, IPv6 and dual-stack sockets), and a server whose observer went away ends that
//! observation when the network reports its port closed, and keeps serving.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use covey::{Client, Code, ContentFormat, Error, Resource, Response, Server};

/// A test never waits longer than this for one exchange.
const LIMIT: Duration = Duration::from_secs(10);

/// An address on `ip` whose port was bound a moment ago and is closed now.
fn closed_port(ip: &str) -> SocketAddr {
    let socket = UdpSocket::bind(SocketAddr::new(ip.parse().unwrap(), 0)).unwrap();
    socket.local_addr().unwrap()
}

/// Sends a GET to `target` from a client bound to `bind` (the default socket if `None`) and
/// expects it to fail as unreachable (a timeout, after over a minute, would be another error;
/// LIMIT only stops a hang).
async fn expect_unreachable(bind: Option<&str>, target: SocketAddr) {
    let client = match bind {
        Some(bind) => Client::builder().bind(bind.parse().unwrap()).build(),
        None => Client::new(),
    }
    .unwrap();
    let result = tokio::time::timeout(
        LIMIT,
        client.request(Code::GET, format!("coap://{target}/x")),
    )
    .await
    .expect("no answer at all");
    match result {
        Err(Error::Unreachable { addr, reason }) => {
            assert_eq!(addr, target);
            assert!(reason.contains("port unreachable"), "{reason}");
        }
        other => panic!("{bind:?} -> {target}: expected unreachable, got {other:?}"),
    }
}

#[tokio::test]
async fn a_closed_port_fails_at_once_as_unreachable() {
    expect_unreachable(Some("127.0.0.1:0"), closed_port("127.0.0.1")).await;
    expect_unreachable(Some("[::1]:0"), closed_port("::1")).await;
    // The default socket is dual-stack: IPv4 errors come to it as well as IPv6 ones.
    expect_unreachable(None, closed_port("127.0.0.1")).await;
    expect_unreachable(None, closed_port("::1")).await;
}

#[tokio::test]
async fn a_server_drops_an_observer_whose_port_closed_and_keeps_serving() {
    let counter = Arc::new(AtomicU32::new(0));
    let c = counter.clone();
    let server = Server::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .resource(
            "/counter",
            Resource::new().obs().get(move |_| {
                let n = c.load(Ordering::Relaxed);
                async move { Response::content(ContentFormat::TEXT_PLAIN, n.to_string()) }
            }),
        )
        .start()
        .unwrap();
    let server_addr = server.local_addrs()[0];

    // An observer that registers and then closes its socket without deregistering.
    let observer = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    // CON GET, message ID 0x1234, token 0xab, Observe: 0 (register), Uri-Path: counter.
    let register = [&[0x41, 0x01, 0x12, 0x34, 0xab, 0x60, 0x57][..], b"counter"].concat();
    observer.send_to(&register, server_addr).await.unwrap();
    let mut buf = [0u8; 256];
    // A new address gets the answer as a CON of its own after an empty ACK; acknowledging
    // it shows the observer receives at its address (RFC 9175 §2.4, without Echo).
    let answer = loop {
        let (n, _) = tokio::time::timeout(LIMIT, observer.recv_from(&mut buf))
            .await
            .expect("the registration is answered")
            .unwrap();
        let m = covey_core::Message::parse(&buf[..n]).expect("CoAP");
        if !m.code().is_empty() {
            assert_eq!(m.code(), covey_core::Code::CONTENT, "{:02x?}", &buf[..n]);
            break m.message_id();
        }
    };
    let [high, low] = answer.to_be_bytes();
    observer
        .send_to(&[0x60, 0, high, low], server_addr)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    drop(observer);

    // The first notification draws an ICMP port unreachable, which ends the observation:
    // later notifications go to no one. The bound only stops a hang on a lost ICMP error.
    counter.store(1, Ordering::Relaxed);
    assert_eq!(server.notify("/counter").await.unwrap(), 1);
    let mut notified = 1;
    for n in 2..=500 {
        counter.store(n.min(3), Ordering::Relaxed);
        notified = server.notify("/counter").await.unwrap();
        if notified == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(notified, 0, "the closed port's observation never ended");
    counter.store(3, Ordering::Relaxed);

    // The server still answers others.
    let client = Client::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .build()
        .unwrap();
    for _ in 0..3 {
        let r = tokio::time::timeout(
            LIMIT,
            client.request(Code::GET, format!("coap://{server_addr}/counter")),
        )
        .await
        .expect("served")
        .unwrap();
        assert_eq!(r.payload_text(), "3");
    }
    server.shutdown().await;
}
