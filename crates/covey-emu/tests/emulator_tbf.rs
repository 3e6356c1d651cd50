//! The emulator's forwarder runs the simulator's tbf (token bucket) link element on real
//! time: a burst within the bucket leaves at line speed, a sustained stream is held to the
//! rate within 2 %, and the byte limit drops what would wait beyond it. Needs root:
//! `#[ignore]`d, run with `--include-ignored`.

mod emu_support;

use std::sync::Mutex;
use std::time::Duration as StdDuration;

use covey_emu::stacks::network::LinkCondition;
use covey_emu::stacks::testbed_network::{paper_tbf, tbf_link_config};
use covey_emu::validation::{measure, Measurement, Probe, PROBE_HEADERS};
use covey_emu::{self as emu, DirectionStats, Testbed};
use covey_proto::Duration;
use covey_sim::media::{LinkConfig, LossSpec, PropagationDelay, RateLimit, TbfConfig};
use emu_support::require_emulator;

/// The tolerance the issue sets for the emulator's own measurements.
const TOLERANCE: f64 = 0.02;

/// One measurement at a time: they are about the emulator, not about sharing the CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `probe` from tx to rx over a link of `config` (both directions).
fn probe_link(config: LinkConfig, probe: Probe) -> (Measurement, DirectionStats) {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tb = Testbed::builder()
        .node("tx")
        .node("rx")
        .symmetric_link("tx", "rx", config)
        .seed(11)
        .build()
        .expect("testbed");
    let m = measure(&tb, "tx", "rx", probe).expect("probe");
    let dir = tb.direction("tx", "rx").expect("direction");
    (m, dir)
}

fn fixed(ms: u64) -> PropagationDelay {
    PropagationDelay::Fixed(Duration::from_millis(ms))
}

#[test]
#[ignore = "needs root"]
fn a_burst_within_the_bucket_leaves_at_line_speed() {
    require_emulator();
    // Seed 004's low-quality cap, 6.25 kB/s, with the lab's 4096-byte bucket: nine
    // 437-byte packets (3933 B) fit. A serialiser at the cap would spread them over
    // 9 × 69.92 ms = 629 ms; the bucket lets them all through at once.
    let tbf = paper_tbf(6250.0);
    let config = emu::tbf_link(tbf, fixed(20), LossSpec::None);
    let probe = Probe {
        packets: 9,
        burst: 9,
        interval: StdDuration::ZERO,
        payload: 437 - PROBE_HEADERS,
        realtime: true,
    };
    let (m, dir) = probe_link(config, probe);
    let spread = m.max_delay.saturating_sub(m.min_delay);
    eprintln!(
        "burst: {} of {} in {:?}..{:?} (spread {spread:?}); link says {dir:?}",
        m.received, m.sent, m.min_delay, m.max_delay
    );
    assert_eq!(m.received, 9, "the bucket and the limit hold the burst");
    assert!(
        m.min_delay >= Duration::from_millis(20),
        "{:?}",
        m.min_delay
    );
    // No size/rate spacing: 70 ms per packet would put the last 559 ms after the first.
    assert!(spread < Duration::from_millis(3), "spread {spread:?}");
    assert!(m.max_delay < Duration::from_millis(23), "{:?}", m.max_delay);
}

#[test]
#[ignore = "needs root"]
fn sustained_throughput_converges_to_the_rate() {
    require_emulator();
    // 1000-byte IP packets offered at 4 Mbit/s (a burst of 4 every 8 ms) into a
    // 2 Mbit/s bucket of 3000 B with room for the whole stream: after the first bucketful
    // the arrivals are paced by the tokens alone.
    let rate = 2_000_000;
    let tbf = TbfConfig::with_limit(rate, 3000, 2_000_000);
    let config = emu::tbf_link(tbf, fixed(5), LossSpec::None);
    let packets = 1500;
    let probe = Probe {
        packets,
        burst: 4,
        interval: StdDuration::from_millis(8),
        payload: 1000 - PROBE_HEADERS,
        realtime: true,
    };
    let (m, dir) = probe_link(config, probe);
    // The first three packets leave on the bucket's 3000 B; the other 1497 × 1000 B take
    // 1497 × 4 ms after them. Between the first and the last arrival the measured rate is
    // (n − 1) packets over that span, so set the same against the configured rate.
    let expected = (packets - 1) as f64 * 8000.0 / ((packets - 3) as f64 * 8000.0 / rate as f64);
    eprintln!(
        "rate: {:.0} bit/s measured, {expected:.0} expected from the bucket ({rate} configured); \
         link says {dir:?}",
        m.arrival_rate_bps
    );
    assert_eq!(m.received, m.sent, "the limit holds the backlog");
    let error = (m.arrival_rate_bps - expected).abs() / expected;
    assert!(error < TOLERANCE, "rate off by {:.2} %", error * 100.0);
    let error = (m.arrival_rate_bps - rate as f64).abs() / rate as f64;
    assert!(
        error < TOLERANCE,
        "rate off the cap by {:.2} %",
        error * 100.0
    );
}

#[test]
#[ignore = "needs root"]
fn the_limit_drops_what_would_wait_beyond_it() {
    require_emulator();
    // 1 Mbit/s, a 2000-byte bucket and a 10 000-byte limit; 100 back-to-back 1000-byte
    // packets: two leave on the bucket, ten wait (8 ms apart), the rest find the backlog
    // full — give or take the one or two that the tokens of the sending time let in.
    let tbf = TbfConfig::with_limit(1_000_000, 2000, 10_000);
    let config = emu::tbf_link(tbf, fixed(1), LossSpec::None);
    let probe = Probe {
        packets: 100,
        burst: 100,
        interval: StdDuration::ZERO,
        payload: 1000 - PROBE_HEADERS,
        realtime: true,
    };
    let (m, dir) = probe_link(config, probe);
    eprintln!(
        "limit: {} of {} arrived; link says {dir:?}",
        m.received, m.sent
    );
    assert!(m.received >= 12 && m.received <= 14, "{}", m.received);
    assert_eq!(
        dir.lost_queue_full,
        m.sent - m.received,
        "every drop is the limit's"
    );
    assert_eq!(dir.lost_channel, 0);
}

#[test]
fn the_papers_low_quality_condition_shapes_with_tbf_only_when_asked() {
    // No root needed: the configuration the protocols scenario would use.
    let low = LinkCondition {
        loss: 0.10,
        delay_s: 0.1,
        rate_bytes_per_s: Some(6250.0),
    };
    let serialised = emu::stacks::testbed_network::link_config(&low);
    assert_eq!(serialised.rate_limit, RateLimit::Serialiser);
    assert_eq!(serialised.rate_bps, 50_000);
    let shaped = tbf_link_config(&low);
    let RateLimit::TokenBucket(tbf) = shaped.rate_limit else {
        panic!("no tbf: {shaped:?}");
    };
    assert_eq!(
        (tbf.rate_bps, tbf.burst_bytes, tbf.limit_bytes),
        (50_000, 4096, 4096 + 312)
    );
    assert_eq!(shaped.delay, serialised.delay);
    assert_eq!(shaped.loss, serialised.loss);
    let clean = tbf_link_config(&LinkCondition::CLEAN);
    assert_eq!(
        clean,
        emu::stacks::testbed_network::link_config(&LinkCondition::CLEAN)
    );
}
