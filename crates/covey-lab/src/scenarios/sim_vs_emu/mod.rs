//! The simulator checked against the emulator: one small CoAP scenario — 10 clients doing
//! continuous CON GETs (one outstanding each) to one server over a link with 5 % loss and
//! 50 ms one-way delay in each direction — described once here. The simulator side runs it
//! on virtual time ([`simulate`]); the emulator side runs `covey serve` and `covey bench`
//! in two namespaces joined by the same link model on real time (the covey-cli test
//! `sim_vs_emulator`). Their median request completion times must agree within 10 %.

pub mod peer;
pub mod simulate;

use covey_proto::Duration;
use covey_sim::media::{Framing, HeaderModel, LinkConfig, LossSpec, PropagationDelay, RateLimit};
use serde::Serialize;

pub use simulate::simulate;

/// The scenario's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CrossCheck {
    /// Client endpoints, each with one request outstanding.
    pub clients: usize,
    /// Loss probability per packet, each direction.
    pub loss: f64,
    /// One-way propagation delay, each direction.
    pub one_way: Duration,
    /// Link rate, each direction (bit/s).
    pub rate_bps: u64,
    /// Drop-tail queue, packets.
    pub queue_packets: usize,
    /// Time before measuring.
    pub warmup: Duration,
    /// Measured time.
    pub duration: Duration,
    /// Seed of the link models' random streams and of the engines.
    pub seed: u64,
}

impl Default for CrossCheck {
    fn default() -> CrossCheck {
        CrossCheck {
            clients: 10,
            loss: 0.05,
            one_way: Duration::from_millis(50),
            rate_bps: 1_000_000,
            queue_packets: 100,
            warmup: Duration::from_secs(2),
            duration: Duration::from_secs(30),
            seed: 1,
        }
    }
}

impl CrossCheck {
    /// One direction of the link, for the simulator: CoAP datagrams plus the IPv4 and UDP
    /// headers the emulator's real packets carry. The emulator takes the same values with
    /// its own framing (whole IP packets).
    pub fn link(&self) -> LinkConfig {
        LinkConfig {
            rate_bps: self.rate_bps,
            delay: PropagationDelay::Fixed(self.one_way),
            framing: Framing {
                mtu: 1500,
                header: HeaderModel::Ipv4Udp,
            },
            queue_packets: self.queue_packets,
            loss: LossSpec::Bernoulli { p: self.loss },
            rate_limit: RateLimit::Serialiser,
        }
    }
}

/// Request completion times of one side of the check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Completion {
    /// Requests completed within the measured time.
    pub completed: u64,
    /// Retransmissions sent by the clients in the measured time (or the whole run where
    /// the side cannot tell them apart).
    pub retransmissions: u64,
    /// Median completion time, seconds.
    pub p50_s: f64,
    /// 90th percentile, seconds.
    pub p90_s: f64,
    /// 99th percentile, seconds.
    pub p99_s: f64,
    /// Mean, seconds.
    pub mean_s: f64,
}

impl Completion {
    /// The summary of `times` (seconds, any order).
    pub fn of(times: &mut [f64], retransmissions: u64) -> Completion {
        times.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let i = ((times.len() as f64 - 1.0).max(0.0) * p).round() as usize;
            times.get(i).copied().unwrap_or(f64::NAN)
        };
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        Completion {
            completed: times.len() as u64,
            retransmissions,
            p50_s: q(0.5),
            p90_s: q(0.9),
            p99_s: q(0.99),
            mean_s: mean,
        }
    }
}
