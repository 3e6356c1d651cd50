//! What is on the air: recent transmissions, against which CCA and receptions are judged.

use covey_proto::{Duration, Instant};

use super::super::NodeId;
use super::topology::Topology;

/// One transmission (data frame or ACK) on the air over [start, end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmission {
    /// The transmitting node.
    pub from: NodeId,
    /// First bit.
    pub start: Instant,
    /// After the last bit.
    pub end: Instant,
}

impl Transmission {
    fn overlaps(&self, start: Instant, end: Instant) -> bool {
        self.start < end && start < self.end
    }
}

/// Transmissions that started recently enough to matter to a CCA or a reception in progress.
#[derive(Debug, Clone, Default)]
pub struct AirLog {
    transmissions: Vec<Transmission>,
}

impl AirLog {
    /// Records a transmission.
    pub fn record(&mut self, transmission: Transmission) {
        self.transmissions.push(transmission);
    }

    /// Forgets transmissions that ended more than `keep` before `now`; no frame lasts that
    /// long, so none of them can overlap a CCA or a frame still to be judged.
    pub fn prune(&mut self, now: Instant, keep: Duration) {
        self.transmissions
            .retain(|t| t.end.saturating_add(keep) >= now);
    }

    /// Transmissions on the air during part of [start, end).
    pub fn overlapping(
        &self,
        start: Instant,
        end: Instant,
    ) -> impl Iterator<Item = &Transmission> + '_ {
        self.transmissions
            .iter()
            .filter(move |t| t.overlaps(start, end))
    }

    /// Whether `node` is transmitting at `at`.
    pub fn transmitting(&self, node: NodeId, at: Instant) -> bool {
        self.transmissions
            .iter()
            .any(|t| t.from == node && t.start <= at && at < t.end)
    }

    /// Whether a transmission other than `except`, by `listener` itself or by a node it hears,
    /// was on the air during part of [start, end).
    pub fn busy(
        &self,
        topology: &Topology,
        listener: NodeId,
        start: Instant,
        end: Instant,
        except: Option<&Transmission>,
    ) -> bool {
        self.transmissions.iter().any(|t| {
            Some(t) != except
                && (t.from == listener || topology.hears(listener, t.from))
                && t.overlaps(start, end)
        })
    }

    /// Whether `listener` is receiving at `at`: a transmission by another node it hears is on
    /// the air (Contiki's `NETSTACK_RADIO.receiving_packet()`).
    pub fn receiving(&self, topology: &Topology, listener: NodeId, at: Instant) -> bool {
        self.transmissions.iter().any(|t| {
            t.from != listener && topology.hears(listener, t.from) && t.start <= at && at < t.end
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::from_nanos(n * 1000)
    }

    #[test]
    fn only_audible_overlapping_transmissions_make_the_channel_busy() {
        // 0 hears 1; 2 is out of 0's range.
        let topology = Topology::from_links(3, &[(0, 1), (1, 2)]).expect("a valid topology");
        let mut air = AirLog::default();
        let own = Transmission {
            from: 1,
            start: us(0),
            end: us(100),
        };
        air.record(own);
        air.record(Transmission {
            from: 2,
            start: us(50),
            end: us(150),
        });
        assert!(air.busy(&topology, 0, us(90), us(95), None));
        assert!(
            !air.busy(&topology, 0, us(100), us(140), None),
            "2 is hidden from 0"
        );
        assert!(
            air.busy(&topology, 1, us(0), us(100), Some(&own)),
            "1 is deaf while 2 sends"
        );
        assert!(!air.busy(&topology, 0, us(0), us(100), Some(&own)));
    }
}
