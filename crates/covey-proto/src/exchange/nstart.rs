//! The exchange layer's NSTART accounting (RFC 7252 §4.7): per peer, how many of our client
//! exchanges are in flight and the queue of those waiting for a slot.
//!
//! The queue is an intrusive FIFO through the exchange table: [`Nstart`] keeps its ends and
//! length and takes the exchanges it links as an argument; the client exchange table
//! (`exchange/client_table.rs`) owns it beside them. A peer with exchanges in flight or queued
//! may not be evicted; the endpoint asks [`Nstart::is_busy`] (through the table) when it makes
//! room.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::client_exchange::ExchangeKind;
    use alloc::vec;
    use covey_core::Token;

    fn exchange(peer: PeerKey) -> ClientExchange {
        crate::exchange::client_exchange::queued_for_test(
            peer,
            Token::default(),
            ExchangeKind::Request,
        )
    }

    /// A peer key, from a slab standing in for the peer table.
    fn peer_keys(n: usize) -> (Slab<()>, Vec<PeerKey>) {
        let mut peers = Slab::with_capacity(n);
        let keys = (0..n).map(|_| peers.insert(()).unwrap()).collect();
        (peers, keys)
    }

    /// `n` exchanges queued for `peer`, with room for one more.
    fn queue(n: usize, peer: PeerKey) -> (Nstart, Slab<ClientExchange>, Vec<SlabKey>) {
        let (mut nstart, mut exchanges) = (Nstart::default(), Slab::with_capacity(n + 1));
        let keys: Vec<SlabKey> = (0..n)
            .map(|_| exchanges.insert(exchange(peer)).unwrap())
            .collect();
        for &k in &keys {
            nstart.enqueue(&mut exchanges, peer, k);
        }
        (nstart, exchanges, keys)
    }

    fn drain(
        nstart: &mut Nstart,
        exchanges: &mut Slab<ClientExchange>,
        peer: PeerKey,
    ) -> Vec<SlabKey> {
        let mut started = vec![];
        while let Some(k) = nstart.next_to_start(exchanges, peer, usize::MAX) {
            started.push(k);
        }
        started
    }

    #[test]
    fn queued_exchanges_start_in_order_while_slots_are_free() {
        let (_peers, p) = peer_keys(1);
        let (mut nstart, mut exchanges, keys) = queue(3, p[0]);
        assert_eq!(nstart.queued(p[0]), 3);
        assert!(!nstart.may_start(p[0], 1));
        nstart.count(p[0]);
        assert_eq!(nstart.next_to_start(&mut exchanges, p[0], 1), None);
        assert_eq!(nstart.next_to_start(&mut exchanges, p[0], 2), Some(keys[0]));
        nstart.uncount(p[0]);
        assert_eq!(drain(&mut nstart, &mut exchanges, p[0]), keys[1..]);
        assert_eq!(nstart.queued(p[0]), 0);
        assert!(nstart.may_start(p[0], 1));
        assert!(!nstart.is_busy(p[0]));
    }

    #[test]
    fn unlinking_keeps_the_rest_of_the_queue_in_order() {
        let (_peers, p) = peer_keys(1);
        for gone in 0..3 {
            let (mut nstart, mut exchanges, keys) = queue(3, p[0]);
            let next = exchanges.get(keys[gone]).unwrap().next_queued;
            nstart.unlink(&mut exchanges, p[0], keys[gone], next);
            assert_eq!(nstart.queued(p[0]), 2);
            let rest: Vec<SlabKey> = keys.iter().copied().filter(|&k| k != keys[gone]).collect();
            let more = exchanges.insert(exchange(p[0])).unwrap();
            nstart.enqueue(&mut exchanges, p[0], more);
            let mut expected = rest;
            expected.push(more);
            assert_eq!(drain(&mut nstart, &mut exchanges, p[0]), expected);
        }
    }

    #[test]
    fn unlinking_an_exchange_not_queued_changes_nothing() {
        let (_peers, p) = peer_keys(1);
        let (mut nstart, mut exchanges, keys) = queue(2, p[0]);
        let waiting = exchanges.insert(exchange(p[0])).unwrap();
        nstart.unlink(&mut exchanges, p[0], waiting, None);
        assert_eq!(nstart.queued(p[0]), 2);
        assert_eq!(drain(&mut nstart, &mut exchanges, p[0]), keys);
    }

    #[test]
    fn peers_keep_apart_and_a_new_peer_at_a_reused_index_starts_empty() {
        let (mut peers, p) = peer_keys(2);
        let mut nstart = Nstart::default();
        nstart.count(p[1]);
        assert!(nstart.is_busy(p[1]) && !nstart.is_busy(p[0]));
        assert_eq!(nstart.in_flight(p[1]), 1);
        peers.remove(p[1]);
        let again = peers.insert(()).unwrap();
        assert_eq!(again.index(), p[1].index());
        assert_eq!(nstart.in_flight(again), 0);
        assert!(!nstart.is_busy(again));
        nstart.uncount(again);
        assert_eq!(nstart.in_flight(again), 0);
        assert_eq!(nstart.in_flight(p[1]), 0);
    }

    #[test]
    fn a_queue_being_started_is_not_started_again_from_inside() {
        let (_peers, p) = peer_keys(2);
        let mut nstart = Nstart::default();
        let outer = nstart.start_starting(p[0]).unwrap();
        assert_eq!(nstart.start_starting(p[0]), None);
        let inner = nstart.start_starting(p[1]).unwrap();
        assert_eq!(inner, Some(p[0]));
        nstart.stop_starting(inner);
        assert_eq!(nstart.start_starting(p[0]), None);
        nstart.stop_starting(outer);
        assert!(nstart.start_starting(p[0]).is_some());
    }
}
