//! Handshake slots under attack over real sockets: clients on eight loopback addresses
//! return the server's cookie and then stop, 64 of them, enough to fill every handshake slot
//! when slots are shared by address. A new client must still complete its handshake.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use covey::dtls::{DtlsConfig, PskKeys, SessionTable};
use covey::{Client, Code, ContentFormat, Resource, Response, Server};

/// Longer than any handshake on loopback takes, shorter than the stall timeout.
const LIMIT: Duration = Duration::from_secs(4);

const GET: [u8; 4] = [0x40, 0x01, 0x00, 0x01];

fn psk() -> DtlsConfig {
    DtlsConfig::psk(PskKeys::single("ward-3", b"secret").unwrap())
}

/// Sends what `table` has queued, then waits up to `wait` for one answer and feeds it back;
/// false if none came.
fn exchange(
    table: &mut SessionTable,
    socket: &UdpSocket,
    server: SocketAddr,
    wait: Duration,
) -> bool {
    let local = socket.local_addr().unwrap();
    while let Some(t) = table.poll_transmit() {
        socket.send_to(&t.datagram, server).unwrap();
    }
    socket.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 2048];
    match socket.recv_from(&mut buf) {
        Ok((n, _)) => {
            table.handle_datagram(Instant::now(), local, server, &buf[..n]);
            true
        }
        Err(_) => false,
    }
}

/// A client at `ip` that returns the server's cookie and stops once the ServerHello comes
/// (waiting up to `wait` for each answer); its socket stays open and silent. True if the
/// server got that far.
fn stall(
    table: &mut SessionTable,
    ip: IpAddr,
    server: SocketAddr,
    wait: Duration,
    sockets: &mut Vec<UdpSocket>,
) -> bool {
    let socket = UdpSocket::bind(SocketAddr::new(ip, 0)).unwrap();
    let local = socket.local_addr().unwrap();
    assert!(table.send(Instant::now(), local, server, &GET));
    // ClientHello -> HelloVerifyRequest, ClientHello with the cookie -> ServerHello.
    let verified = exchange(table, &socket, server, wait) && exchange(table, &socket, server, wait);
    // Forgotten here, so one table plays every client; the server still waits for it.
    table.close(local, server);
    while table.poll_transmit().is_some() {}
    sockets.push(socket);
    verified
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_handshakes_from_eight_addresses_leave_room_for_a_new_client() {
    let server = Server::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .dtls(psk())
        .resource(
            "/hello",
            Resource::new().get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, "hi") }),
        )
        .start()
        .unwrap();
    let addr = server.local_addrs()[0];
    let limits = psk().limits;
    let attack = tokio::task::spawn_blocking(move || {
        let mut table = SessionTable::new(psk()).unwrap();
        let mut sockets = Vec::new();
        // Once the server stops answering, the rest need not wait long for nothing.
        let mut wait = Duration::from_secs(2);
        for i in 0..limits.max_handshakes {
            let ip = IpAddr::from([127, 0, 1, 1 + (i % 8) as u8]);
            if !stall(&mut table, ip, addr, wait, &mut sockets) {
                wait = Duration::from_millis(20);
            }
        }
        sockets
    });
    let _sockets = attack.await.unwrap();
    let state = server.driver().dtls_state().await.unwrap().unwrap();
    assert!(
        state.handshakes >= limits.max_handshakes_per_prefix,
        "the attack holds slots: {state:?}"
    );

    let client = Client::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .dtls(psk())
        .build()
        .unwrap();
    let started = Instant::now();
    let response = client
        .request(Code::GET, format!("coaps://{addr}/hello"))
        .timeout(LIMIT)
        .await;
    let state = server.driver().dtls_state().await.unwrap().unwrap();
    assert!(
        matches!(&response, Ok(r) if r.payload == b"hi"),
        "{response:?} after {:?}; {state:?}",
        started.elapsed()
    );
}
