//! Per-peer queues of client exchanges waiting for an NSTART slot (RFC 7252 §4.7).

use crate::endpoint::Endpoint;
use crate::message::peer::PeerKey;
use crate::storage::slab::SlabKey;
use crate::Instant;

impl Endpoint {
    /// Appends exchange `key` to `peer`'s queue.
    pub(crate) fn enqueue(&mut self, peer: PeerKey, key: SlabKey) {
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        let tail = p.queue_tail.replace(key);
        if tail.is_none() {
            p.queue_head = Some(key);
        }
        p.queue_len += 1;
        if let Some(t) = tail.and_then(|t| self.exchanges.get_mut(t)) {
            t.next_queued = Some(key);
        }
    }

    /// Takes exchange `key` out of `peer`'s queue, linking its predecessor to `next`.
    pub(crate) fn unlink_queued(&mut self, peer: PeerKey, key: SlabKey, next: Option<SlabKey>) {
        let Some(p) = self.peers.get(peer) else {
            return;
        };
        let mut prev: Option<SlabKey> = None;
        let mut cursor = p.queue_head;
        while let Some(c) = cursor {
            if c == key {
                break;
            }
            prev = Some(c);
            cursor = self.exchanges.get(c).and_then(|e| e.next_queued);
        }
        if cursor != Some(key) {
            return; // not in the queue (waiting for a message ID)
        }
        match prev {
            Some(pk) => {
                if let Some(pe) = self.exchanges.get_mut(pk) {
                    pe.next_queued = next;
                }
            }
            None => {
                if let Some(p) = self.peers.get_mut(peer) {
                    p.queue_head = next;
                }
            }
        }
        if let Some(p) = self.peers.get_mut(peer) {
            if p.queue_tail == Some(key) {
                p.queue_tail = prev;
            }
            p.queue_len = p.queue_len.saturating_sub(1);
        }
    }

    /// Starts queued exchanges while the peer has free NSTART slots.
    pub(crate) fn start_queued(&mut self, now: Instant, peer: PeerKey) {
        if self.starting_queue_of == Some(peer) {
            return;
        }
        let outer = self.starting_queue_of.replace(peer);
        self.start_queued_of(now, peer);
        self.starting_queue_of = outer;
    }

    fn start_queued_of(&mut self, now: Instant, peer: PeerKey) {
        let nstart = self.config.transmission.nstart;
        loop {
            let Some(p) = self.peers.get_mut(peer) else {
                return;
            };
            if p.in_flight >= nstart {
                return;
            }
            let Some(head) = p.queue_head else {
                return;
            };
            let next = self.exchanges.get(head).and_then(|e| e.next_queued);
            if let Some(p) = self.peers.get_mut(peer) {
                p.queue_head = next;
                if next.is_none() {
                    p.queue_tail = None;
                }
                p.queue_len = p.queue_len.saturating_sub(1);
            }
            if let Some(e) = self.exchanges.get_mut(head) {
                e.next_queued = None;
            }
            self.begin_exchange(now, head);
        }
    }
}
