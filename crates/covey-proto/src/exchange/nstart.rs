//! Per-peer queues of client exchanges waiting for an NSTART slot (RFC 7252 §4.7).

use crate::endpoint::Endpoint;
use crate::message::peer::PeerKey;
use crate::storage::slab::SlabKey;
use crate::Instant;

impl Endpoint {
    /// Appends exchange `key` to `peer`'s queue.
    pub(crate) fn enqueue(&mut self, peer: PeerKey, key: SlabKey) {
        let Some(mut queue) = self.peers.nstart_queue(peer) else {
            return;
        };
        let tail = queue.tail.replace(key);
        if tail.is_none() {
            queue.head = Some(key);
        }
        queue.len += 1;
        self.peers.set_nstart_queue(peer, queue);
        if let Some(t) = tail.and_then(|t| self.exchanges.get_mut(t)) {
            t.next_queued = Some(key);
        }
    }

    /// Takes exchange `key` out of `peer`'s queue, linking its predecessor to `next`.
    pub(crate) fn unlink_queued(&mut self, peer: PeerKey, key: SlabKey, next: Option<SlabKey>) {
        let Some(mut queue) = self.peers.nstart_queue(peer) else {
            return;
        };
        let mut prev: Option<SlabKey> = None;
        let mut cursor = queue.head;
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
            None => queue.head = next,
        }
        if queue.tail == Some(key) {
            queue.tail = prev;
        }
        queue.len = queue.len.saturating_sub(1);
        self.peers.set_nstart_queue(peer, queue);
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
            let Some(mut queue) = self.peers.nstart_queue(peer) else {
                return;
            };
            if self.peers.in_flight(peer) >= nstart {
                return;
            }
            let Some(head) = queue.head else {
                return;
            };
            let next = self.exchanges.get(head).and_then(|e| e.next_queued);
            queue.head = next;
            if next.is_none() {
                queue.tail = None;
            }
            queue.len = queue.len.saturating_sub(1);
            self.peers.set_nstart_queue(peer, queue);
            if let Some(e) = self.exchanges.get_mut(head) {
                e.next_queued = None;
            }
            self.begin_exchange(now, head);
        }
    }
}
