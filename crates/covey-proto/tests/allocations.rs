//! Steady state allocates nothing: full request/response exchanges through two endpoints,
//! counted by a global allocator. The only test of this binary, so nothing else runs on
//! the measured thread (counting is per thread anyway).

mod counting_alloc;
mod pair;

use counting_alloc::{count, CountingAlloc};
use covey_proto::{Config, DropCause};
use pair::{Pair, PAYLOAD};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const WARM_UP: usize = 1_000;
const MEASURED: usize = 10_000;
const SEPARATE: usize = 2_000;

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
    // Warm up both roles and both message types once, so first-use paths are behind us.
    // Tables are sized at construction, so not even first use should allocate; reported,
    // and asserted below.
    let (_, warm_up) = count(|| {
        run(&mut pair, WARM_UP, true);
        run(&mut pair, WARM_UP, false);
        for _ in 0..10 {
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
    assert_eq!(
        warm_up.count, 0,
        "first exchanges after construction allocated"
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
    let total = (2 * WARM_UP + 2 * MEASURED + SEPARATE + 10) as u64;
    assert_eq!(pair.client.stats().completed_after[0], total);
    assert_eq!(
        pair.server.stats().separate_responses,
        (SEPARATE + 10) as u64
    );
}
