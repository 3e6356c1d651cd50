//! A MAC experiment: one 802.15.4 medium driven by traffic sources on the medium's own clock,
//! keeping each offered datagram's confirm and each delivery. No simulator, no CoAP.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use covey_proto::{Duration, Instant};

use super::super::{Delivery, Medium, Packet};
use super::confirm::Confirm;
use super::medium::Ieee802154Medium;
use super::traffic::Offer;

/// One offered datagram and how its origin's MAC fared with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// What was offered, and when.
    pub offer: Offer,
    /// The origin's confirm.
    pub confirm: Confirm,
}

impl Outcome {
    /// Time from the offer to the confirm: queueing, backoffs, retries and the ACK.
    pub fn delay(&self) -> Duration {
        self.confirm.at - self.offer.at
    }

    /// Whether the next hop got the datagram.
    pub fn delivered(&self) -> bool {
        self.confirm.delivered()
    }
}

/// A boxed traffic source: any iterator of offers in time order.
type Source = Box<dyn Iterator<Item = Offer> + Send>;

/// An 802.15.4 medium, the sources that feed it, and what came of each offer.
///
/// Packets are numbered from 0 in offer order; send nothing else to the medium.
pub struct MacExperiment {
    medium: Ieee802154Medium,
    sources: Vec<Source>,
    /// Each source's next offer, earliest first, ties to the source added first.
    due: BinaryHeap<Reverse<(Instant, usize)>>,
    next_offer: Vec<Option<Offer>>,
    /// Offers awaiting their confirm, by packet.
    unconfirmed: HashMap<u64, Offer>,
    outcomes: Vec<Outcome>,
    deliveries: Vec<Delivery>,
    offered: u64,
    now: Instant,
}

impl std::fmt::Debug for MacExperiment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MacExperiment")
            .field("medium", &self.medium)
            .field("sources", &self.sources.len())
            .field("offered", &self.offered)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl MacExperiment {
    /// An experiment on `medium`, with confirms enabled and no sources yet.
    pub fn new(mut medium: Ieee802154Medium) -> Self {
        medium.enable_confirms();
        MacExperiment {
            medium,
            sources: Vec::new(),
            due: BinaryHeap::new(),
            next_offer: Vec::new(),
            unconfirmed: HashMap::new(),
            outcomes: Vec::new(),
            deliveries: Vec::new(),
            offered: 0,
            now: Instant::ZERO,
        }
    }

    /// Adds a source; an offer whose time has passed goes out at once.
    pub fn add_source(&mut self, source: impl Iterator<Item = Offer> + Send + 'static) {
        let index = self.sources.len();
        self.sources.push(Box::new(source));
        self.next_offer.push(None);
        self.pull(index);
    }

    /// Offers every datagram due at or before `until` and runs the medium to then.
    pub fn run_until(&mut self, until: Instant) {
        loop {
            let offer_at = self.due.peek().map(|Reverse((at, _))| *at);
            let event_at = self.medium.poll_timeout();
            let Some(next) = offer_at.into_iter().chain(event_at).min() else {
                break;
            };
            if next > until {
                break;
            }
            // The medium must reach `next` before anything is sent at `next`.
            self.now = self.now.max(next);
            self.medium.handle_timeout(self.now);
            while let Some(&Reverse((at, index))) = self.due.peek() {
                if at > self.now {
                    break;
                }
                self.due.pop();
                self.offer(index);
            }
            self.collect();
        }
        self.now = self.now.max(until);
    }

    /// Stops the sources and runs the medium until it is idle, so every offer is confirmed.
    pub fn finish(&mut self) {
        self.sources.clear();
        self.due.clear();
        self.next_offer.clear();
        while let Some(at) = self.medium.poll_timeout() {
            self.now = self.now.max(at);
            self.medium.handle_timeout(self.now);
            self.collect();
        }
    }

    /// Every confirmed offer, in confirm order.
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// Every delivery, in arrival order (a broadcast once per receiver).
    pub fn deliveries(&self) -> &[Delivery] {
        &self.deliveries
    }

    /// Datagrams offered so far.
    pub fn offered(&self) -> u64 {
        self.offered
    }

    /// Share of the offered datagrams delivered to their next hop, those not yet confirmed
    /// counting as undelivered; 0 before any offer.
    pub fn delivery_ratio(&self) -> f64 {
        let delivered = self.outcomes.iter().filter(|o| o.delivered()).count();
        if self.offered == 0 {
            return 0.0;
        }
        delivered as f64 / self.offered as f64
    }

    /// The medium's clock.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The medium, for its counters and stats.
    pub fn medium(&self) -> &Ieee802154Medium {
        &self.medium
    }

    /// The medium, to add frame error models or a drop trace.
    pub fn medium_mut(&mut self) -> &mut Ieee802154Medium {
        &mut self.medium
    }

    /// Takes `index`'s next offer from its source and schedules it.
    fn pull(&mut self, index: usize) {
        let offer = self.sources.get_mut(index).and_then(|s| s.next());
        if let (Some(offer), Some(slot)) = (offer, self.next_offer.get_mut(index)) {
            *slot = Some(offer);
            self.due.push(Reverse((offer.at.max(self.now), index)));
        }
    }

    /// Hands `index`'s pending offer to the medium and schedules the source's next one.
    fn offer(&mut self, index: usize) {
        let Some(mut offer) = self.next_offer.get_mut(index).and_then(Option::take) else {
            return;
        };
        offer.at = offer.at.max(self.now);
        let packet = self.offered;
        self.offered += 1;
        self.unconfirmed.insert(packet, offer);
        self.medium.send(
            offer.at,
            Packet {
                id: packet,
                from: offer.flow.from,
                to: offer.flow.to,
                payload_bytes: offer.flow.payload_bytes,
            },
        );
        self.pull(index);
    }

    /// Moves what the medium reported into the experiment's records.
    fn collect(&mut self) {
        while let Some(confirm) = self.medium.poll_confirm() {
            if let Some(offer) = self.unconfirmed.remove(&confirm.packet) {
                self.outcomes.push(Outcome { offer, confirm });
            }
        }
        while let Some(delivery) = self.medium.poll_delivery() {
            self.deliveries.push(delivery);
        }
        // Nobody keeps packet bytes here; drain so the medium's list does not grow.
        while self.medium.poll_released().is_some() {}
    }
}
