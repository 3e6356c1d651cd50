//! MAC-level traffic sources: what a node offers its MAC, and when, with no CoAP engine
//! behind it.
//!
//! A source is any iterator of [`Offer`]s in time order; [`PoissonSource`] and
//! [`PeriodicSource`] are the usual two, and a recorded trace (`Vec<Offer>`) works as well.
//! A [`MacExperiment`](super::MacExperiment) owns the medium and the sources, offers each
//! datagram at its time and keeps every outcome. Ten senders of 50-byte datagrams at 5 per
//! second, with ACKs, to one sink that all of them hear:
//!
//! ```
//! use covey_sim::media::ieee802154::{
//!     Flow, Ieee802154Config, Ieee802154Medium, MacExperiment, PoissonSource, Topology,
//! };
//! use covey_proto::Instant;
//!
//! let medium = Ieee802154Medium::new(Ieee802154Config::default(), Topology::full_mesh(11));
//! let mut experiment = MacExperiment::new(medium);
//! for sender in 1..=10 {
//!     let flow = Flow::unicast(sender, 0, 50);
//!     experiment.add_source(PoissonSource::new(flow, 5.0, sender as u64));
//! }
//! experiment.run_until(Instant::from_secs(60));
//! experiment.finish(); // let the queued datagrams play out
//! let delivered = experiment.outcomes().iter().filter(|o| o.delivered()).count();
//! println!("{delivered} of {} delivered", experiment.offered());
//! println!("{:?}", experiment.medium().total_counters().drops);
//! ```

use covey_proto::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::{Destination, NodeId};

/// What a source sends: from which node, to where, how large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// The sending node.
    pub from: NodeId,
    /// The receiver(s).
    pub to: Destination,
    /// Bytes of each datagram's payload; the medium adds its header model's bytes.
    pub payload_bytes: usize,
}

impl Flow {
    /// Datagrams of `payload_bytes` from `from` to node `to`.
    pub fn unicast(from: NodeId, to: NodeId, payload_bytes: usize) -> Self {
        Flow {
            from,
            to: Destination::Node(to),
            payload_bytes,
        }
    }

    /// Datagrams of `payload_bytes` that `from` broadcasts.
    pub fn broadcast(from: NodeId, payload_bytes: usize) -> Self {
        Flow {
            from,
            to: Destination::Broadcast,
            payload_bytes,
        }
    }
}

/// One datagram a source offers its MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// When it is handed to the MAC.
    pub at: Instant,
    /// Sender, receiver and size.
    pub flow: Flow,
}

/// Offers at exponentially distributed gaps: a Poisson process of a given rate.
#[derive(Debug, Clone)]
pub struct PoissonSource {
    flow: Flow,
    rate_per_s: f64,
    last: Instant,
    rng: Xoshiro256PlusPlus,
}

impl PoissonSource {
    /// `rate_per_s` datagrams a second on average from time zero, the gaps drawn from `seed`'s
    /// own stream; a rate that is not positive and finite offers nothing.
    pub fn new(flow: Flow, rate_per_s: f64, seed: u64) -> Self {
        PoissonSource {
            flow,
            rate_per_s,
            last: Instant::ZERO,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }
}

impl Iterator for PoissonSource {
    type Item = Offer;

    fn next(&mut self) -> Option<Offer> {
        if !(self.rate_per_s > 0.0 && self.rate_per_s.is_finite()) {
            return None;
        }
        // 1 − u lies in (0, 1], so the logarithm is finite.
        let u: f64 = self.rng.random();
        let gap_s = -(1.0 - u).ln() / self.rate_per_s;
        let gap = Duration::try_from_secs_f64(gap_s).unwrap_or(Duration::MAX);
        self.last = self.last + gap;
        Some(Offer {
            at: self.last,
            flow: self.flow,
        })
    }
}

/// Offers one datagram every `period` from a first instant on.
#[derive(Debug, Clone)]
pub struct PeriodicSource {
    flow: Flow,
    period: Duration,
    next: Instant,
}

impl PeriodicSource {
    /// One datagram at `first` and every `period` after; a zero period offers nothing.
    pub fn new(flow: Flow, period: Duration, first: Instant) -> Self {
        PeriodicSource {
            flow,
            period,
            next: first,
        }
    }
}

impl Iterator for PeriodicSource {
    type Item = Offer;

    fn next(&mut self) -> Option<Offer> {
        if self.period.is_zero() {
            return None;
        }
        let at = self.next;
        self.next = at + self.period;
        Some(Offer {
            at,
            flow: self.flow,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_gaps_average_the_inverse_rate() {
        let source = PoissonSource::new(Flow::unicast(1, 0, 50), 20.0, 3);
        let offers: Vec<Offer> = source.take(20_000).collect();
        assert!(offers.windows(2).all(|w| w[0].at <= w[1].at));
        let last = offers.last().map_or(0.0, |o| o.at.as_nanos() as f64 / 1e9);
        let mean_gap = last / offers.len() as f64;
        // 20 000 exponential gaps: the standard error of the mean is 0.7 %.
        assert!((mean_gap - 0.05).abs() < 0.05 * 0.03, "{mean_gap}");
    }

    #[test]
    fn poisson_source_repeats_with_its_seed() {
        let times = |seed| {
            PoissonSource::new(Flow::broadcast(2, 10), 5.0, seed)
                .take(50)
                .map(|o| o.at)
                .collect::<Vec<_>>()
        };
        assert_eq!(times(1), times(1));
        assert_ne!(times(1), times(2));
        assert_eq!(
            PoissonSource::new(Flow::broadcast(2, 10), 0.0, 1).next(),
            None
        );
    }

    #[test]
    fn periodic_source_offers_on_its_grid() {
        let source = PeriodicSource::new(
            Flow::unicast(1, 0, 20),
            Duration::from_millis(250),
            Instant::from_millis(10),
        );
        let times: Vec<u64> = source
            .take(4)
            .map(|o| o.at.as_nanos() / 1_000_000)
            .collect();
        assert_eq!(times, vec![10, 260, 510, 760]);
        let stalled = PeriodicSource::new(Flow::unicast(1, 0, 20), Duration::ZERO, Instant::ZERO);
        assert_eq!(stalled.count(), 0);
    }
}
