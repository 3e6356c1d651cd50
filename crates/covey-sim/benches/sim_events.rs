//! Simulated events per second on one core: the link model alone (serialisation
//! completions and arrivals). Whole scenario runs (engines, apps and link) are covey-lab's
//! `cc_bottleneck_runs` bench.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use covey_proto::{Duration, Instant};
use covey_sim::media::{
    Destination, Framing, HeaderModel, LinkConfig, LossSpec, Medium, Packet, PointToPoint,
    PropagationDelay, RateLimit,
};

const PACKETS: u64 = 10_000;

fn link() -> LinkConfig {
    LinkConfig {
        rate_bps: 20_000,
        delay: PropagationDelay::Uniform {
            min: Duration::from_millis(15),
            max: Duration::from_millis(25),
        },
        framing: Framing {
            mtu: 128,
            header: HeaderModel::Ipv6Udp,
        },
        queue_packets: 50,
        loss: LossSpec::GilbertElliott {
            p: 0.01,
            r: 0.3,
            loss_bad: 0.5,
            loss_good: 0.001,
        },
        rate_limit: RateLimit::Serialiser,
    }
}

/// Offers `PACKETS` packets, one every 20 ms in each direction, and runs the medium until
/// idle; returns the link events processed.
fn pump(m: &mut PointToPoint) -> u64 {
    let before = m.events();
    let mut next = Instant::ZERO;
    for i in 0..PACKETS {
        while let Some(t) = m.poll_timeout().filter(|t| *t <= next) {
            m.handle_timeout(t);
            while m.poll_delivery().is_some() {}
            while m.poll_released().is_some() {}
        }
        let (from, to) = if i % 2 == 0 { (0, 1) } else { (1, 0) };
        m.send(
            next,
            Packet {
                id: i,
                from,
                to: Destination::Node(to),
                payload_bytes: 20 + (i % 90) as usize,
            },
        );
        next = next + Duration::from_millis(10);
    }
    while let Some(t) = m.poll_timeout() {
        m.handle_timeout(t);
        while m.poll_delivery().is_some() {}
        while m.poll_released().is_some() {}
    }
    m.events() - before
}

fn link_events(c: &mut Criterion) {
    let mut probe = PointToPoint::new(0, 1, link(), link(), 1, 0);
    let events = pump(&mut probe);
    let mut g = c.benchmark_group("link");
    g.throughput(Throughput::Elements(events));
    g.bench_function("point_to_point_events", |b| {
        let mut m = PointToPoint::new(0, 1, link(), link(), 1, 0);
        b.iter(|| pump(&mut m))
    });
    g.finish();
}

criterion_group!(benches, link_events);
criterion_main!(benches);
