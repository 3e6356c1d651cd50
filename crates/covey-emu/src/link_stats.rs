//! What the forwarder counts beyond flows: each direction's link counters, its own drops,
//! and how late it wrote packets against their modelled arrival times (its precision).

use covey_proto::Duration;
use covey_sim::media::{Link, LossCause};
use serde::Serialize;

/// One direction's counts, copied from its link model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DirectionStats {
    /// Packets offered to the direction.
    pub packets_sent: u64,
    /// Packets that arrived.
    pub packets_delivered: u64,
    /// Bytes serialised (whole IP packets).
    pub bytes_on_wire: u64,
    /// Packets dropped by the full drop-tail queue.
    pub lost_queue_full: u64,
    /// Packets dropped by the loss model.
    pub lost_channel: u64,
}

impl DirectionStats {
    /// The counts of `link` now.
    pub fn of(link: &Link) -> DirectionStats {
        let s = link.stats();
        DirectionStats {
            packets_sent: s.packets_sent,
            packets_delivered: s.packets_delivered,
            bytes_on_wire: s.bytes_on_wire,
            lost_queue_full: s.losses_of(LossCause::QueueFull),
            lost_channel: s.losses_of(LossCause::Channel),
        }
    }
}

/// Width of one lateness bucket.
const BUCKET_NANOS: u64 = 5_000;
/// Buckets; later writes than `BUCKETS × 5 µs` share the last one.
const BUCKETS: usize = 400;

/// A histogram of write lateness (actual write time minus modelled arrival), in 5 µs
/// buckets up to 2 ms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lateness {
    #[serde(skip)]
    buckets: Vec<u64>,
    count: u64,
    sum_nanos: u64,
    max_nanos: u64,
}

impl Default for Lateness {
    fn default() -> Lateness {
        Lateness {
            buckets: vec![0; BUCKETS],
            count: 0,
            sum_nanos: 0,
            max_nanos: 0,
        }
    }
}

impl Lateness {
    /// Adds one write that was `late`.
    pub fn record(&mut self, late: Duration) {
        let nanos = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        let bucket = usize::try_from(nanos / BUCKET_NANOS).unwrap_or(BUCKETS - 1);
        self.buckets[bucket.min(BUCKETS - 1)] += 1;
        self.count += 1;
        self.sum_nanos = self.sum_nanos.saturating_add(nanos);
        self.max_nanos = self.max_nanos.max(nanos);
    }

    /// Writes recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean lateness.
    pub fn mean(&self) -> Duration {
        Duration::from_nanos(self.sum_nanos.checked_div(self.count).unwrap_or(0))
    }

    /// The largest lateness.
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max_nanos)
    }

    /// The upper edge of the bucket holding quantile `q` (0–1) of the writes: an upper bound
    /// on `covey_sim::stats::quantile` of the same samples, which the forwarder does not keep
    /// (its memory stays fixed however long it runs).
    pub fn quantile_bound(&self, q: f64) -> Duration {
        let target = (q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target.max(1) {
                return Duration::from_nanos((i as u64 + 1) * BUCKET_NANOS);
            }
        }
        self.max()
    }
}

/// Forwarder-wide counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ForwarderStats {
    /// Packets written to their receiver.
    pub forwarded: u64,
    /// Packets to no node of the testbed (or not IPv4), dropped.
    pub unroutable: u64,
    /// Packets dropped because every packet slot was in use.
    pub pool_exhausted: u64,
    /// Packets the receiving TUN device refused.
    pub write_failed: u64,
    /// Packets held (queued, serialising or propagating) now.
    pub packets_held: u64,
    /// How late packets were written against their modelled arrival.
    pub lateness: Lateness,
    /// Whether the forwarder runs under SCHED_FIFO.
    pub realtime: bool,
    /// CPU time the forwarder thread has used, nanoseconds.
    pub cpu_nanos: u64,
}

impl ForwarderStats {
    /// The forwarder's CPU time per forwarded packet: what it costs, whatever else runs.
    pub fn cpu_per_packet(&self) -> Option<Duration> {
        self.cpu_nanos
            .checked_div(self.forwarded)
            .map(Duration::from_nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles_come_from_the_histogram() {
        let mut l = Lateness::default();
        for us in [1, 2, 3, 4, 12, 12, 12, 12, 12, 3000] {
            l.record(Duration::from_micros(us));
        }
        assert_eq!(l.count(), 10);
        assert_eq!(l.quantile_bound(0.4), Duration::from_micros(5));
        assert_eq!(l.quantile_bound(0.5), Duration::from_micros(15));
        assert_eq!(
            l.quantile_bound(1.0),
            Duration::from_micros(2000),
            "last bucket"
        );
        assert_eq!(l.max(), Duration::from_micros(3000));
        assert_eq!(l.mean(), Duration::from_nanos(307_000));
    }
}
