//! A coaps server under bad input over real sockets: handshake floods from many ports,
//! malformed records, records of unknown epochs and plain CoAP. It stays up, its session
//! table stays within its bounds, and an established session keeps working throughout.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use covey::dtls::{DtlsConfig, PskKeys, SessionTable};
use covey::{Client, Code, ContentFormat, Resource, Response, Server};

const LIMIT: Duration = Duration::from_secs(10);

fn psk() -> DtlsConfig {
    DtlsConfig::psk(PskKeys::single("ward-3", b"secret").unwrap())
}

/// A ClientHello as a real client sends it first, from a session table of the test's own.
fn client_hello(server: SocketAddr) -> Vec<u8> {
    let mut table = SessionTable::new(psk()).unwrap();
    let local: SocketAddr = "127.0.0.1:1".parse().unwrap();
    assert!(table.send(Instant::now(), local, server, &[0x40, 0x01, 0x00, 0x01]));
    table.poll_transmit().expect("a ClientHello").datagram
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_and_garbage_leave_the_server_up_bounded_and_its_sessions_working() {
    let mut config = psk();
    config.limits.max_handshakes = 16;
    config.limits.max_handshakes_per_prefix = 4;
    config.limits.max_sessions = 8;
    let limits = config.limits.clone();
    let server = Server::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .dtls(config)
        .resource(
            "/hello",
            Resource::new().get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, "hi") }),
        )
        .start()
        .unwrap();
    let addr = server.local_addrs()[0];
    let uri = format!("coaps://{addr}/hello");
    let client = Client::builder().dtls(psk()).build().unwrap();
    let first = client
        .request(Code::GET, uri.clone())
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(first.code, Code::CONTENT);

    let hello = client_hello(addr);
    let mut other_epoch = hello.clone();
    other_epoch[4] = 3;
    let mut app_data = hello.clone();
    app_data[0] = 23;
    app_data[4] = 1;
    let garbage: Vec<Vec<u8>> = vec![
        other_epoch,
        app_data,
        hello[..hello.len() / 2].to_vec(),
        vec![22; 13],
        vec![0xff; 1200],
        vec![0x40, 0x01, 0x12, 0x34], // a plain CoAP GET
        Vec::new(),
    ];
    let flood = tokio::task::spawn_blocking(move || {
        // 300 ports, each sending every kind of garbage, a ClientHello (whose cookie it never
        // returns), and the garbage again, now to a handshake in progress.
        for _ in 0..300 {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            for g in &garbage {
                socket.send_to(g, addr).unwrap();
            }
            socket.send_to(&hello, addr).unwrap();
            for g in &garbage {
                socket.send_to(g, addr).unwrap();
            }
        }
    });
    // The established session keeps working while the flood runs and after it.
    for _ in 0..20 {
        let r = client
            .request(Code::GET, uri.clone())
            .timeout(LIMIT)
            .await
            .unwrap();
        assert_eq!(r.payload, b"hi");
    }
    flood.await.unwrap();
    let r = client
        .request(Code::GET, uri.clone())
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(r.payload, b"hi");

    let state = server
        .driver()
        .dtls_state()
        .await
        .unwrap()
        .expect("a DTLS server");
    assert!(state.handshakes <= limits.max_handshakes, "{state:?}");
    assert!(state.sessions <= limits.max_sessions, "{state:?}");
    assert_eq!(state.sessions, 1, "only the real client got through");
    assert_eq!(state.stats.handshakes_completed, 1, "{state:?}");
    assert!(state.stats.unverified_evicted > 0, "{state:?}");
    assert!(state.stats.unknown_datagrams > 0, "{state:?}");
    // A new client still gets in after the flood.
    let late = Client::builder().dtls(psk()).build().unwrap();
    let r = late.request(Code::GET, uri).timeout(LIMIT).await.unwrap();
    assert_eq!(r.payload, b"hi");
}
