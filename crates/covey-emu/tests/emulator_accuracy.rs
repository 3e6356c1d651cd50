//! The emulator validates itself: what a probe stream measures on an emulated link — mean
//! one-way delay, loss, arrival rate — is within 2 % of the link's configuration, and
//! bursty losses stay bursty. Needs root: `#[ignore]`d, run with `--include-ignored`.

mod emu_support;

use std::sync::Mutex;
use std::time::Duration as StdDuration;

use covey_emu::validation::{measure, Measurement, Probe, PROBE_HEADERS};
use covey_emu::{self as emu, DirectionStats, ForwarderStats, Testbed};
use covey_proto::Duration;
use covey_sim::media::{LinkConfig, LossSpec, PropagationDelay};
use emu_support::require_emulator;

/// The tolerance the issue sets for the emulator's own measurements.
const TOLERANCE: f64 = 0.02;

/// One measurement at a time: they are about the emulator, not about sharing the CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `probe` from tx to rx over a link of `config` (both directions), one
/// measurement at a time; returns what the probe measured and the link's own counts.
fn probe_link(config: LinkConfig, probe: Probe) -> (Measurement, DirectionStats, ForwarderStats) {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tb = Testbed::builder()
        .node("tx")
        .node("rx")
        .symmetric_link("tx", "rx", config)
        .seed(7)
        .build()
        .expect("testbed");
    let m = measure(&tb, "tx", "rx", probe).expect("probe");
    let dir = tb.direction("tx", "rx").expect("direction");
    (m, dir, tb.forwarder_stats())
}

/// A link of `rate_bps` with a fixed `delay_ms`, `loss` and a queue of `queue` packets.
fn link(rate_bps: u64, delay_ms: u64, loss: LossSpec, queue: usize) -> LinkConfig {
    emu::emulated_link(
        rate_bps,
        PropagationDelay::Fixed(Duration::from_millis(delay_ms)),
        loss,
        queue,
    )
}

fn relative_error(measured: f64, configured: f64) -> f64 {
    (measured - configured).abs() / configured
}

#[test]
#[ignore = "needs root"]
fn mean_delay_with_the_papers_jitter_is_within_two_percent() {
    require_emulator();
    let target = Duration::from_millis(50);
    let config = emu::emulated_link(100_000_000, emu::paper_jitter(target), LossSpec::None, 1000);
    let payload = 100;
    let probe = Probe {
        packets: 2000,
        burst: 1,
        interval: StdDuration::from_millis(1),
        payload,
        realtime: true,
    };
    let (m, _, forwarder) = probe_link(config, probe);
    let expected = target + config.serialisation(payload + PROBE_HEADERS);
    let error = relative_error(m.mean_delay.as_secs_f64(), expected.as_secs_f64());
    let lateness = &forwarder.lateness;
    eprintln!(
        "delay: mean {:?} (configured {expected:?}), min {:?}, p1 {:?}, p99 {:?}, max {:?}; \
         forwarder (realtime {}) late: mean {:?}, p99 {:?}, max {:?}",
        m.mean_delay,
        m.min_delay,
        m.p1_delay,
        m.p99_delay,
        m.max_delay,
        forwarder.realtime,
        lateness.mean(),
        lateness.quantile_bound(0.99),
        lateness.max()
    );
    assert_eq!(m.received, m.sent, "no loss configured");
    assert!(
        error < TOLERANCE,
        "mean delay off by {:.2} %",
        error * 100.0
    );
    // Jitter stays inside 80–120 % of the target and spreads over it. The largest delay
    // also holds the host's scheduling of the probe's receiver, so the 99th percentile is
    // what is bounded above.
    assert!(
        m.min_delay >= Duration::from_millis(40),
        "{:?}",
        m.min_delay
    );
    assert!(m.p1_delay < Duration::from_millis(41), "{:?}", m.p1_delay);
    assert!(m.p99_delay > Duration::from_millis(59), "{:?}", m.p99_delay);
    assert!(m.p99_delay < Duration::from_millis(61), "{:?}", m.p99_delay);
}

#[test]
#[ignore = "needs root"]
fn bernoulli_loss_is_within_two_percent_and_every_loss_is_the_models() {
    require_emulator();
    let p = 0.25;
    let config = link(100_000_000, 1, LossSpec::Bernoulli { p }, 10_000);
    let probe = Probe {
        packets: 100_000,
        burst: 20,
        interval: StdDuration::from_millis(1),
        payload: 32,
        realtime: true,
    };
    let (m, dir, _) = probe_link(config, probe);
    eprintln!(
        "loss: {} of {} lost ({:.4}); link says {dir:?}",
        m.sent - m.received,
        m.sent,
        m.loss
    );
    assert!(
        relative_error(m.loss, p) < TOLERANCE,
        "loss {:.4} vs {p}",
        m.loss
    );
    assert_eq!(dir.packets_sent, m.sent, "every probe reached the link");
    assert_eq!(
        dir.lost_channel,
        m.sent - m.received,
        "no loss but the model's"
    );
    assert!(
        m.loss_after_loss < 2.0 * p,
        "independent: {}",
        m.loss_after_loss
    );
}

#[test]
#[ignore = "needs root"]
fn gilbert_elliott_losses_arrive_in_bursts() {
    require_emulator();
    let spec = LossSpec::GilbertElliott {
        p: 0.01,
        r: 0.1,
        loss_bad: 1.0,
        loss_good: 0.0,
    };
    let config = link(100_000_000, 1, spec, 10_000);
    let probe = Probe {
        packets: 20_000,
        burst: 20,
        interval: StdDuration::from_millis(1),
        payload: 32,
        realtime: true,
    };
    let (m, _, _) = probe_link(config, probe);
    eprintln!(
        "Gilbert-Elliott: loss {:.4}, P(loss|loss) {:.3}",
        m.loss, m.loss_after_loss
    );
    // Bad periods last 1/r = 10 packets: P(loss | loss) = 1 − r = 0.9; independent
    // losses at the same mean (9 %) would give 0.09.
    assert!(m.loss_after_loss > 0.8, "{}", m.loss_after_loss);
    assert!(m.loss > 0.03 && m.loss < 0.2, "{}", m.loss);
}

#[test]
#[ignore = "needs root"]
fn arrival_rate_under_a_rate_cap_is_within_two_percent() {
    require_emulator();
    let rate = 2_000_000;
    let config = link(rate, 10, LossSpec::None, 2000);
    // 1000-byte IP packets, sent faster than the link drains them: the queue fills and
    // the serialiser sets the pace, 4 ms a packet.
    let probe = Probe {
        packets: 500,
        burst: 500,
        interval: StdDuration::ZERO,
        payload: 1000 - PROBE_HEADERS,
        realtime: true,
    };
    let (m, dir, _) = probe_link(config, probe);
    eprintln!(
        "rate: {:.0} bit/s (configured {rate}); link says {dir:?}",
        m.arrival_rate_bps
    );
    assert_eq!(m.received, m.sent, "the queue holds the burst");
    assert!(
        relative_error(m.arrival_rate_bps, rate as f64) < TOLERANCE,
        "rate {:.0}",
        m.arrival_rate_bps
    );
    assert_eq!(dir.bytes_on_wire, 500 * 1000);
}

#[test]
#[ignore = "needs root"]
fn a_full_drop_tail_queue_drops_the_excess() {
    require_emulator();
    let config = link(1_000_000, 1, LossSpec::None, 20);
    let probe = Probe {
        packets: 200,
        burst: 200,
        interval: StdDuration::ZERO,
        payload: 500,
        realtime: true,
    };
    let (m, dir, _) = probe_link(config, probe);
    eprintln!(
        "queue: {} of {} arrived; link says {dir:?}",
        m.received, m.sent
    );
    // 528-byte packets take 4.2 ms each at 1 Mbit/s; a burst sent within a fraction of
    // that finds one in service and 20 queued.
    assert!(m.received >= 21 && m.received < 40, "{}", m.received);
    assert_eq!(dir.lost_queue_full, m.sent - m.received);
}

#[test]
#[ignore = "needs root"]
fn each_direction_has_its_own_configuration() {
    require_emulator();
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Named against the nodes' order on purpose: "rx" was added after "tx".
    let to_tx = link(100_000_000, 30, LossSpec::None, 100);
    let to_rx = link(100_000_000, 5, LossSpec::None, 100);
    let tb = Testbed::builder()
        .node("tx")
        .node("rx")
        .link("rx", "tx", to_tx, to_rx)
        .build()
        .expect("testbed");
    let probe = Probe {
        packets: 200,
        burst: 1,
        interval: StdDuration::from_millis(1),
        payload: 64,
        realtime: true,
    };
    let forth = measure(&tb, "tx", "rx", probe).expect("tx -> rx");
    let back = measure(&tb, "rx", "tx", probe).expect("rx -> tx");
    eprintln!(
        "tx->rx {:?}, rx->tx {:?}",
        forth.median_delay, back.median_delay
    );
    // Each direction shows its own delay (plus the host's fraction of a millisecond).
    let within = |d: Duration, ms: u64| {
        d >= Duration::from_millis(ms) && d < Duration::from_millis(ms) + Duration::from_millis(1)
    };
    assert!(within(forth.median_delay, 5), "{:?}", forth.median_delay);
    assert!(within(back.median_delay, 30), "{:?}", back.median_delay);
}
