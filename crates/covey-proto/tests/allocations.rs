//! Memory at rest and in steady state, counted by a global allocator: what an endpoint holds
//! after construction (default and constrained profiles), what the first exchanges add, and
//! that full request/response exchanges then allocate nothing. Counting is per thread, so
//! the tests of this binary do not disturb each other.

mod counting_alloc;
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
/// Separate exchanges in the warm-up: enough to fill the client's reply ring.
const SEPARATE_WARM_UP: usize = 600;

fn run(pair: &mut Pair, n: usize, confirmable: bool) -> usize {
    let mut bytes = 0;
    for _ in 0..n {
        bytes += pair.exchange(confirmable);
    }
    bytes
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
        // Each acknowledges a separate response: enough to fill the client's reply ring
        // (half of `max_buffers`) to its bound.
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
    let (endpoint, held) = count(|| Endpoint::new(Config::default(), 1));
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
    let (boxed, held) = count(|| Box::new(Endpoint::new(Config::constrained(), 1)));
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
