//! The exchange layer's NSTART accounting (RFC 7252 §4.7): per peer, how many of our client
//! exchanges are in flight and the queue of those waiting for a slot.
//!
//! The queue is an intrusive FIFO through the exchange table: [`Nstart`] keeps its ends and
//! length and takes the exchanges it links as an argument. A peer with exchanges in flight or
//! queued may not be evicted; the endpoint asks [`Nstart::is_busy`] when it makes room.

use crate::exchange::client_exchange::ClientExchange;
use crate::message::peer::PeerKey;
use crate::storage::slab::{Slab, SlabKey};
use alloc::vec::Vec;

/// One peer's NSTART state, at the index of the peer's key.
#[derive(Debug, Clone, Copy, Default)]
struct PeerSlots {
    /// The peer the state is for; the state of any other key at this index is empty.
    peer: Option<PeerKey>,
    /// Exchanges counting against NSTART.
    in_flight: usize,
    /// Exchanges waiting for an NSTART slot, oldest first.
    head: Option<SlabKey>,
    tail: Option<SlabKey>,
    len: usize,
}

/// Every peer's NSTART state: slots are created as peer keys first need them, as the peer
/// table's own are, and reused by the peer that takes the key's index next.
#[derive(Debug, Default)]
pub(crate) struct Nstart {
    peers: Vec<PeerSlots>,
    /// The peer whose queue is being started now: a queued request that fails as it
    /// starts does not start the queue again from inside (the running loop goes on).
    starting: Option<PeerKey>,
}

impl Nstart {
    fn slots(&self, peer: PeerKey) -> PeerSlots {
        match self.peers.get(peer.index()) {
            Some(s) if s.peer == Some(peer) => *s,
            _ => PeerSlots::default(),
        }
    }

    fn slots_mut(&mut self, peer: PeerKey) -> &mut PeerSlots {
        let index = peer.index();
        if index >= self.peers.len() {
            self.peers.resize(index + 1, PeerSlots::default());
        }
        let slots = &mut self.peers[index];
        if slots.peer != Some(peer) {
            *slots = PeerSlots {
                peer: Some(peer),
                ..PeerSlots::default()
            };
        }
        slots
    }

    /// The number of exchanges to `peer` counting against NSTART.
    pub fn in_flight(&self, peer: PeerKey) -> usize {
        self.slots(peer).in_flight
    }

    /// The number of exchanges to `peer` waiting for an NSTART slot.
    pub fn queued(&self, peer: PeerKey) -> usize {
        self.slots(peer).len
    }

    /// Whether an exchange to `peer` may start at once: a slot is free and none is waiting.
    pub fn may_start(&self, peer: PeerKey, nstart: usize) -> bool {
        let s = self.slots(peer);
        s.in_flight < nstart && s.head.is_none()
    }

    /// An exchange to `peer` is in flight or queued, so the peer must stay.
    pub fn is_busy(&self, peer: PeerKey) -> bool {
        let s = self.slots(peer);
        s.in_flight != 0 || s.len != 0
    }

    /// One more exchange to `peer` counts against NSTART.
    pub fn count(&mut self, peer: PeerKey) {
        self.slots_mut(peer).in_flight += 1;
    }

    /// One exchange to `peer` no longer counts against NSTART.
    pub fn uncount(&mut self, peer: PeerKey) {
        let s = self.slots_mut(peer);
        s.in_flight = s.in_flight.saturating_sub(1);
    }

    /// Appends exchange `key` to `peer`'s queue.
    pub fn enqueue(&mut self, exchanges: &mut Slab<ClientExchange>, peer: PeerKey, key: SlabKey) {
        let s = self.slots_mut(peer);
        let tail = s.tail.replace(key);
        if tail.is_none() {
            s.head = Some(key);
        }
        s.len += 1;
        if let Some(t) = tail.and_then(|t| exchanges.get_mut(t)) {
            t.next_queued = Some(key);
        }
    }

    /// Takes exchange `key` out of `peer`'s queue, linking its predecessor to `next`.
    pub fn unlink(
        &mut self,
        exchanges: &mut Slab<ClientExchange>,
        peer: PeerKey,
        key: SlabKey,
        next: Option<SlabKey>,
    ) {
        let mut prev: Option<SlabKey> = None;
        let mut cursor = self.slots(peer).head;
        while let Some(c) = cursor {
            if c == key {
                break;
            }
            prev = Some(c);
            cursor = exchanges.get(c).and_then(|e| e.next_queued);
        }
        if cursor != Some(key) {
            return; // not in the queue (waiting for a message ID)
        }
        let s = self.slots_mut(peer);
        match prev {
            Some(pk) => {
                if let Some(pe) = exchanges.get_mut(pk) {
                    pe.next_queued = next;
                }
            }
            None => s.head = next,
        }
        if s.tail == Some(key) {
            s.tail = prev;
        }
        s.len = s.len.saturating_sub(1);
    }

    /// Takes the oldest exchange waiting in `peer`'s queue out of it, if a slot is free.
    pub fn next_to_start(
        &mut self,
        exchanges: &mut Slab<ClientExchange>,
        peer: PeerKey,
        nstart: usize,
    ) -> Option<SlabKey> {
        let s = self.slots(peer);
        if s.in_flight >= nstart {
            return None;
        }
        let head = s.head?;
        let next = exchanges.get(head).and_then(|e| e.next_queued);
        let s = self.slots_mut(peer);
        s.head = next;
        if next.is_none() {
            s.tail = None;
        }
        s.len = s.len.saturating_sub(1);
        if let Some(e) = exchanges.get_mut(head) {
            e.next_queued = None;
        }
        Some(head)
    }

    /// Marks `peer`'s queue as being started; `None` when it already is, else the peer
    /// whose queue was being started before, for [`Nstart::stop_starting`].
    pub fn start_starting(&mut self, peer: PeerKey) -> Option<Option<PeerKey>> {
        if self.starting == Some(peer) {
            return None;
        }
        Some(self.starting.replace(peer))
    }

    /// Restores the queue being started before [`Nstart::start_starting`].
    pub fn stop_starting(&mut self, outer: Option<PeerKey>) {
        self.starting = outer;
    }
}
