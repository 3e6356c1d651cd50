//! One request/response exchange through two endpoints in memory (CON piggy-backed, NON),
//! and the allocations each one makes.

#[path = "../tests/counting_alloc/mod.rs"]
mod counting_alloc;
#[path = "../tests/pair/mod.rs"]
mod pair;

use counting_alloc::{count, CountingAlloc};
use covey_proto::Config;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use pair::Pair;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const WARM_UP: usize = 1_000;
const COUNTED: usize = 10_000;

fn allocations_per_exchange(confirmable: bool) -> f64 {
    let mut pair = Pair::new(Config::default());
    for _ in 0..WARM_UP {
        pair.exchange(confirmable);
    }
    let (_, a) = count(|| {
        for _ in 0..COUNTED {
            black_box(pair.exchange(confirmable));
        }
    });
    a.count as f64 / COUNTED as f64
}

/// Wall time per exchange of the fastest of `ROUNDS` rounds: on a shared machine, the round
/// that no other process interrupted (criterion's mean includes the interrupted ones).
fn best_round_ns(confirmable: bool) -> f64 {
    const ROUNDS: usize = 30;
    const PER_ROUND: usize = 20_000;
    let mut pair = Pair::new(Config::default());
    for _ in 0..WARM_UP {
        pair.exchange(confirmable);
    }
    (0..ROUNDS)
        .map(|_| {
            let start = std::time::Instant::now();
            for _ in 0..PER_ROUND {
                black_box(pair.exchange(confirmable));
            }
            start.elapsed().as_nanos() as f64 / PER_ROUND as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn exchange(c: &mut Criterion) {
    for (name, confirmable) in [("con", true), ("non", false)] {
        println!(
            "exchange/{name}: {} allocations per exchange (after {WARM_UP} warm-up exchanges); \
             fastest of 30 rounds of 20 000: {:.0} ns per exchange",
            allocations_per_exchange(confirmable),
            best_round_ns(confirmable)
        );
    }
    let mut group = c.benchmark_group("exchange");
    group.throughput(Throughput::Elements(1));
    for (name, confirmable) in [("con", true), ("non", false)] {
        let mut pair = Pair::new(Config::default());
        for _ in 0..WARM_UP {
            pair.exchange(confirmable);
        }
        group.bench_function(name, |b| b.iter(|| black_box(pair.exchange(confirmable))));
    }
    group.finish();
}

criterion_group!(benches, exchange);
criterion_main!(benches);
