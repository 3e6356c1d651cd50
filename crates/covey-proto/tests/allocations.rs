//! Memory at rest and in steady state, counted by a global allocator: what an endpoint holds
//! after construction (default and constrained profiles), what the first exchanges add, and
//! that full request/response exchanges then allocate nothing. Counting is per thread, so
//! the tests of this binary do not disturb each other.

mod counting_alloc;
mod observers;
mod pair;

use counting_alloc::{count, CountingAlloc};
use covey_proto::{Config, DropCause, Endpoint};
use pair::{Pair, PAYLOAD};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Enough exchanges to fill the deduplication table (8 192 entries by default) to its bound.
const WARM_UP: usize = 10_000;
const MEASURED: usize = 10_000;
const SEPARATE: usize = 2_000;
/// Separate exchanges in the warm-up: enough to bring the client's reply ring to its steady
/// size. Its empty ACKs (six bytes with their length) fill a first 15 KiB chunk after 2 564,
/// and from then on the ring turns over two chunks.
const SEPARATE_WARM_UP: usize = 3_000;

fn run(pair: &mut Pair, n: usize, confirmable: bool) -> usize {
    let mut bytes = 0;
    for _ in 0..n {
        bytes += pair.exchange(confirmable);
    }
    bytes
}

/// OSCORE-protected exchanges in steady state allocate nothing either: protecting and
/// verifying work in the endpoint's reused buffers and on the stack, so what OSCORE costs is
/// the AEAD (`covey bench --oscore` measures it).
#[cfg(feature = "oscore")]
#[test]
fn protected_exchanges_in_steady_state_allocate_nothing() {
    let mut pair = Pair::protected(Config::default());
    count(|| {
        run(&mut pair, WARM_UP, true);
    });
    let (bytes, con) = count(|| run(&mut pair, MEASURED, true));
    assert_eq!(bytes, MEASURED * PAYLOAD.len());
    println!(
        "OSCORE allocations: {} ({} B) in {MEASURED} CON exchanges",
        con.count, con.bytes
    );
    assert_eq!(
        con.count, 0,
        "allocations in {MEASURED} protected exchanges"
    );
}

#[test]
fn exchanges_in_steady_state_allocate_nothing() {
    // The counter sees allocations at all (else zero would prove nothing).
    let (_, probe) = count(|| std::hint::black_box(Vec::<u8>::with_capacity(64)));
    assert_eq!(probe.count, 1);

    let mut pair = Pair::new(Config::default());
    // Warm up both roles and both message types, so first-use paths are behind us: tables
    // and buffers grow on first use, to what one peer's traffic needs.
    let (_, warm_up) = count(|| {
        run(&mut pair, WARM_UP, true);
        run(&mut pair, WARM_UP, false);
        // Each acknowledges a separate response, and the client keeps its ACK in the reply
        // ring (the last half of `max_buffers` replies) until the ring reaches its steady size.
        for _ in 0..SEPARATE_WARM_UP {
            pair.separate_exchange();
        }
    });

    let (bytes, con) = count(|| run(&mut pair, MEASURED, true));
    assert_eq!(bytes, MEASURED * PAYLOAD.len());
    let (bytes, non) = count(|| run(&mut pair, MEASURED, false));
    assert_eq!(bytes, MEASURED * PAYLOAD.len());
    // Separate responses: the piggyback timer fires, an empty ACK goes out, the response
    // is a CON of its own; at one second per exchange, dedup entries also expire.
    let (bytes, separate) = count(|| {
        let mut bytes = 0;
        for _ in 0..SEPARATE {
            bytes += pair.separate_exchange();
        }
        bytes
    });
    assert_eq!(bytes, SEPARATE * PAYLOAD.len());

    println!(
        "allocations: warm-up {} ({} B), CON {} ({} B) in {MEASURED}, NON {} ({} B) in {MEASURED}, \
         separate {} ({} B) in {SEPARATE}",
        warm_up.count, warm_up.bytes, con.count, con.bytes, non.count, non.bytes, separate.count, separate.bytes
    );
    // Growth stops at the bounds: with both deduplication tables full (8 192 entries each,
    // the largest table) and both reply rings full, the pair holds under 4 MiB, where
    // preallocation to the maxima held 15 MiB.
    assert!(
        warm_up.net_bytes < 4 << 20,
        "warm-up left {} B held",
        warm_up.net_bytes
    );
    assert_eq!(con.count, 0, "CON exchanges allocated");
    assert_eq!(non.count, 0, "NON exchanges allocated");
    assert_eq!(separate.count, 0, "separate-response exchanges allocated");

    // Nothing went wrong on the way: every exchange completed without loss or overload.
    for ep in [&pair.client, &pair.server] {
        let s = ep.stats();
        assert_eq!(s.total_retransmissions(), 0);
        assert_eq!(s.failed, 0);
        assert_eq!(s.drops_of(DropCause::Overload), 0);
        assert_eq!(s.drops_of(DropCause::Unmatched), 0);
    }
    let total = (2 * WARM_UP + 2 * MEASURED + SEPARATE + SEPARATE_WARM_UP) as u64;
    assert_eq!(pair.client.stats().completed_after[0], total);
    assert_eq!(
        pair.server.stats().separate_responses,
        (SEPARATE + SEPARATE_WARM_UP) as u64
    );
}

/// Idle heap of a default endpoint: nothing is preallocated to the `Config` maxima.
const DEFAULT_IDLE_LIMIT: i64 = 64 << 10;
/// Heap of the constrained profile after construction, as TinyCoAP's 8.4 KB on a TelosB.
const CONSTRAINED_LIMIT: i64 = 8 << 10;

#[test]
fn a_default_endpoint_holds_little_heap_when_idle() {
    let (endpoint, held) = count(|| Endpoint::new(Config::default(), 1).unwrap());
    let size = std::mem::size_of_val(&endpoint) as i64;
    println!(
        "default endpoint: {} B of heap after construction ({} allocations), {size} B inline",
        held.net_bytes, held.count
    );
    assert!(
        held.net_bytes <= DEFAULT_IDLE_LIMIT,
        "default endpoint holds {} B when idle",
        held.net_bytes
    );
}

#[test]
fn the_constrained_profile_fits_8_kib_and_serves_1024_byte_payloads() {
    let (boxed, held) = count(|| Box::new(Endpoint::new(Config::constrained(), 1).unwrap()));
    // Boxed, so the endpoint's own fields count too: the whole footprint is on the heap.
    println!(
        "constrained endpoint: {} B in total after construction (struct {} B)",
        held.net_bytes,
        std::mem::size_of::<Endpoint>()
    );
    assert!(
        held.net_bytes <= CONSTRAINED_LIMIT,
        "constrained endpoint holds {} B",
        held.net_bytes
    );
    drop(boxed);

    // Both ends constrained: a 1 024-byte payload in one datagram, and 3 000 bytes
    // block-wise, arrive whole.
    let mut pair = Pair::new(Config::constrained());
    let (_, serving) = count(|| {
        assert_eq!(pair.exchange_with_payload(&[7u8; 1024]), 1024);
        assert_eq!(pair.exchange_with_payload(&[9u8; 3000]), 3000);
    });
    println!(
        "constrained pair: serving 1 024 B and 3 000 B payloads left {} B held",
        serving.net_bytes
    );
}

/// Requests a constrained endpoint answers, each from a port of its own, as the mote test's
/// flood sends them: its tables fill to their bounds and turn over.
const PORTS: u16 = 1000;
/// Heap of the constrained profile once its tables are at their bounds (6 125 B measured on a
/// 64-bit host): the struct, the incoming and deduplication tables, and the last replies at
/// their size. With reply-cache chunks of four largest datagrams it was 15 196 B, with
/// chunks of one 8 272 B.
const CONSTRAINED_AFTER_TRAFFIC_LIMIT: i64 = 7 << 10;

/// The most heap `config`'s endpoint (boxed, so its own fields count) holds while answering a
/// GET from each of `PORTS` ports, and what it holds at the end.
fn heap_after_requests_from_many_ports(config: Config) -> (i64, i64) {
    use covey_core::{Code, MessageEncoder, MessageType, OptionNumber};
    use covey_proto::{Event, Instant, LocalAddr, Response};

    let (mut endpoint, mut held) = count(|| Box::new(Endpoint::new(config, 1).unwrap()));
    let (mut buf, mut out) = ([0u8; 64], [0u8; 1152]);
    let mut now = Instant::from_secs(1);
    let mut peak = held.net_bytes;
    for port in 0..PORTS {
        let token = port.to_be_bytes();
        let (_, step) = count(|| {
            let mut get =
                MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, port, &token)
                    .unwrap();
            get.option(OptionNumber::URI_PATH, b"temp").unwrap();
            let n = get.finish();
            let from = pair::addr(1, 10_000 + port);
            endpoint.handle_datagram(now, from, LocalAddr::UNICAST, &buf[..n]);
            while let Some(event) = endpoint.poll_event() {
                if let Event::Request(id) = event {
                    let reply = Response::with_payload(Code::CONTENT, b"20.5");
                    endpoint.respond(now, id, &reply).unwrap();
                }
            }
            while endpoint.poll_transmit(now, &mut out).is_some() {}
            now = now.saturating_add(std::time::Duration::from_millis(1));
            endpoint.handle_timeout(now);
        });
        held.net_bytes += step.net_bytes;
        peak = peak.max(held.net_bytes);
    }
    (peak, held.net_bytes)
}

#[test]
fn the_constrained_profile_holds_under_7_kib_after_1000_requests_from_as_many_ports() {
    let (peak, held) = heap_after_requests_from_many_ports(Config::constrained());
    println!("constrained endpoint after {PORTS} requests from as many ports: {held} B held, {peak} B at most");
    assert!(peak <= CONSTRAINED_AFTER_TRAFFIC_LIMIT, "{peak} B at most");
}

/// The mote profile after the same traffic (5 997 B measured on a 64-bit host, 6 253 B with
/// the `oscore` feature the workspace's tests turn on; 7 120 B with reply-cache chunks of one
/// 576-byte datagram and 1 KiB of pooled buffers): the constrained profile's tables, no
/// pooled buffers.
const MOTE_AFTER_TRAFFIC_LIMIT: i64 = 6_656;

#[test]
fn the_mote_profile_holds_under_6_5_kib_after_1000_requests_from_as_many_ports() {
    let (peak, held) = heap_after_requests_from_many_ports(Config::mote());
    println!(
        "mote endpoint after {PORTS} requests from as many ports: {held} B held, {peak} B at most"
    );
    assert!(peak <= MOTE_AFTER_TRAFFIC_LIMIT, "{peak} B at most");
}

/// Observers registered from four client sockets, as `covey bench --observers` does.
const OBSERVERS: usize = 10_000;
/// What each registered observer may cost above an idle endpoint (its entry, its index
/// entry, the deduplication entry of its registration): 125 B measured.
const OBSERVER_LIMIT: i64 = 128;
/// What notification rounds to every observer may add per observer: the index entry of its
/// last NON notification's message ID, which lets an RST end it (8 B measured). The round
/// itself holds one shared representation, not a datagram per observer.
const BURST_LIMIT: i64 = 16;

#[test]
fn an_observer_costs_at_most_128_bytes_and_a_burst_at_most_16() {
    use covey_core::Code;
    use covey_proto::{Instant, Response};

    // As `covey serve` sizes it: room to send every observer a notification at once.
    let config = Config {
        max_observers: OBSERVERS,
        max_buffers: 2 * OBSERVERS + 1024,
        ..Config::default()
    };
    let mut server = Endpoint::new(config, 3).unwrap();
    let mut now = Instant::from_secs(10);
    let mut buf = vec![0u8; 1280];
    let mut out = vec![0u8; 1280];
    let response = Response::with_payload(Code::CONTENT, b"12:00:00");
    let mut register = |server: &mut Endpoint, now: Instant, k: usize| {
        observers::register(server, now, k, &response, &mut buf, &mut out)
    };
    // The first few registrations verify the sources (Echo), create the peers and
    // first-use buffers.
    for k in 0..8 {
        register(&mut server, now, k);
    }
    let (_, registered) = count(|| {
        for k in 8..OBSERVERS {
            now = now + covey_proto::Duration::from_micros(50);
            register(&mut server, now, k);
        }
    });
    assert_eq!(server.observer_count(1), OBSERVERS);
    // Notifications leave per-observer state (the last NON's message ID, for RST).
    let (_, notified) = count(|| {
        for _ in 0..3 {
            now = now + covey_proto::Duration::from_secs(1);
            assert_eq!(server.notify(now, 1, &response), OBSERVERS);
            while server.poll_transmit(now, &mut out).is_some() {}
        }
    });
    let per_observer = registered.net_bytes / (OBSERVERS as i64 - 8);
    let per_notified = notified.net_bytes / OBSERVERS as i64;
    println!(
        "observers: registering {} held {} B ({per_observer} B per observer); notifying all \
         3 times added {} B ({per_notified} B per observer)",
        OBSERVERS - 8,
        registered.net_bytes,
        notified.net_bytes
    );
    assert!(
        per_observer <= OBSERVER_LIMIT,
        "{per_observer} B per registered observer"
    );
    assert!(
        per_notified <= BURST_LIMIT,
        "{per_notified} B per observer for a notification burst"
    );
}
