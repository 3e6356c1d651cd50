//! Two session tables talking through an in-memory wire on a virtual clock.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::*;
use crate::dtls::{CertifiedKey, PskKeys, TrustAnchors};

const CLIENT: &str = "192.0.2.10:40000";
const SERVER: &str = "198.51.100.1:5684";

/// The 4-byte header of a CON GET, MID 1.
const GET: [u8; 4] = [0x40, 0x01, 0x00, 0x01];

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn psk(line: &str) -> DtlsConfig {
    DtlsConfig::psk(PskKeys::parse(line, "test").unwrap())
}

fn certified(name: &str) -> CertifiedKey {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dtls/testdata");
    CertifiedKey::from_pem_files(
        &dir.join(format!("{name}.crt")),
        &dir.join(format!("{name}.key")),
    )
    .unwrap()
}

/// Two tables and the records in flight between them, on a clock that only moves on demand.
struct Pair {
    client: SessionTable,
    server: SessionTable,
    now: Instant,
    /// Every record the client sent, for replays.
    client_records: Vec<Vec<u8>>,
    /// Record types (first byte, handshake type) the server sent, in order.
    server_kinds: Vec<(u8, u8)>,
}

impl Pair {
    fn new(client: DtlsConfig, server: DtlsConfig) -> Pair {
        Pair {
            client: SessionTable::new(client).unwrap(),
            server: SessionTable::new(server).unwrap(),
            now: Instant::now(),
            client_records: Vec::new(),
            server_kinds: Vec::new(),
        }
    }

    /// Moves records both ways until both sides are quiet (bounded).
    fn pump(&mut self) {
        for _ in 0..64 {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit() {
                assert_eq!((t.local, t.remote), (addr(CLIENT), addr(SERVER)));
                self.client_records.push(t.datagram.clone());
                self.server
                    .handle_datagram(self.now, t.remote, t.local, &t.datagram);
                moved = true;
            }
            while let Some(t) = self.server.poll_transmit() {
                self.server_kinds
                    .push((t.datagram[0], t.datagram.get(13).copied().unwrap_or(0)));
                self.client
                    .handle_datagram(self.now, t.remote, t.local, &t.datagram);
                moved = true;
            }
            if !moved {
                return;
            }
        }
        panic!("the handshake did not settle");
    }

    /// Sends a CoAP request (a CON GET) carrying `plaintext` after its header.
    fn client_sends(&mut self, plaintext: &[u8]) -> bool {
        let datagram = [&GET[..], plaintext].concat();
        self.client
            .send(self.now, addr(CLIENT), addr(SERVER), &datagram)
    }

    fn client_sends_raw(&mut self, plaintext: &[u8]) -> bool {
        self.client
            .send(self.now, addr(CLIENT), addr(SERVER), plaintext)
    }

    /// What the server received, CoAP headers removed.
    fn server_received(&mut self) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| self.server.poll_received())
            .map(|(local, remote, d)| {
                assert_eq!((local, remote), (addr(SERVER), addr(CLIENT)));
                d[GET.len()..].to_vec()
            })
            .collect()
    }

    fn client_received(&mut self) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| self.client.poll_received())
            .map(|(_, _, d)| d)
            .collect()
    }
}

#[test]
fn psk_session_carries_plaintext_both_ways_after_a_cookie_exchange() {
    let mut pair = Pair::new(psk("ward-3:secret-key"), psk("em:other\nward-3:secret-key"));
    assert!(pair.client_sends(b"request"));
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"request".to_vec()]);
    // The server's first answer is a HelloVerifyRequest (handshake type 3), then ServerHello.
    assert_eq!(pair.server_kinds[0], (22, 3));
    assert_eq!(pair.server_kinds[1], (22, 2));
    assert_eq!(
        pair.server.peer_identity(addr(CLIENT), Some(addr(SERVER))),
        Some(PeerIdentity::Psk("ward-3".into()))
    );
    assert_eq!(
        pair.server.peer_identity(addr(CLIENT), None),
        Some(PeerIdentity::Psk("ward-3".into()))
    );
    assert_eq!(pair.server.peer_identity(addr(SERVER), None), None);
    assert!(pair
        .server
        .send(pair.now, addr(SERVER), addr(CLIENT), b"response"));
    pair.pump();
    assert_eq!(pair.client_received(), vec![b"response".to_vec()]);
    assert_eq!((pair.client.sessions(), pair.server.sessions()), (1, 1));
    assert_eq!(pair.server.handshakes(), 0);
    assert_eq!(pair.server.stats().handshakes_completed, 1);
}

#[test]
fn recycled_buffers_carry_the_next_datagrams_instead_of_new_allocations() {
    let mut pair = Pair::new(psk("ward-3:secret-key"), psk("ward-3:secret-key"));
    assert!(pair.client_sends(b"first"));
    pair.pump();
    let (_, _, first) = pair.server.poll_received().unwrap();
    let plaintext_buf = first.as_ptr();
    pair.server.recycle(first);
    assert!(pair.client_sends(b"second"));
    let record = pair.client.poll_transmit().unwrap();
    let record_buf = record.datagram.as_ptr();
    pair.server
        .handle_datagram(pair.now, record.remote, record.local, &record.datagram);
    pair.client.recycle(record.datagram);
    let (_, _, second) = pair.server.poll_received().unwrap();
    assert_eq!(&second[GET.len()..], b"second");
    assert_eq!(
        second.as_ptr(),
        plaintext_buf,
        "the recycled buffer holds it"
    );
    assert!(pair.client_sends(b"third"));
    let record = pair.client.poll_transmit().unwrap();
    assert_eq!(
        record.datagram.as_ptr(),
        record_buf,
        "the recycled record buffer"
    );
}

#[test]
fn a_wrong_key_fails_the_handshake_on_both_sides_and_delivers_nothing() {
    let mut pair = Pair::new(psk("ward-3:wrong"), psk("ward-3:secret-key"));
    pair.client_sends(b"request");
    pair.pump();
    assert!(pair.server_received().is_empty());
    assert_eq!(pair.server.sessions(), 0);
    assert_eq!(pair.client.sessions(), 0);
    assert_eq!(pair.server.handshakes(), 0, "the failed handshake is gone");
    assert_eq!(pair.server.stats().handshakes_failed, 1);
    // The client learns it at once, from the server's alert, and what it means.
    assert_eq!(pair.client.handshakes(), 0, "no timeout needed");
    assert_eq!(pair.client.stats().handshakes_failed, 1);
    let (server, why) = pair.client.poll_failure().expect("the failure is reported");
    assert_eq!(server, addr(SERVER));
    assert!(why.contains("(decrypt_error, 51): a wrong key"), "{why}");
}

#[test]
fn a_silent_server_is_given_up_after_the_flights_retransmissions() {
    let mut client = SessionTable::new(psk("ward-3:secret-key")).unwrap();
    let now = Instant::now();
    assert!(client.send(now, addr(CLIENT), addr(SERVER), &GET));
    let timeout = client.limits().handshake_timeout;
    let mut at = now;
    // Every flight is sent and never answered, until the client gives up.
    while client.handshakes() > 0 {
        while client.poll_transmit().is_some() {}
        at = client
            .poll_timeout()
            .expect("a retransmission or the deadline");
        client.handle_timeout(at);
    }
    assert!(
        at - now < timeout,
        "given up after {:?}, not at the handshake timeout",
        at - now
    );
    let (_, why) = client.poll_failure().expect("the failure is reported");
    assert!(
        why.contains("no coaps server there, or a wrong key or certificate"),
        "{why}"
    );
}

#[test]
fn certificate_sessions_without_trust_anchors_name_the_peer_by_fingerprint_only() {
    let mut server = DtlsConfig::certificate(certified("server"));
    server.require_client_certificate = true;
    let client_key = certified("client");
    let fingerprint: [u8; 32] = Sha256::digest(&client_key.certificate).into();
    let mut pair = Pair::new(DtlsConfig::certificate(client_key), server);
    pair.client_sends(b"hello");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"hello".to_vec()]);
    assert_eq!(
        pair.server.peer_identity(addr(CLIENT), None),
        Some(PeerIdentity::Certificate {
            subject: String::new(),
            fingerprint,
        })
    );
    let server_identity = pair.client.peer_identity(addr(SERVER), None);
    assert!(
        matches!(&server_identity, Some(PeerIdentity::Certificate { subject, .. }) if subject.is_empty()),
        "{server_identity:?}"
    );
}

/// The subject the server names a client with `name`'s certificate by, `now` (from the
/// pair's start) when the handshake runs; empty when the CA does not vouch for it.
fn subject_seen(name: &str, later: Duration) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dtls/testdata");
    let mut server = DtlsConfig::certificate(certified("server"));
    server.require_client_certificate = true;
    server.trust_anchors = Some(TrustAnchors::from_pem_file(&dir.join("ca.crt")).unwrap());
    let mut pair = Pair::new(DtlsConfig::certificate(certified(name)), server);
    pair.now += later;
    pair.client_sends(b"hello");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"hello".to_vec()], "{name}");
    match pair.server.peer_identity(addr(CLIENT), None) {
        Some(PeerIdentity::Certificate { subject, .. }) => subject,
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_a_certificate_the_ca_vouches_for_names_its_subject() {
    assert_eq!(
        subject_seen("operator", Duration::ZERO),
        "CN=ops.example.org"
    );
    // A self-signed look-alike, a certificate for servers only, one whose key may not sign,
    // and the good one once expired (issued for 100 years): fingerprints only.
    assert_eq!(subject_seen("forged", Duration::ZERO), "");
    assert_eq!(subject_seen("server-only", Duration::ZERO), "");
    assert_eq!(subject_seen("no-signing", Duration::ZERO), "");
    let century = Duration::from_secs(101 * 365 * 24 * 3600);
    assert_eq!(subject_seen("operator", century), "");
}

#[test]
fn certificates_larger_than_a_datagram_buffer_complete_the_handshake_both_ways() {
    // 3.9 KB of DER each way: the client's to a server that asks for one, and the server's.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dtls/testdata");
    let mut server = DtlsConfig::certificate(certified("large"));
    server.require_client_certificate = true;
    server.trust_anchors = Some(TrustAnchors::from_pem_file(&dir.join("ca.crt")).unwrap());
    let mut client = DtlsConfig::certificate(certified("large"));
    client.trust_anchors = server.trust_anchors.clone();
    let mut pair = Pair::new(client, server);
    assert!(certified("large").certificate.len() > 2048);
    pair.client_sends(b"hello");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"hello".to_vec()]);
    for identity in [
        pair.server.peer_identity(addr(CLIENT), None),
        pair.client.peer_identity(addr(SERVER), None),
    ] {
        assert!(
            matches!(&identity, Some(PeerIdentity::Certificate { subject, .. }) if subject == "CN=large.example.org"),
            "{identity:?}"
        );
    }
}

#[test]
fn a_client_certificate_over_the_limit_fails_the_handshake_cleanly_and_is_counted() {
    let mut server = DtlsConfig::certificate(certified("server"));
    server.require_client_certificate = true;
    server.limits.max_peer_certificate = 2048;
    let mut pair = Pair::new(DtlsConfig::certificate(certified("large")), server);
    pair.client_sends(b"hello");
    pair.pump();
    assert!(pair.server_received().is_empty());
    assert_eq!(pair.server.sessions(), 0);
    assert_eq!(pair.server.handshakes(), 0, "the handshake is dropped");
    assert_eq!(pair.server.stats().certificates_too_large, 1);
    assert_eq!(pair.server.stats().handshakes_failed, 1);
    // A client within the limit still gets through.
    let mut pair = Pair {
        client: SessionTable::new(DtlsConfig::certificate(certified("client"))).unwrap(),
        ..pair
    };
    pair.client_sends(b"again");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"again".to_vec()]);
}

#[test]
fn a_server_certificate_over_the_limit_fails_the_clients_handshake_with_a_reason() {
    let mut client = DtlsConfig::certificate(certified("client"));
    client.limits.max_peer_certificate = 2048;
    let mut pair = Pair::new(client, DtlsConfig::certificate(certified("large")));
    pair.client_sends(b"hello");
    pair.pump();
    assert!(pair.server_received().is_empty());
    assert_eq!(pair.client.handshakes(), 0);
    assert_eq!(pair.client.stats().certificates_too_large, 1);
    let (peer, why) = pair
        .client
        .poll_failure()
        .expect("a failure for the waiting request");
    assert_eq!(peer, addr(SERVER));
    assert!(why.contains("certificate"), "{why}");
}

#[test]
fn handshake_floods_from_many_ports_stay_within_bounds_and_spare_sessions() {
    let mut pair = Pair::new(psk("ward-3:k"), psk("ward-3:k"));
    pair.client_sends(b"before");
    pair.pump();
    assert_eq!(pair.server_received().len(), 1);
    // A ClientHello the client really sent, replayed from thousands of (spoofed) addresses.
    let hello = pair.client_records[0].clone();
    assert!(record::is_client_hello(&hello));
    let limits = pair.server.limits().clone();
    for i in 0..4000u32 {
        let ip = IpAddr::from([203, 0, 113, (i % 7) as u8]);
        let from = SocketAddr::new(ip, 1024 + (i / 7) as u16);
        pair.server
            .handle_datagram(pair.now, addr(SERVER), from, &hello);
        assert!(pair.server.handshakes() <= limits.max_handshakes);
        assert!(pair.server.sessions() <= limits.max_sessions);
    }
    // The seven addresses are one /24: together they hold one prefix's share.
    let from_prefix = pair
        .server
        .handshakes
        .keys()
        .filter(|k| PeerPrefix::of(k.remote.ip()) == PeerPrefix::of(IpAddr::from([203, 0, 113, 0])))
        .count();
    assert!(from_prefix <= limits.max_handshakes_per_prefix);
    assert!(pair.server.stats().unverified_evicted > 3000);
    // Only HelloVerifyRequests went to the spoofed addresses: no ServerHello without a cookie.
    let mut hellos = 0;
    while let Some(t) = pair.server.poll_transmit() {
        assert!(!record::is_server_hello(&t.datagram));
        hellos += 1;
    }
    assert_eq!(hellos, 4000);
    // The established session still works.
    pair.client_sends(b"after");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"after".to_vec()]);
}

#[test]
fn garbage_replays_and_unknown_epochs_are_dropped_and_the_session_lives_on() {
    let mut pair = Pair::new(psk("ward-3:k"), psk("ward-3:k"));
    pair.client_sends(b"one");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"one".to_vec()]);
    let data_record = pair.client_records.last().unwrap().clone();
    // A replay of the application record is not delivered again.
    pair.server
        .handle_datagram(pair.now, addr(SERVER), addr(CLIENT), &data_record);
    assert!(pair.server_received().is_empty());
    // The same record claiming another epoch, truncated, bit-flipped, or plain garbage.
    let mut other_epoch = data_record.clone();
    other_epoch[4] = 7;
    let mut flipped = data_record.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let inputs: Vec<Vec<u8>> = vec![
        other_epoch,
        flipped,
        data_record[..data_record.len() / 2].to_vec(),
        vec![23, 0xfe, 0xfd, 0, 1],
        vec![0xff; 300],
        vec![],
    ];
    for input in &inputs {
        pair.server
            .handle_datagram(pair.now, addr(SERVER), addr(CLIENT), input);
        pair.server
            .handle_datagram(pair.now, addr(SERVER), addr("192.0.2.99:1"), input);
    }
    assert!(pair.server_received().is_empty());
    assert_eq!(pair.server.sessions(), 1);
    assert_eq!(pair.server.handshakes(), 0);
    pair.client_sends(b"two");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"two".to_vec()]);
}

#[test]
fn a_spoofed_client_hello_from_a_session_address_does_not_end_the_session() {
    let mut pair = Pair::new(psk("ward-3:k"), psk("ward-3:k"));
    pair.client_sends(b"one");
    pair.pump();
    pair.server_received();
    let hello = pair.client_records[0].clone();
    pair.server
        .handle_datagram(pair.now, addr(SERVER), addr(CLIENT), &hello);
    assert_eq!(pair.server.sessions(), 1);
    while pair.server.poll_transmit().is_some() {}
    pair.client_sends(b"two");
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"two".to_vec()]);
}

#[test]
fn idle_sessions_expire_and_a_new_handshake_replaces_them() {
    let mut pair = Pair::new(psk("ward-3:k"), psk("ward-3:k"));
    pair.client_sends(b"one");
    pair.pump();
    pair.server_received();
    let idle = pair.server.limits().idle_timeout;
    let start = pair.now;
    let mut steps = 0;
    while pair.server.sessions() > 0 {
        let at = pair.server.poll_timeout().expect("a sweep is scheduled");
        assert!(at <= pair.now + idle + MAX_SWEEP_INTERVAL);
        pair.now = at;
        pair.server.handle_timeout(pair.now);
        steps += 1;
        assert!(steps < 1000);
    }
    assert!(
        pair.now >= start + idle,
        "not closed before it was idle long enough"
    );
    assert_eq!(pair.server.stats().sessions_expired, 1);
    // The close_notify reaches the client, which then starts afresh.
    pair.pump();
    assert_eq!(pair.client.sessions(), 0);
    assert!(pair.client_sends(b"two"));
    pair.pump();
    assert_eq!(pair.server_received(), vec![b"two".to_vec()]);
}

#[test]
fn only_requests_and_pings_open_a_session() {
    let mut pair = Pair::new(psk("ward-3:k"), psk("ward-3:k"));
    let ack = [0x60, 0x45, 0x00, 0x01];
    let rst = [0x70, 0x00, 0x00, 0x01];
    let non_notification = [0x50, 0x45, 0x00, 0x02];
    for response in [&ack[..], &rst, &non_notification, &[0x40]] {
        assert!(!pair.client_sends_raw(response));
    }
    assert_eq!(pair.client.handshakes(), 0);
    assert!(pair.client_sends_raw(&[0x40, 0x00, 0x00, 0x03]), "a ping");
    assert_eq!(pair.client.handshakes(), 1);
}

#[test]
fn plaintext_waiting_for_a_handshake_is_bounded() {
    let mut pair = Pair::new(psk("ward-3:k"), psk("ward-3:k"));
    let max = pair.client.limits().max_queued;
    for _ in 0..max {
        assert!(pair.client_sends(b"x"));
    }
    assert!(!pair.client_sends(b"x"));
    assert_eq!(pair.client.stats().plaintext_dropped, 1);
    pair.pump();
    assert_eq!(pair.server_received().len(), max);
}

#[test]
fn sessions_beyond_the_bound_evict_the_least_active() {
    let mut server = psk("ward-3:k");
    server.limits.max_sessions = 2;
    let mut server = SessionTable::new(server).unwrap();
    let now = Instant::now();
    for port in 1..=3u16 {
        let mut client = SessionTable::new(psk("ward-3:k")).unwrap();
        let from = SocketAddr::new(IpAddr::from([192, 0, 2, 1]), port);
        client.send(now, from, addr(SERVER), &GET);
        for _ in 0..16 {
            while let Some(t) = client.poll_transmit() {
                server.handle_datagram(now, t.remote, t.local, &t.datagram);
            }
            while let Some(t) = server.poll_transmit() {
                client.handle_datagram(now, t.remote, t.local, &t.datagram);
            }
        }
        assert_eq!(client.sessions(), 1);
    }
    assert_eq!(server.sessions(), 2);
    assert_eq!(server.stats().sessions_evicted, 1);
}

/// Clients that return the server's cookie and then stop: their last flight never reaches
/// the server, so each handshake holds a slot its peer has proved its address for. One table
/// plays them all (building a table costs more than a handshake).
struct Stallers {
    table: SessionTable,
}

impl Stallers {
    fn new() -> Stallers {
        Stallers {
            table: SessionTable::new(psk("ward-3:k")).unwrap(),
        }
    }

    /// A handshake from `from` that stops after the ServerHello.
    fn stall(&mut self, server: &mut SessionTable, from: SocketAddr, now: Instant) {
        assert!(self.table.send(now, from, addr(SERVER), &GET));
        // ClientHello, HelloVerifyRequest, ClientHello with the cookie, ServerHello: silence.
        for _ in 0..2 {
            while let Some(t) = self.table.poll_transmit() {
                server.handle_datagram(now, t.remote, t.local, &t.datagram);
            }
            while let Some(t) = server.poll_transmit() {
                if t.remote == from {
                    self.table
                        .handle_datagram(now, t.remote, t.local, &t.datagram);
                }
            }
        }
        // Forgotten here, so one table plays every client; the server still waits for it.
        self.table.close(from, addr(SERVER));
        while self.table.poll_transmit().is_some() {}
    }

    /// `count` stalled handshakes spread evenly over `addresses`, each from its own port.
    fn stall_from(
        &mut self,
        server: &mut SessionTable,
        addresses: &[IpAddr],
        count: usize,
        now: Instant,
    ) {
        for i in 0..count {
            let ip = addresses[i % addresses.len()];
            self.stall(server, SocketAddr::new(ip, 2000 + i as u16), now);
        }
    }
}

/// Whether a client at `from` completes a handshake with `server` and gets a request through.
fn completes_handshake(server: &mut SessionTable, from: SocketAddr, now: Instant) -> bool {
    let mut client = SessionTable::new(psk("ward-3:k")).unwrap();
    client.send(now, from, addr(SERVER), &GET);
    for _ in 0..16 {
        while let Some(t) = client.poll_transmit() {
            server.handle_datagram(now, t.remote, t.local, &t.datagram);
        }
        while let Some(t) = server.poll_transmit() {
            if t.remote == from {
                client.handle_datagram(now, t.remote, t.local, &t.datagram);
            }
        }
    }
    let delivered = std::iter::from_fn(|| server.poll_received()).any(|(_, r, _)| r == from);
    delivered && server.is_established(addr(SERVER), from)
}

#[test]
fn stalled_handshakes_from_eight_addresses_do_not_lock_out_a_new_client() {
    let mut server = SessionTable::new(psk("ward-3:k")).unwrap();
    let now = Instant::now();
    let attackers: Vec<IpAddr> = (1..=8).map(|i| IpAddr::from([127, 0, 1, i])).collect();
    Stallers::new().stall_from(&mut server, &attackers, 64, now);
    // One /24 shares one share of the slots, however many addresses it uses.
    assert!(server.handshakes() <= server.limits().max_handshakes_per_prefix);
    assert!(completes_handshake(
        &mut server,
        addr("127.0.0.1:5000"),
        now
    ));
}

#[test]
fn stalled_handshakes_from_many_prefixes_leave_room_for_known_clients_and_time_out() {
    let mut server = SessionTable::new(psk("ward-3:k")).unwrap();
    let mut now = Instant::now();
    let known = addr("192.0.2.10:40000");
    assert!(completes_handshake(&mut server, known, now));
    server.close(addr(SERVER), known);
    let attackers: Vec<IpAddr> = (1..=8).map(|i| IpAddr::from([127, i, 0, 1])).collect();
    Stallers::new().stall_from(&mut server, &attackers, 64, now);
    let limits = server.limits().clone();
    assert!(server.handshakes() <= limits.max_handshakes - limits.reserved_handshakes);
    // An address that authenticated before gets a reserved slot at once, from a new port too.
    assert!(completes_handshake(
        &mut server,
        addr("192.0.2.10:40001"),
        now
    ));
    // A new address waits for the stalled handshakes to time out, which they do quickly.
    assert!(!completes_handshake(
        &mut server,
        addr("198.51.100.7:1"),
        now
    ));
    server.close(addr(SERVER), addr("192.0.2.10:40001"));
    let held = server.handshakes();
    now += limits.stall_timeout;
    server.handle_timeout(now);
    assert_eq!(server.handshakes(), 0);
    assert_eq!(server.stats().handshakes_stalled, held as u64);
    assert!(completes_handshake(
        &mut server,
        addr("198.51.100.7:2"),
        now
    ));
}

#[test]
fn ipv6_peers_share_their_slash_64() {
    let mut server = SessionTable::new(psk("ward-3:k")).unwrap();
    let now = Instant::now();
    let per_prefix = server.limits().max_handshakes_per_prefix;
    let attackers: Vec<IpAddr> = (1..=16u16)
        .map(|i| IpAddr::from([0x2001, 0xdb8, 0, 1, 0, 0, 0, i]))
        .collect();
    Stallers::new().stall_from(&mut server, &attackers, 32, now);
    assert_eq!(server.handshakes(), per_prefix);
    assert_eq!(server.stats().handshakes_refused, (32 - per_prefix) as u64);
    assert!(completes_handshake(
        &mut server,
        addr("[2001:db8:0:2::1]:5000"),
        now
    ));
}
