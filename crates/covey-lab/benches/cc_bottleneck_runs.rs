//! Simulated events per second on one core for whole cc-bottleneck runs (engines, apps and
//! link). The link model alone is covey-sim's `sim_events` bench.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use covey_lab::scenarios::cc_bottleneck::run::run_point;
use covey_lab::scenarios::cc_bottleneck::{Params, RunPoint, Workload};
use covey_proto::cc::Algorithm;

fn whole_runs(c: &mut Criterion) {
    let params = Params::default();
    let point = RunPoint {
        algorithm: Algorithm::Cocoa,
        workload: Workload::Continuous,
        clients: 40,
        seed_index: 0,
        run_seed: 1,
    };
    let probe = run_point(&point, &params);
    let mut g = c.benchmark_group("cc_bottleneck");
    g.sample_size(10);
    g.throughput(Throughput::Elements(probe.sim_steps));
    g.bench_function("run_40_clients_sim_steps", |b| {
        b.iter(|| run_point(&point, &params))
    });
    g.finish();
}

criterion_group!(benches, whole_runs);
criterion_main!(benches);
