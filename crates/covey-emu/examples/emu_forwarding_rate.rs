//! How many packets per second the emulator's forwarder carries without losing any: a
//! sender in one namespace offers small UDP datagrams at a paced rate through an
//! unimpaired emulated link to a receiver in another, at rising rates, and each step says
//! how many arrived, where the others were lost, and the forwarder's own CPU time per
//! packet (its cost whatever else the machine runs). Needs root.
//!
//!     cargo run --release -p covey-emu --example emu_forwarding_rate [SECONDS] [PAYLOAD] [realtime]
//!
//! With `realtime` the sender and receiver run under SCHED_FIFO, below the forwarder, so
//! other work on the machine does not limit the offered load; that takes the machine's
//! CPUs for SECONDS per step.

use std::time::Duration;

use covey_emu::validation::{measure, Probe};
use covey_emu::{EmuError, Testbed};

/// Offered rates, packets per second.
const RATES: [usize; 6] = [25_000, 50_000, 100_000, 200_000, 300_000, 400_000];

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let payload: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(32);
    let realtime = args.next().is_some_and(|a| a == "realtime");
    if let Err(e) = run(seconds, payload, realtime) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(seconds: f64, payload: usize, realtime: bool) -> Result<(), EmuError> {
    println!(
        "offered pkt/s | delivered pkt/s |    sent | lost before forwarder | lost after | \
         forwarder CPU/pkt | late p99"
    );
    for rate in RATES {
        let testbed = Testbed::builder().node("tx").node("rx").build()?;
        // Bursts every millisecond keep the sender's pacing cheap.
        let burst = (rate / 1000).max(1);
        let probe = Probe {
            packets: (rate as f64 * seconds) as usize,
            burst,
            interval: Duration::from_millis(1),
            payload,
            realtime,
        };
        let m = measure(&testbed, "tx", "rx", probe)?;
        let link = testbed.direction("tx", "rx")?;
        let stats = testbed.forwarder_stats();
        println!(
            "{rate:>13} | {:>15.0} | {:>7} | {:>21} | {:>10} | {:>17?} | {:?}",
            m.arrival_rate_pps,
            m.sent,
            m.sent - link.packets_sent,
            link.packets_sent - m.received,
            stats.cpu_per_packet().unwrap_or_default(),
            stats.lateness.quantile_bound(0.99),
        );
    }
    Ok(())
}
