//! What an attacker gets out of Covey at its default settings by spoofing a silent victim's
//! address: per attack, every byte that reaches the victim until 60 s after the attack
//! stops (retransmissions, notifications and error replies included), divided by the bytes
//! the attacker sent. Each attack has a victim socket of its own, so each is measured
//! against its own budget; all run at once against `covey serve --plugtest`, a keyed
//! `covey serve` on its plain port, and `covey gateway` with an entity. The limit is three
//! times (RFC 9175 §2.4, RFC 9000 §8.1). `-- --nocapture` prints the table.

mod gateway_support;
mod support;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use covey_core::{Code, MessageEncoder, MessageType, OptionNumber};
use gateway_support::{entity, ok, GatewayProcess, Scratch};
use support::{covey_serve, covey_server};

/// The most a victim may receive per byte the attacker sent.
const FACTOR: f64 = 3.0;

/// How long each victim listens after its attack: the 60 s.
const LISTEN: Duration = Duration::from_secs(60);

/// One attack: datagrams sent to `server` with the victim's address as their source.
struct Attack {
    name: &'static str,
    server: SocketAddr,
    datagrams: Vec<Vec<u8>>,
}

/// A request as an attacker writes it: `options` in order, then `payload`.
fn request(
    message_type: MessageType,
    code: Code,
    mid: u16,
    token: &[u8],
    options: &[(OptionNumber, &[u8])],
    payload: &[u8],
) -> Vec<u8> {
    let mut buf = [0u8; 256];
    let mut enc = MessageEncoder::new(&mut buf, message_type, code, mid, token).expect("header");
    for (number, value) in options {
        enc.option(*number, value).expect("option");
    }
    if !payload.is_empty() {
        enc.payload(payload).expect("payload");
    }
    let n = enc.finish();
    buf[..n].to_vec()
}

/// A GET of `path` (segments split at '/').
fn get(message_type: MessageType, mid: u16, token: &[u8], path: &str) -> Vec<u8> {
    let segments: Vec<(OptionNumber, &[u8])> = path
        .split('/')
        .map(|s| (OptionNumber::URI_PATH, s.as_bytes()))
        .collect();
    request(message_type, Code::GET, mid, token, &segments, &[])
}

/// Three copies of an attack, each with a message ID (and token) of its own.
fn thrice(make: impl Fn(u16) -> Vec<u8>) -> Vec<Vec<u8>> {
    (0..3).map(|i| make(0x4000 + i)).collect()
}

/// Runs `attack` from a fresh victim socket and returns the bytes sent and received.
fn measure(attack: &Attack) -> (usize, usize, usize) {
    let victim = UdpSocket::bind("127.0.0.1:0").expect("bind the victim");
    victim
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("read timeout");
    let mut sent = 0;
    for d in &attack.datagrams {
        victim.send_to(d, attack.server).expect("send");
        sent += d.len();
        std::thread::sleep(Duration::from_millis(20));
    }
    let (mut received, mut count) = (0, 0);
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + LISTEN;
    while Instant::now() < deadline {
        if let Ok((n, _)) = victim.recv_from(&mut buf) {
            received += n;
            count += 1;
        }
    }
    (sent, received, count)
}

#[test]
fn no_attack_draws_more_than_three_times_its_bytes_at_default_settings() {
    let (_plugtest, port) = covey_server(&["--plugtest"]);
    let plugtest = SocketAddr::from(([127, 0, 0, 1], port));
    // A keyed server: coaps on one port, plain coap on another.
    let (_keyed, listening) =
        covey_serve(&["-u", "ward", "-k", "secret", "--bind-plain", "127.0.0.1:0"]);
    assert_eq!(listening[1].scheme, "coap");
    let keyed = listening[1].addr;
    // A gateway with an entity of one member, the plugtest server.
    let scratch = Scratch::new("ampl-budget");
    let gw = GatewayProcess::start(&scratch.join("gw.db"), &[]);
    ok(&entity(&[
        "create",
        &gw.base(),
        "room",
        "--member",
        &format!("coap://127.0.0.1:{port}/sensors/temp"),
    ]));
    let gateway = SocketAddr::from(([127, 0, 0, 1], gw.port));
    use MessageType::{Confirmable as Con, NonConfirmable as Non};
    let attacks = vec![
        Attack {
            name: "NON GET /large",
            server: plugtest,
            datagrams: thrice(|mid| get(Non, mid, &[], "large")),
        },
        Attack {
            name: "CON GET /large",
            server: plugtest,
            datagrams: thrice(|mid| get(Con, mid, &mid.to_be_bytes(), "large")),
        },
        Attack {
            name: "GET /.well-known/core",
            server: plugtest,
            datagrams: thrice(|mid| get(Non, mid, &[], ".well-known/core")),
        },
        Attack {
            name: "Observe /time",
            server: plugtest,
            datagrams: thrice(|mid| {
                let options = [
                    (OptionNumber::OBSERVE, &[][..]),
                    (OptionNumber::URI_PATH, b"time"),
                ];
                request(Non, Code::GET, mid, &mid.to_be_bytes(), &options, &[])
            }),
        },
        Attack {
            name: "CON GET /separate",
            server: plugtest,
            datagrams: thrice(|mid| get(Con, mid, &mid.to_be_bytes(), "separate")),
        },
        Attack {
            name: "unknown critical option (4.02)",
            server: plugtest,
            // 6 bytes: a CON GET with an empty option 13 (critical, unassigned).
            datagrams: thrice(|mid| {
                let [high, low] = mid.to_be_bytes();
                vec![0x40, 0x01, high, low, 0xD0, 0x00]
            }),
        },
        Attack {
            name: "Proxy-Uri (5.05)",
            server: plugtest,
            datagrams: thrice(|mid| {
                let options = [(OptionNumber::PROXY_URI, &b"coap://a/"[..])];
                request(Con, Code::GET, mid, &[], &options, &[])
            }),
        },
        Attack {
            name: "bad Block2 (4.00)",
            server: plugtest,
            datagrams: thrice(|mid| {
                let options = [
                    (OptionNumber::URI_PATH, &b"large"[..]),
                    (OptionNumber::BLOCK2, &[0xff, 0xff, 0xff, 0xff][..]),
                ];
                request(Con, Code::GET, mid, &[], &options, &[])
            }),
        },
        Attack {
            name: "gateway POST /",
            server: gateway,
            datagrams: thrice(|mid| request(Con, Code::POST, mid, &[], &[], &[])),
        },
        Attack {
            name: "gateway POST /e",
            server: gateway,
            datagrams: thrice(|mid| {
                let options = [(OptionNumber::URI_PATH, &b"e"[..])];
                request(Con, Code::POST, mid, &[], &options, &[])
            }),
        },
        Attack {
            name: "entity query GET /e/room",
            server: gateway,
            datagrams: thrice(|mid| get(Non, mid, &[], "e/room")),
        },
        Attack {
            name: "keyed server, plain port: GET /large",
            server: keyed,
            datagrams: thrice(|mid| get(Non, mid, &[], "large")),
        },
        Attack {
            name: "keyed server, plain port: GET /.well-known/core",
            server: keyed,
            datagrams: thrice(|mid| get(Non, mid, &[], ".well-known/core")),
        },
        Attack {
            name: "keyed server, plain port: Observe /time",
            server: keyed,
            datagrams: thrice(|mid| {
                let options = [
                    (OptionNumber::OBSERVE, &[][..]),
                    (OptionNumber::URI_PATH, b"time"),
                ];
                request(Non, Code::GET, mid, &mid.to_be_bytes(), &options, &[])
            }),
        },
    ];
    let results: Vec<(usize, usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = attacks.iter().map(|a| s.spawn(|| measure(a))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut over = Vec::new();
    eprintln!("attack | attacker bytes | victim bytes (datagrams) | factor");
    for (attack, (sent, received, count)) in attacks.iter().zip(&results) {
        let factor = *received as f64 / *sent as f64;
        eprintln!(
            "{} | {sent} | {received} ({count}) | x{factor:.2}",
            attack.name
        );
        if factor > FACTOR {
            over.push(attack.name);
        }
    }
    assert!(over.is_empty(), "more than x{FACTOR}: {over:?}");
    // The measurement sees replies at all: small answers still reach an unverified address.
    let answered = results
        .iter()
        .filter(|(_, received, _)| *received > 0)
        .count();
    assert!(answered >= attacks.len() - 2, "{results:?}");
}
