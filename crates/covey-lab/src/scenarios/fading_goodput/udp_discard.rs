//! The paper's way of injecting errors (its §6.5): the radio delivers the datagram, then the
//! receiver's UDP layer discards it when the next number of a fixed random sequence is at or
//! below the application-layer error rate C_f of its fragment count f.
//!
//! A [`Medium`] wrapper, so the radio's timing (CSMA/CA, fragments, ACKs) stays that of the
//! medium underneath while the losses are exactly the paper's. Without a model it only counts
//! the datagrams received per fragment count.

use std::collections::HashMap;

use covey_proto::Instant;
use covey_sim::media::fading::PaperFadingModel;
use covey_sim::media::{Delivery, Medium, MediumStats, Packet};
use covey_sim::sim::SimRng;
use rand::Rng;

use crate::scenarios::one_hop::LinkFormat;

/// Datagrams received and discarded per fragment count, index f (0 unused).
pub type DiscardCounts = Vec<(u64, u64)>;

/// A medium whose deliveries pass the paper's UDP-layer error draw.
pub struct UdpDiscard<M> {
    inner: M,
    link: LinkFormat,
    model: Option<PaperFadingModel>,
    sequence: SimRng,
    payload_of: HashMap<u64, usize>,
    counts: DiscardCounts,
    most_fragments_sent: usize,
}

impl<M> std::fmt::Debug for UdpDiscard<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpDiscard")
            .field("model", &self.model)
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl<M: Medium> UdpDiscard<M> {
    /// Wraps `inner`; `sequence` is the random sequence compared with C_f of `model`
    /// (`None`: discard nothing).
    pub fn new(
        inner: M,
        link: LinkFormat,
        model: Option<PaperFadingModel>,
        sequence: SimRng,
    ) -> Self {
        UdpDiscard {
            inner,
            link,
            model,
            sequence,
            payload_of: HashMap::new(),
            counts: Vec::new(),
            most_fragments_sent: 0,
        }
    }

    /// The wrapped medium.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// (received, discarded) datagrams per fragment count f (index f).
    pub fn counts(&self) -> &DiscardCounts {
        &self.counts
    }

    /// Fragments of the largest datagram handed to the medium.
    pub fn most_fragments_sent(&self) -> usize {
        self.most_fragments_sent
    }

    /// Datagrams discarded in all.
    pub fn discarded(&self) -> u64 {
        self.counts.iter().map(|c| c.1).sum()
    }
}

impl<M: Medium> Medium for UdpDiscard<M> {
    fn send(&mut self, now: Instant, packet: Packet) {
        self.payload_of.insert(packet.id, packet.payload_bytes);
        let f = self.link.fragments(packet.payload_bytes);
        self.most_fragments_sent = self.most_fragments_sent.max(f);
        self.inner.send(now, packet);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        while let Some(delivery) = self.inner.poll_delivery() {
            let payload = self.payload_of.get(&delivery.id).copied().unwrap_or(0);
            let f = self.link.fragments(payload);
            if self.counts.len() <= f {
                self.counts.resize(f + 1, (0, 0));
            }
            let discard = match self.model {
                Some(model) => {
                    let loss = model.datagram_loss(u32::try_from(f).unwrap_or(u32::MAX));
                    let drawn: f64 = self.sequence.random();
                    drawn <= loss
                }
                None => false,
            };
            if let Some(c) = self.counts.get_mut(f) {
                c.0 += 1;
                c.1 += u64::from(discard);
            }
            if !discard {
                return Some(delivery);
            }
        }
        None
    }

    fn stats(&self) -> &MediumStats {
        self.inner.stats()
    }

    fn poll_released(&mut self) -> Option<u64> {
        let id = self.inner.poll_released()?;
        self.payload_of.remove(&id);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use covey_sim::media::ieee802154::{Ieee802154Config, Ieee802154Medium, Topology};
    use covey_sim::media::Destination;
    use rand::SeedableRng;

    #[test]
    fn discards_at_the_rate_of_table_4() {
        let link = LinkFormat::default();
        let config = Ieee802154Config {
            queue_capacity_frames: 16,
            ..Ieee802154Config::default()
        };
        let medium = Ieee802154Medium::new(config, Topology::full_mesh(2));
        let Some(model) = PaperFadingModel::at_snr_db(1.0) else {
            panic!("1 dB is one of the paper's SNRs");
        };
        let mut m = UdpDiscard::new(medium, link, Some(model), SimRng::seed_from_u64(5));
        let payload = link.full_payload(3).unwrap_or(0);
        let n = 4000u64;
        let mut at = Instant::ZERO;
        let mut delivered = 0u64;
        for id in 0..n {
            let to = Destination::Node(1);
            m.send(
                at,
                Packet {
                    id,
                    from: 0,
                    to,
                    payload_bytes: payload,
                },
            );
            while let Some(next) = m.poll_timeout() {
                m.handle_timeout(next);
                at = next;
                while m.poll_delivery().is_some() {
                    delivered += 1;
                }
            }
        }
        let expected = model.datagram_loss(3);
        let measured = 1.0 - delivered as f64 / n as f64;
        let sigma = (expected * (1.0 - expected) / n as f64).sqrt();
        assert!(
            (measured - expected).abs() < 4.0 * sigma,
            "{measured} vs {expected}"
        );
        assert_eq!(m.counts().get(3).map(|c| c.0), Some(n));
        assert_eq!(m.discarded(), n - delivered);
    }
}
