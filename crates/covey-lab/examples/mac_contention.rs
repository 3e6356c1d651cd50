//! MAC contention on one IEEE 802.15.4 channel, without CoAP: N senders that all hear each
//! other each offer 50-byte datagrams to one sink as a Poisson process of R a second, with
//! ACKs, for 60 s of simulated time. Prints the delivery ratio, the mean and 95th-percentile
//! delay from offer to confirm, and the drops by cause.
//!
//! `cargo run --release -p covey-lab --example mac_contention [-- N R]` (default 10 senders,
//! 5 datagrams/s each).

use covey_lab::stats;
use covey_proto::Instant;
use covey_sim::media::ieee802154::{
    Flow, Ieee802154Config, Ieee802154Medium, MacExperiment, PoissonSource, Topology,
};

const SINK: usize = 0;
const PAYLOAD_BYTES: usize = 50;
const SECONDS: u64 = 60;
const SEED: u64 = 1;

fn main() {
    let mut args = std::env::args().skip(1);
    let senders: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let rate_per_s: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5.0);

    // A star where everyone hears everyone: node 0 is the sink, 1..=N the senders.
    let config = Ieee802154Config {
        seed: SEED,
        ..Ieee802154Config::default()
    };
    let medium = Ieee802154Medium::new(config, Topology::full_mesh(senders + 1));
    let mut experiment = MacExperiment::new(medium);
    for sender in 1..=senders {
        let flow = Flow::unicast(sender, SINK, PAYLOAD_BYTES);
        let seed = SEED * 1000 + sender as u64; // each sender its own stream of gaps
        experiment.add_source(PoissonSource::new(flow, rate_per_s, seed));
    }
    experiment.run_until(Instant::from_secs(SECONDS));
    // Offer nothing more and let the queues play out, so every offer has its confirm.
    experiment.finish();

    let delays_ms: Vec<f64> = experiment
        .outcomes()
        .iter()
        .filter(|o| o.delivered())
        .map(|o| o.delay().as_secs_f64() * 1e3)
        .collect();
    let mean = stats::mean(&delays_ms).unwrap_or(0.0);
    let p95 = stats::quantile(&delays_ms, 0.95).unwrap_or(0.0);

    println!("{senders} senders x {rate_per_s} datagrams/s of {PAYLOAD_BYTES} bytes, {SECONDS} s");
    println!(
        "offered {}, delivered {} (ratio {:.4})",
        experiment.offered(),
        delays_ms.len(),
        experiment.delivery_ratio()
    );
    println!("delay offer -> confirm: mean {mean:.2} ms, p95 {p95:.2} ms");
    let counters = experiment.medium().total_counters();
    for (cause, drops) in counters.drops.iter() {
        println!("  dropped, {cause:?}: {drops}");
    }
    println!(
        "frames sent {}, ACKs {}, busy CCAs {}, collisions at receivers {}",
        counters.stats.frames_sent,
        counters.stats.acks_sent,
        counters.cca_busy,
        counters.stats.rx_collisions
    );
}
