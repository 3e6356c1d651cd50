//! Robustness (issue 10, fairness): attacks on `covey serve`'s shared tables over loopback,
//! each from an attacking host (127.0.1.2) while a well-behaved client (127.0.0.1) is still
//! served, and the attacker's further requests are answered 5.03 with Max-Age:
//! a flood of requests for the slow `/separate`, unfinished Block1 uploads taking every byte
//! of reassembly, a stream of first blocks, and Observe registrations from thousands of
//! ports filling the peer table. Then the attacks of a few silent hosts (issue 21: addresses
//! in several /24s that never answer) on the upload slots, the App timers of `/separate` and
//! the observer table, against a client that has verified its address. Each figure is
//! printed for the record.

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use covey_core::{Block, Code, Message, MessageEncoder, MessageType, OptionNumber};
use support::{covey_server, wait_until_read, Background};

/// The attacking host: a loopback address in another /24, so another source than the client.
const ATTACKER: &str = "127.0.1.2";
/// The well-behaved client's host.
const CLIENT: &str = "127.0.0.1";
/// How long any one answer may take (a separate response comes after 1.5 s).
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// A raw CoAP endpoint on one UDP socket, writing requests by hand so it can be hostile.
struct Raw {
    socket: UdpSocket,
    server: SocketAddr,
    mid: u16,
    token: u32,
}

/// What the server answered to one request.
#[derive(Debug)]
struct Answer {
    code: Code,
    max_age: Option<u32>,
    observe: bool,
    /// The Echo value of a 4.01 (RFC 9175), which the request is repeated with.
    echo: Option<Vec<u8>>,
}

impl Raw {
    fn new(host: &str, port: u16) -> Raw {
        let socket = UdpSocket::bind((host, 0)).expect("bind a loopback socket");
        let server = SocketAddr::from(([127, 0, 0, 1], port));
        let local = socket.local_addr().expect("local address").port();
        Raw {
            socket,
            server,
            mid: local.wrapping_mul(31),
            token: u32::from(local) << 16,
        }
    }

    /// Sends a CON request (options in number order) and returns its token.
    fn send(&mut self, code: Code, options: &[(OptionNumber, &[u8])], payload: &[u8]) -> [u8; 4] {
        self.mid = self.mid.wrapping_add(1);
        self.token = self.token.wrapping_add(1);
        let token = self.token.to_be_bytes();
        let mut buf = [0u8; 1280];
        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::Confirmable, code, self.mid, &token)
                .expect("header");
        for (number, value) in options {
            enc.option(*number, value).expect("option");
        }
        if !payload.is_empty() {
            enc.payload(payload).expect("payload");
        }
        let n = enc.finish();
        self.socket
            .send_to(&buf[..n], self.server)
            .expect("send to the server");
        token
    }

    /// The answer carrying `token` (piggy-backed or separate, whose CON is acknowledged),
    /// or `None` if none came within `limit`.
    fn answer(&self, token: [u8; 4], limit: Duration) -> Option<Answer> {
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 2048];
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            self.socket
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .expect("timeout");
            let n = match self.socket.recv(&mut buf) {
                Ok(n) => n,
                Err(_) => return None,
            };
            let Ok(m) = Message::parse(&buf[..n]) else {
                continue;
            };
            if m.message_type() == MessageType::Confirmable {
                self.acknowledge(m.message_id());
            }
            if m.token().as_bytes() == token && !m.code().is_empty() {
                return Some(Answer {
                    code: m.code(),
                    max_age: m.uint_option(OptionNumber::MAX_AGE),
                    observe: m.option(OptionNumber::OBSERVE).is_some(),
                    echo: m.option(OptionNumber::ECHO).map(<[u8]>::to_vec),
                });
            }
        }
    }

    /// Reads (and acknowledges) whatever has arrived until `quiet` passes without a datagram,
    /// for at most `limit`, so the socket's receive buffer has room for the next answer.
    fn drain(&self, quiet: Duration, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 2048];
        self.socket.set_read_timeout(Some(quiet)).expect("timeout");
        while Instant::now() < deadline {
            let Ok(n) = self.socket.recv(&mut buf) else {
                return;
            };
            if let Ok(m) = Message::parse(&buf[..n]) {
                if m.message_type() == MessageType::Confirmable {
                    self.acknowledge(m.message_id());
                }
            }
        }
    }

    /// Acknowledges a CON; for a ping (an Empty CON), RFC 7252 §4.3's RST would do too.
    fn acknowledge(&self, mid: u16) {
        let [hi, lo] = mid.to_be_bytes();
        let _ = self.socket.send_to(&[0x60, 0, hi, lo], self.server);
    }

    /// Sends a request and returns its answer; a 4.01 with Echo (the server has not verified
    /// this address) is answered as a real client does, by repeating the request with the
    /// value, since every attacking port here receives at its address.
    fn request(
        &mut self,
        code: Code,
        options: &[(OptionNumber, &[u8])],
        payload: &[u8],
    ) -> Option<Answer> {
        let token = self.send(code, options, payload);
        let answer = self.answer(token, ANSWER_WITHIN)?;
        let echo = match (&answer.echo, answer.code) {
            (Some(echo), Code::UNAUTHORIZED) => echo.clone(),
            _ => return Some(answer),
        };
        // Echo's number (252) is above every option these requests carry.
        let mut with_echo = options.to_vec();
        with_echo.push((OptionNumber::ECHO, &echo));
        let token = self.send(code, &with_echo, payload);
        self.answer(token, ANSWER_WITHIN)
    }

    fn get(&mut self, path: &str) -> Option<Answer> {
        self.request(Code::GET, &[(OptionNumber::URI_PATH, path.as_bytes())], &[])
    }

    /// Block `num` of an upload of 1024-byte blocks to `/echo?query`.
    fn upload_block(&mut self, query: &str, num: u32, more: bool) -> Option<Answer> {
        let mut value = [0u8; 4];
        let block = Block::new(num, more, 6)
            .expect("block")
            .encode(&mut value)
            .to_vec();
        let options = [
            (OptionNumber::URI_PATH, &b"echo"[..]),
            (OptionNumber::URI_QUERY, query.as_bytes()),
            (OptionNumber::BLOCK1, &block[..]),
        ];
        self.request(Code::PUT, &options, &[b'u'; 1024])
    }

    /// A whole upload of `blocks` blocks; the last answer's code.
    fn upload(&mut self, query: &str, blocks: u32) -> Option<Code> {
        let mut last = None;
        for num in 0..blocks {
            let more = num + 1 < blocks;
            last = self.upload_block(query, num, more).map(|a| a.code);
            if more && last != Some(Code::CONTINUE) {
                break;
            }
        }
        last
    }
}

fn busy(answer: &Option<Answer>) -> bool {
    matches!(
        answer,
        Some(Answer {
            code: Code::SERVICE_UNAVAILABLE,
            max_age: Some(_),
            ..
        })
    )
}

fn server(extra: &[&str]) -> (Background, u16) {
    covey_server(extra)
}

#[test]
fn a_flood_of_slow_requests_leaves_the_slow_resource_to_others() {
    let (_server, port) = server(&["--plugtest"]);
    let mut attacker = Raw::new(ATTACKER, port);
    // 1 100 requests for /separate from one socket, in bursts the socket buffers can hold.
    let mut tokens = Vec::new();
    for _ in 0..1100 {
        tokens.push(attacker.send(Code::GET, &[(OptionNumber::URI_PATH, b"separate")], &[]));
        if tokens.len() % 50 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // The flood's answers fill the attacker's receive buffer (212 992 bytes hold about 160
    // datagrams on loopback); read them, as a client does, so the next answer is not dropped.
    attacker.drain(Duration::from_millis(50), Duration::from_millis(600));
    // While the attacker's share of separate responses is waiting, its next slow request
    // is refused with a time to come back, and the client's are served.
    let refused = attacker.get("separate");
    let mut good = Raw::new(CLIENT, port);
    let started = Instant::now();
    let separate = good.get("separate");
    let waited = started.elapsed();
    let other = good.get("test");
    eprintln!(
        "separate-response flood: attacker's next /separate {refused:?}; good client's \
         /separate {:?} after {waited:?}, /test {:?}",
        separate.as_ref().map(|a| a.code),
        other.as_ref().map(|a| a.code),
    );
    assert!(busy(&refused), "{refused:?}");
    assert_eq!(separate.map(|a| a.code), Some(Code::CONTENT));
    assert_eq!(other.map(|a| a.code), Some(Code::CONTENT));
}

#[test]
fn unfinished_uploads_taking_every_byte_leave_uploads_to_others() {
    let (_server, port) = server(&[]);
    let mut attacker = Raw::new(ATTACKER, port);
    // Four unfinished uploads of 1 MiB (the largest body) take the 4 MiB of reassembly.
    for upload in 0..4 {
        let query = format!("a={upload}");
        for num in 0..1024 {
            let answer = attacker.upload_block(&query, num, true);
            assert_eq!(
                answer.as_ref().map(|a| a.code),
                Some(Code::CONTINUE),
                "upload {upload} block {num}"
            );
        }
    }
    // The attacker cannot start another; the client's upload makes room from the
    // attacker's uploads.
    let fifth = attacker.upload_block("a=5", 0, true);
    let mut good = Raw::new(CLIENT, port);
    let uploaded = good.upload("good", 3);
    eprintln!(
        "4 MiB of unfinished uploads: the attacker's fifth {:?}, the client's 3-block upload {uploaded:?}",
        fifth.as_ref().map(|a| a.code)
    );
    assert!(busy(&fifth), "{fifth:?}");
    assert_eq!(uploaded, Some(Code::CHANGED));
}

#[test]
fn a_stream_of_first_blocks_does_not_evict_an_upload_under_way() {
    let (_server, port) = server(&[]);
    let mut good = Raw::new(CLIENT, port);
    let first = good.upload_block("good", 0, true).map(|a| a.code);
    assert_eq!(first, Some(Code::CONTINUE));
    // 2 500 first blocks of uploads to ever new resources.
    let mut attacker = Raw::new(ATTACKER, port);
    let mut refused = 0;
    for i in 0..2500 {
        let answer = attacker.upload_block(&format!("n={i}"), 0, true);
        refused += usize::from(busy(&answer));
    }
    let mut last = None;
    for num in 1..4 {
        last = good.upload_block("good", num, num < 3).map(|a| a.code);
    }
    eprintln!("2 500 first blocks: {refused} refused 5.03; the upload under way ended {last:?}");
    assert!(refused > 2400, "{refused}");
    assert_eq!(last, Some(Code::CHANGED));
}

#[test]
fn observe_registrations_from_thousands_of_ports_leave_peers_to_others() {
    let (_server, port) = server(&[]);
    // 4 096 ports of one host register with /time: as many as the server has peers.
    let options = [
        (OptionNumber::OBSERVE, &[][..]),
        (OptionNumber::URI_PATH, b"time"),
    ];
    let mut attackers = Vec::new();
    let mut registered = 0;
    for _ in 0..4096 {
        let mut a = Raw::new(ATTACKER, port);
        if a.request(Code::GET, &options, &[])
            .is_some_and(|r| r.observe)
        {
            registered += 1;
        }
        attackers.push(a);
    }
    let mut good = Raw::new(CLIENT, port);
    let answer = good.request(Code::GET, &options, &[]);
    eprintln!(
        "observe: {registered} of 4096 attacker ports registered; the client's registration \
         {answer:?}"
    );
    assert!(
        registered >= 2048,
        "the attacker got its share: {registered}"
    );
    let answer = answer.expect("the client is answered");
    assert_eq!((answer.code, answer.observe), (Code::CONTENT, true));
}

/// A host that sends and never reads: whatever the server answers goes unacknowledged, so
/// its address is never verified (a spoofed source, or an attacker that keeps quiet).
struct Silent {
    raw: Raw,
}

impl Silent {
    fn new(host: &str, port: u16) -> Silent {
        Silent {
            raw: Raw::new(host, port),
        }
    }

    fn send(&mut self, code: Code, options: &[(OptionNumber, &[u8])], payload: &[u8]) {
        self.raw.send(code, options, payload);
    }
}

/// A client that made itself known: its first exchange's CON answer (a separate response,
/// or the ping checking it) was acknowledged, which verifies its address.
fn verified_client(port: u16, path: &str) -> Raw {
    let mut good = Raw::new(CLIENT, port);
    let answer = good.get(path).map(|a| a.code);
    assert_eq!(answer, Some(Code::CONTENT), "the client's first exchange");
    good
}

/// The probe's attack on the upload table: two silent hosts, two ports each, the first
/// Block1 blocks of four uploads per port, which fill every upload slot within the hosts'
/// shares. An unverified newcomer is refused; a verified client still uploads.
#[test]
fn silent_hosts_holding_every_upload_slot_leave_uploads_to_a_verified_client() {
    let (_server, port) = server(&[]);
    let mut good = verified_client(port, "large");
    for host in ["127.0.2.1", "127.0.3.1"] {
        for p in 0..2 {
            let mut attacker = Silent::new(host, port);
            for upload in 0..4 {
                let mut value = [0u8; 4];
                let block = Block::new(0, true, 0)
                    .expect("block")
                    .encode(&mut value)
                    .to_vec();
                let query = format!("a={p}{upload}");
                let options = [
                    (OptionNumber::URI_PATH, &b"echo"[..]),
                    (OptionNumber::URI_QUERY, query.as_bytes()),
                    (OptionNumber::BLOCK1, &block[..]),
                ];
                attacker.send(Code::PUT, &options, &[b'a'; 16]);
            }
        }
    }
    // The attack is taken in before what follows.
    wait_until_read(port);
    let newcomer = Raw::new("127.0.6.1", port).upload_block("new", 0, true);
    let uploaded = good.upload("good", 3);
    eprintln!(
        "16 first blocks from two silent hosts: a newcomer's upload {:?}, the verified \
         client's {uploaded:?}",
        newcomer.as_ref().map(|a| a.code)
    );
    assert!(busy(&newcomer), "{newcomer:?}");
    assert_eq!(uploaded, Some(Code::CHANGED));
}

/// The probe's attack on `/separate`: four silent hosts in four /24s ask 16 times each, as
/// many as the engine has App timers; a verified client is still answered.
#[test]
fn silent_hosts_asking_for_every_separate_response_leave_one_to_a_verified_client() {
    let (_server, port) = server(&["--plugtest"]);
    let mut good = verified_client(port, "separate");
    for host in ["127.0.2.1", "127.0.3.1", "127.0.4.1", "127.0.5.1"] {
        let mut attacker = Silent::new(host, port);
        for _ in 0..16 {
            attacker.send(Code::GET, &[(OptionNumber::URI_PATH, b"separate")], &[]);
        }
    }
    // The attack is taken in before what follows.
    wait_until_read(port);
    let answer = good.get("separate").map(|a| a.code);
    eprintln!("64 /separate from four silent hosts: the verified client's {answer:?}");
    assert_eq!(answer, Some(Code::CONTENT));
}

/// The probe's attack on the observer table: two silent hosts register from several ports
/// until every observer slot is taken within their shares; an unverified newcomer is served
/// without Observe, a verified client is registered.
#[test]
fn silent_hosts_filling_the_observer_table_leave_room_for_a_verified_client() {
    let (_server, port) = server(&[]);
    let mut good = verified_client(port, "large");
    let options = [
        (OptionNumber::OBSERVE, &[][..]),
        (OptionNumber::URI_PATH, b"time"),
    ];
    let mut attackers = Vec::new();
    // 6 400 registrations a host from four ports, more than its share (half of the 12 288
    // observers `covey serve` keeps), within each port's (a quarter).
    for host in ["127.0.2.1", "127.0.3.1"] {
        for _ in 0..4 {
            let mut attacker = Silent::new(host, port);
            for i in 0..1600 {
                attacker.send(Code::GET, &options, &[]);
                if i % 64 == 63 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            attackers.push(attacker);
        }
    }
    // The attack is taken in before what follows.
    wait_until_read(port);
    let newcomer = Raw::new("127.0.6.1", port).request(Code::GET, &options, &[]);
    let answer = good.request(Code::GET, &options, &[]);
    eprintln!(
        "12 800 registrations from two silent hosts: a newcomer {:?}, the verified client {:?}",
        newcomer.as_ref().map(|a| (a.code, a.observe)),
        answer.as_ref().map(|a| (a.code, a.observe))
    );
    let newcomer = newcomer.expect("the newcomer is answered");
    assert_eq!((newcomer.code, newcomer.observe), (Code::CONTENT, false));
    let answer = answer.expect("the client is answered");
    assert_eq!((answer.code, answer.observe), (Code::CONTENT, true));
}
