//! Robustness (issue 4, deliverable 9): 100 000 random and malformed datagrams from 500 source
//! ports at `covey serve`, then a normal client is still served, the server never crashed,
//! it rejected malformed CONs with RST, and its memory stayed within what its configuration
//! allows.

mod support;
/// The configuration `covey serve` runs with, from the binary's own source, so the memory
/// bound follows its table sizes.
#[path = "../src/commands/serve/tuning.rs"]
mod tuning;

use std::collections::HashMap;
use std::fs::File;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use covey::Config;
use support::{covey, listening_lines, run_limited, stdout, START_LIMIT};

/// Datagrams in the flood (each copy of a duplicated CON counts).
const DATAGRAMS: usize = 100_000;
/// Source ports the flood comes from, round-robin.
const SOURCES: usize = 500;
/// The flood's PRNG seed: every run sends the same datagrams.
const SEED: u64 = 0xC0E7_F100D;
/// Datagrams sent between two looks at the server's receive queue.
const BATCH: usize = 250;
/// The pause after every batch.
const PAUSE: Duration = Duration::from_millis(1);
/// Sending waits while the server's socket holds more than this many bytes (skb truesize),
/// so the server, not the kernel's drop counter, takes most of the flood.
const MAX_QUEUED: u64 = 128 * 1024;
/// The whole flood must be sent within this.
const FLOOD_LIMIT: Duration = Duration::from_secs(30);
/// The receive batch buffer of the driver (crates/covey/src/socket/recv_batch.rs), allocated
/// once but only touched as datagrams arrive.
const RECV_BATCH_BYTES: u64 = 2 << 20;
/// Growth over the second half of the flood beyond filling the tables (allocator noise).
const PLATEAU_BYTES: u64 = 2 << 20;
/// A generous size of one entry of a keyed table (address, key, state, hash-table slack).
const TABLE_ENTRY_BYTES: u64 = 256;
/// Runtime and allocator slack: tokio tasks of in-flight handlers, malloc arenas of the worker
/// threads, fragmentation.
const SLACK_BYTES: u64 = 8 << 20;

#[test]
fn flood_of_malformed_datagrams_leaves_the_server_serving_within_its_memory_bound() {
    let mut server = Server::start();
    let target: SocketAddr = format!("127.0.0.1:{}", server.port).parse().unwrap();
    // A few normal exchanges first, so the startup figure includes a warmed-up server.
    for _ in 0..3 {
        assert!(
            normal_get(server.port),
            "the server must answer before the flood"
        );
    }
    let startup = server.memory();

    let sources: Vec<UdpSocket> = (0..SOURCES)
        .map(|_| {
            let s = UdpSocket::bind("127.0.0.1:0").expect("bind a flood socket");
            s.set_nonblocking(true).expect("non-blocking");
            s
        })
        .collect();
    let mut rng = Rng(SEED);
    let mut next_mid: Vec<u16> = (0..SOURCES).map(|_| rng.next_u64() as u16).collect();
    let mut ledger = Ledger::default();
    let mut tally = Tally::default();
    let mut half_way = None;

    let started = Instant::now();
    let mut sent = 0usize;
    let mut source = 0usize;
    while sent < DATAGRAMS {
        let batch_end = (sent + BATCH).min(DATAGRAMS);
        while sent < batch_end {
            let kind = Kind::ALL[rng.below(Kind::ALL.len() as u64) as usize];
            let mid = next_mid[source];
            next_mid[source] = mid.wrapping_add(1);
            let datagram = kind.generate(&mut rng, mid);
            let copies = if kind == Kind::DuplicatedCon {
                2 + rng.below(2) as usize
            } else {
                1
            };
            let this = Sent::of(kind, &datagram);
            for _ in 0..copies.min(DATAGRAMS - sent) {
                send(&sources[source], &datagram, target);
                sent += 1;
                *tally.sent.entry(this).or_default() += 1;
            }
            ledger.record(source, mid, this, &datagram);
            *tally.distinct.entry(kind).or_default() += 1;
            source = (source + 1) % SOURCES;
        }
        drain(&sources, &ledger, &mut tally);
        std::thread::sleep(PAUSE);
        while server.queued_bytes() > MAX_QUEUED && started.elapsed() < FLOOD_LIMIT {
            drain(&sources, &ledger, &mut tally);
            std::thread::sleep(PAUSE);
        }
        assert!(
            started.elapsed() < FLOOD_LIMIT,
            "only {sent} datagrams sent in {FLOOD_LIMIT:?}"
        );
        if half_way.is_none() && sent >= DATAGRAMS / 2 {
            assert!(
                server.running(),
                "the server exited:\n{}",
                server.log_tail()
            );
            half_way = Some((server.memory(), tally.confirmable_sent()));
        }
    }
    let flood_time = started.elapsed();
    // The answers to the last batches.
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_millis(500) {
        drain(&sources, &ledger, &mut tally);
        std::thread::sleep(Duration::from_millis(10));
    }
    let after = server.memory();
    let kernel_drops = server.kernel_drops();

    // A normal client is served again within a bounded number of tries.
    let served = (0..10).any(|_| normal_get(server.port));
    assert!(served, "a normal GET was not answered after the flood");
    assert!(
        server.running(),
        "the server exited:\n{}",
        server.log_tail()
    );
    let log = server.log();
    assert!(
        !log.contains("panicked") && !log.contains("ERROR"),
        "the server logged a panic or an error:\n{}",
        server.log_tail()
    );

    // Malformed CONs are rejected with RST (RFC 7252 §4.2), each kind of them.
    for kind in Kind::MALFORMED_CON {
        assert!(
            Tally::count(&tally.rst, kind, true) > 0,
            "no RST for any malformed CON of kind {kind:?}: {tally:#?}"
        );
    }
    let rst_to_malformed_cons: u64 = Kind::MALFORMED_CON
        .iter()
        .map(|&k| Tally::count(&tally.rst, k, true))
        .sum();
    // Well-formed CON requests are still answered, and repeated CONs get their ACK again
    // from the deduplication cache (RFC 7252 §4.5) rather than being lost.
    let get_acks = Tally::count(&tally.ack, Kind::NewTokenGet, true);
    let duplicate_copies = Tally::count(&tally.sent, Kind::DuplicatedCon, true);
    let duplicate_acks = Tally::count(&tally.ack, Kind::DuplicatedCon, true);
    let duplicated = tally
        .distinct
        .get(&Kind::DuplicatedCon)
        .copied()
        .unwrap_or(0);
    assert!(get_acks > 0, "{tally:#?}");
    assert!(duplicate_acks > duplicated, "{tally:#?}");
    // Oversized datagrams exceed max_message_size and are never processed: each oversized
    // CON request is answered 4.13 from its header and token alone (RFC 7252 §5.9.2.9),
    // never with RST or anything else.
    let oversized_acks = Tally::count(&tally.ack, Kind::Oversized, true);
    assert_eq!(
        Tally::count(&tally.rst, Kind::Oversized, true),
        0,
        "{tally:#?}"
    );
    assert!(oversized_acks > 0, "{tally:#?}");
    assert_eq!(tally.too_large, oversized_acks, "{tally:#?}");

    // Memory: every table has a configured capacity, so growth is bounded by configuration.
    let config = tuning::config();
    let bound = configured_memory_bound(&config);
    let growth = after.peak_kib.saturating_sub(startup.rss_kib) * 1024;
    let (half_way, cons_by_half_way) = half_way.expect("measured half-way");
    let rst_to_nons = Tally::by_kind(&tally.rst, false);
    eprintln!(
        "flood: {sent} datagrams from {SOURCES} ports in {:.1} s (seed {SEED:#x}), {kernel_drops} \
         dropped by the kernel at the server's socket",
        flood_time.as_secs_f64()
    );
    eprintln!(
        "RST: {} in all, {rst_to_malformed_cons} to malformed CONs; to CONs by kind {:?}; to NONs \
         by kind {rst_to_nons:?}; {} matching nothing sent",
        tally.rst.values().sum::<u64>(),
        Tally::by_kind(&tally.rst, true),
        tally.unmatched_rst,
    );
    eprintln!(
        "ACK: {} in all; to CONs by kind {:?}; {duplicate_acks} to {duplicate_copies} copies of \
         {duplicated} duplicated CONs; also {} NON and {} CON responses",
        tally.ack.values().sum::<u64>(),
        Tally::by_kind(&tally.ack, true),
        tally.non,
        tally.con,
    );
    eprintln!(
        "RSS: startup {} KiB, half-way {} KiB, after {} KiB, peak {} KiB; growth to the peak {} \
         KiB, configured bound {} KiB",
        startup.rss_kib,
        half_way.rss_kib,
        after.rss_kib,
        after.peak_kib,
        growth / 1024,
        bound / 1024,
    );
    assert!(
        growth < bound,
        "RSS grew by {} KiB, more than the configured bound of {} KiB",
        growth / 1024,
        bound / 1024
    );
    // The second half may only fill what is left of the tables that grow with CONs (dedup
    // entries, cached replies); once they are full it adds (almost) nothing, so a leak of a
    // few dozen bytes per datagram shows.
    let second_half = after.peak_kib.saturating_sub(half_way.peak_kib) * 1024;
    let allowance = second_half_allowance(&config, cons_by_half_way, tally.confirmable_sent());
    eprintln!(
        "second half: RSS grew {} KiB, allowed {} KiB ({cons_by_half_way} CONs by half-way)",
        second_half / 1024,
        allowance / 1024
    );
    assert!(
        second_half < allowance,
        "RSS grew {} KiB in the second half of the flood, more than the {} KiB left to fill",
        second_half / 1024,
        allowance / 1024
    );
}

/// The most memory the server may add under any load with configuration `c`: every datagram
/// buffer the engine allocates up front and fills as it is used (client exchanges,
/// transmissions, incoming requests, held responses, the reply cache and the outbox slots) at
/// `max_message_size`; the reassembly budget of Block1 uploads and the equal budget of the
/// Block2 body cache; the keyed tables (dedup, peers, observers); the driver's receive batch;
/// and runtime slack.
fn configured_memory_bound(c: &Config) -> u64 {
    let transmissions = c.max_exchanges + c.max_incoming;
    let buffers = c.max_exchanges
        + transmissions
        + c.max_incoming
        + c.max_events.max(1)
        + (c.max_buffers / 2).max(1)
        + c.max_buffers / 2;
    let datagram_bytes = (buffers * c.max_message_size) as u64;
    let block_bytes = 2 * c.max_reassembly_bytes as u64;
    let table_bytes =
        TABLE_ENTRY_BYTES * (c.max_dedup_entries + c.max_peers + c.max_observers) as u64;
    datagram_bytes + block_bytes + table_bytes + RECV_BATCH_BYTES + SLACK_BYTES
}

/// What the second half of the flood may add: the dedup entries and cached replies (one per
/// CON) still free at half-way, and `PLATEAU_BYTES` of allocator noise.
fn second_half_allowance(c: &Config, cons_by_half_way: u64, cons_total: u64) -> u64 {
    let later = cons_total - cons_by_half_way;
    let room = |capacity: usize| later.min((capacity as u64).saturating_sub(cons_by_half_way));
    room(c.max_dedup_entries) * TABLE_ENTRY_BYTES
        + room(c.max_buffers / 2) * c.max_message_size as u64
        + PLATEAU_BYTES
}

fn send(socket: &UdpSocket, datagram: &[u8], target: SocketAddr) {
    loop {
        match socket.send_to(datagram, target) {
            Ok(_) => return,
            // Our own send buffer is full: give the kernel a moment.
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_micros(100))
            }
            Err(e) => panic!("send to {target}: {e}"),
        }
    }
}

/// Reads every answer waiting on the flood sockets and counts it by type and by the kind of
/// datagram it answers (ACKs and RSTs echo the message ID).
fn drain(sources: &[UdpSocket], ledger: &Ledger, tally: &mut Tally) {
    let mut buf = [0u8; 2048];
    for (i, socket) in sources.iter().enumerate() {
        loop {
            let n = match socket.recv(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // An ICMP error from an earlier send; nothing to read.
                Err(_) => continue,
            };
            if n < 4 || buf[0] >> 6 != 1 {
                tally.unparseable += 1;
                continue;
            }
            let mid = u16::from_be_bytes([buf[2], buf[3]]);
            let answered = ledger.find(i, mid);
            match ((buf[0] >> 4) & 3, answered) {
                (0, _) => tally.con += 1,
                (1, _) => tally.non += 1,
                (2, Some(s)) => {
                    *tally.ack.entry(s).or_default() += 1;
                    if s.kind == Kind::Oversized && buf[1] == REQUEST_ENTITY_TOO_LARGE {
                        tally.too_large += 1;
                    }
                }
                (3, Some(s)) => *tally.rst.entry(s).or_default() += 1,
                (2, None) => tally.unmatched_ack += 1,
                _ => tally.unmatched_rst += 1,
            }
        }
    }
}

/// A sent datagram as its ACK or RST finds it again (by source socket and message ID).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Sent {
    kind: Kind,
    /// A CoAP version-1 header with type CON.
    confirmable: bool,
}

impl Sent {
    fn of(kind: Kind, datagram: &[u8]) -> Sent {
        let confirmable = datagram.len() >= 4 && datagram[0] >> 6 == 1 && datagram[0] & 0x30 == 0;
        Sent { kind, confirmable }
    }
}

/// Which datagram each (source socket, message ID) was.
#[derive(Debug, Default)]
struct Ledger {
    /// Every kind but random bytes: each socket numbers its messages sequentially.
    sequential: HashMap<(usize, u16), Sent>,
    /// Random bytes, whose message ID (if any) is random too, so it may collide.
    random: HashMap<(usize, u16), Sent>,
}

impl Ledger {
    fn record(&mut self, source: usize, mid: u16, sent: Sent, datagram: &[u8]) {
        if sent.kind != Kind::RandomBytes {
            self.sequential.insert((source, mid), sent);
        } else if let [_, _, hi, lo, ..] = *datagram {
            self.random
                .entry((source, u16::from_be_bytes([hi, lo])))
                .or_insert(sent);
        }
    }

    fn find(&self, source: usize, mid: u16) -> Option<Sent> {
        let key = (source, mid);
        self.sequential
            .get(&key)
            .or_else(|| self.random.get(&key))
            .copied()
    }
}

/// What was sent and what came back from the server.
#[derive(Debug, Default)]
struct Tally {
    /// Datagrams sent (every copy).
    sent: HashMap<Sent, u64>,
    /// Distinct messages sent (a duplicated CON once).
    distinct: HashMap<Kind, u64>,
    rst: HashMap<Sent, u64>,
    ack: HashMap<Sent, u64>,
    /// ACKs with 4.13 to oversized requests.
    too_large: u64,
    non: u64,
    con: u64,
    unmatched_ack: u64,
    unmatched_rst: u64,
    unparseable: u64,
}

impl Tally {
    /// CON datagrams sent so far.
    fn confirmable_sent(&self) -> u64 {
        self.sent
            .iter()
            .filter(|(s, _)| s.confirmable)
            .map(|(_, n)| n)
            .sum()
    }

    fn count(map: &HashMap<Sent, u64>, kind: Kind, confirmable: bool) -> u64 {
        map.get(&Sent { kind, confirmable }).copied().unwrap_or(0)
    }

    /// The counts of `map` for CONs (or for everything else), by kind, in a fixed order.
    fn by_kind(map: &HashMap<Sent, u64>, confirmable: bool) -> Vec<(Kind, u64)> {
        Kind::ALL
            .iter()
            .map(|&k| (k, Tally::count(map, k, confirmable)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

/// `covey get` of the demo sensor with a short timeout; true on a 2.05 with a reading.
fn normal_get(port: u16) -> bool {
    let mut cmd = covey();
    cmd.args([
        "get",
        "-B",
        "2",
        &format!("coap://127.0.0.1:{port}/sensors/temp"),
    ]);
    let out = run_limited(cmd, Duration::from_secs(10));
    out.status.success() && stdout(&out).trim().parse::<f64>().is_ok()
}

/// The kinds of datagram in the flood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// Fewer than 4 bytes, or a header whose token runs past the end.
    TruncatedHeader,
    /// Token length 9–15 (reserved).
    BadTokenLength,
    /// An option whose extended delta/length or value runs past the end.
    OptionPastEnd,
    /// Option delta or length nibble 15 outside the payload marker.
    ReservedNibble,
    /// A payload marker followed by nothing.
    MarkerWithoutPayload,
    /// PUT/POST /echo with Block1 NUM near 2^20 and M=1.
    HugeBlock1,
    /// GET /large with Block2 SZX 7 (reserved).
    Block2Szx7,
    /// GET /sensors/temp with an unrecognised critical option.
    UnknownCriticalOption,
    /// A well-formed GET with a random new token.
    NewTokenGet,
    /// A well-formed CON GET sent two or three times.
    DuplicatedCon,
    /// Random bytes.
    RandomBytes,
    /// More than 1280 bytes.
    Oversized,
}

impl Kind {
    const ALL: [Kind; 12] = [
        Kind::TruncatedHeader,
        Kind::BadTokenLength,
        Kind::OptionPastEnd,
        Kind::ReservedNibble,
        Kind::MarkerWithoutPayload,
        Kind::HugeBlock1,
        Kind::Block2Szx7,
        Kind::UnknownCriticalOption,
        Kind::NewTokenGet,
        Kind::DuplicatedCon,
        Kind::RandomBytes,
        Kind::Oversized,
    ];

    /// Kinds sent as CON (half the time) with a message format error behind a valid header.
    const MALFORMED_CON: [Kind; 5] = [
        Kind::TruncatedHeader,
        Kind::BadTokenLength,
        Kind::OptionPastEnd,
        Kind::ReservedNibble,
        Kind::MarkerWithoutPayload,
    ];

    /// One datagram of this kind with message ID `mid`.
    fn generate(self, rng: &mut Rng, mid: u16) -> Vec<u8> {
        let ty = if rng.below(2) == 0 { CON } else { NON };
        let temp = uri_path(&["sensors", "temp"]);
        match self {
            Kind::TruncatedHeader => {
                if rng.below(4) == 0 {
                    rng.bytes_below(4)
                } else {
                    let tkl = 1 + rng.below(8) as u8;
                    let mut d = header(ty, tkl, GET, mid);
                    d.extend(rng.bytes_below(u64::from(tkl)));
                    d
                }
            }
            Kind::BadTokenLength => {
                let tkl = 9 + rng.below(7) as u8;
                let mut d = header(ty, tkl, GET, mid);
                d.extend(rng.bytes_below(17));
                d
            }
            Kind::OptionPastEnd => {
                let token = rng.token();
                let mut d = encode(ty, GET, mid, &token, &[], &[]);
                match rng.below(4) {
                    0 => d.push(0xD0),                           // delta 13 without its extension byte
                    1 => d.extend([0xE0, rng.next_u64() as u8]), // delta 14, one of two bytes
                    2 => d.push(0x1E), // length 14 without its extension bytes
                    _ => {
                        // A value longer than what is left.
                        let len = 2 + rng.below(11) as u8;
                        d.push(0xB0 | len);
                        d.extend(rng.bytes_below(u64::from(len)));
                    }
                }
                d
            }
            Kind::ReservedNibble => {
                let token = rng.token();
                let mut d = encode(ty, GET, mid, &token, &temp, &[]);
                let low = rng.below(15) as u8;
                d.push(if rng.below(2) == 0 {
                    0xF0 | low
                } else {
                    (low << 4) | 0x0F
                });
                d.extend(rng.bytes_below(8));
                d
            }
            Kind::MarkerWithoutPayload => {
                let token = rng.token();
                let mut d = encode(ty, GET, mid, &token, &temp, &[]);
                d.push(0xFF);
                d
            }
            Kind::HugeBlock1 => {
                let szx = rng.below(7) as u32;
                let num = (1u32 << 20) - 1 - rng.below(64) as u32;
                let block1 = (num << 4) | 0x08 | szx;
                let mut options = uri_path(&["echo"]);
                options.push((BLOCK1, block1.to_be_bytes()[1..].to_vec()));
                let method = if rng.below(2) == 0 { PUT } else { POST };
                let payload = rng.bytes(16 << szx);
                encode(ty, method, mid, &rng.token(), &options, &payload)
            }
            Kind::Block2Szx7 => {
                let num = rng.below(4) as u8;
                let mut options = uri_path(&["large"]);
                options.push((BLOCK2, vec![(num << 4) | 7]));
                encode(ty, GET, mid, &rng.token(), &options, &[])
            }
            Kind::UnknownCriticalOption => {
                const UNKNOWN_CRITICAL: [u16; 7] = [13, 19, 25, 29, 1001, 2049, 65001];
                let number = UNKNOWN_CRITICAL[rng.below(7) as usize];
                let mut options = temp;
                options.push((number, rng.bytes_below(5)));
                encode(ty, GET, mid, &rng.token(), &options, &[])
            }
            Kind::NewTokenGet => encode(ty, GET, mid, &rng.token(), &temp, &[]),
            Kind::DuplicatedCon => encode(CON, GET, mid, &rng.token(), &temp, &[]),
            Kind::RandomBytes => {
                let len = 1 + rng.below(300) as usize;
                rng.bytes(len)
            }
            Kind::Oversized => {
                let len = 1281 + rng.below(2720) as usize;
                let token = rng.token();
                let mut d = encode(CON, GET, mid, &token, &temp, &[]);
                d.push(0xFF);
                d.extend(rng.bytes(len - d.len()));
                d
            }
        }
    }
}

const CON: u8 = 0;
/// The code 4.13 Request Entity Too Large.
const REQUEST_ENTITY_TOO_LARGE: u8 = (4 << 5) | 13;
const NON: u8 = 1;
const GET: u8 = 0x01;
const POST: u8 = 0x02;
const PUT: u8 = 0x03;
const URI_PATH: u16 = 11;
const BLOCK2: u16 = 23;
const BLOCK1: u16 = 27;

fn header(ty: u8, tkl: u8, code: u8, mid: u16) -> Vec<u8> {
    let [hi, lo] = mid.to_be_bytes();
    vec![0x40 | (ty << 4) | tkl, code, hi, lo]
}

fn uri_path(segments: &[&str]) -> Vec<(u16, Vec<u8>)> {
    segments
        .iter()
        .map(|s| (URI_PATH, s.as_bytes().to_vec()))
        .collect()
}

/// A well-formed message (options in any order; encoded sorted), written out by hand so the
/// flood does not depend on the codec under test.
fn encode(
    ty: u8,
    code: u8,
    mid: u16,
    token: &[u8],
    options: &[(u16, Vec<u8>)],
    payload: &[u8],
) -> Vec<u8> {
    let mut d = header(ty, token.len() as u8, code, mid);
    d.extend_from_slice(token);
    let mut sorted: Vec<&(u16, Vec<u8>)> = options.iter().collect();
    sorted.sort_by_key(|(n, _)| *n);
    let mut last = 0u16;
    for (number, value) in sorted {
        let (delta_nibble, delta_ext) = nibble(number - last);
        let (len_nibble, len_ext) = nibble(value.len() as u16);
        d.push((delta_nibble << 4) | len_nibble);
        d.extend(delta_ext);
        d.extend(len_ext);
        d.extend_from_slice(value);
        last = *number;
    }
    if !payload.is_empty() {
        d.push(0xFF);
        d.extend_from_slice(payload);
    }
    d
}

/// The 4-bit field and extension bytes of an option delta or length (RFC 7252 §3.1).
fn nibble(v: u16) -> (u8, Vec<u8>) {
    match v {
        0..=12 => (v as u8, vec![]),
        13..=268 => (13, vec![(v - 13) as u8]),
        _ => (14, (v - 269).to_be_bytes().to_vec()),
    }
}

/// splitmix64: small, fast and deterministic for a seed.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// Between 0 and `n - 1` random bytes.
    fn bytes_below(&mut self, n: u64) -> Vec<u8> {
        let len = self.below(n) as usize;
        self.bytes(len)
    }

    /// A fresh token of 1–8 bytes.
    fn token(&mut self) -> Vec<u8> {
        let len = 1 + self.below(8) as usize;
        self.bytes(len)
    }
}

/// `covey serve` on 127.0.0.1 with its log in a file; killed and cleaned up on drop.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

/// Resident and peak resident memory of the server.
#[derive(Debug, Clone, Copy)]
struct Memory {
    rss_kib: u64,
    peak_kib: u64,
}

impl Server {
    fn start() -> Server {
        static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "robustness-flood-{}-{serial}.log",
            std::process::id()
        ));
        let file = File::create(&log).expect("create the server log");
        let child = covey()
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start covey serve");
        let mut server = Server {
            child,
            port: 0,
            log,
        };
        // It says where it listens once its socket is bound.
        let deadline = Instant::now() + START_LIMIT;
        server.port = loop {
            let log = std::fs::read_to_string(&server.log).unwrap_or_default();
            if let Some(listening) = listening_lines(&log).first() {
                break listening.port();
            }
            assert!(server.running(), "covey serve exited:\n{log}");
            assert!(
                Instant::now() < deadline,
                "covey serve is not listening:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(normal_get(server.port), "covey serve does not answer");
        server
    }

    fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn status_field(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("read /proc/PID/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc/PID/status"))
    }

    fn memory(&self) -> Memory {
        Memory {
            rss_kib: self.status_field("VmRSS:"),
            peak_kib: self.status_field("VmHWM:"),
        }
    }

    /// The server socket's line of /proc/net/udp: (receive queue bytes, drops).
    fn udp_counters(&self) -> (u64, u64) {
        let local = format!("0100007F:{:04X}", self.port);
        let table = std::fs::read_to_string("/proc/net/udp").unwrap_or_default();
        table
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.get(1) == Some(&local.as_str()))
            .and_then(|f| {
                let rx = f.get(4)?.split(':').nth(1)?;
                let queued = u64::from_str_radix(rx, 16).ok()?;
                let drops = f.last()?.parse().ok()?;
                Some((queued, drops))
            })
            .expect("the server's socket in /proc/net/udp")
    }

    fn queued_bytes(&self) -> u64 {
        self.udp_counters().0
    }

    fn kernel_drops(&self) -> u64 {
        self.udp_counters().1
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
