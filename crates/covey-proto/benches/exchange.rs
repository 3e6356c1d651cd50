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

fn exchange(c: &mut Criterion) {
    for (name, confirmable) in [("con", true), ("non", false)] {
        println!(
            "exchange/{name}: {} allocations per exchange (after {WARM_UP} warm-up exchanges)",
            allocations_per_exchange(confirmable)
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
