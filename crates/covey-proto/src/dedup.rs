//! Message deduplication (RFC 7252 §4.5), keyed by (peer, message ID) and confirmed by a
//! fingerprint of the datagram: a peer that reuses a message ID for a different message is
//! served afresh, so deduplication never caps a peer's message rate.

use crate::event::IncomingId;
use crate::hash::{map_with_capacity, Map};
use crate::reply_cache::ReplyRef;
use crate::Instant;
use alloc::vec;
use alloc::vec::Vec;

/// What was done with the first copy of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DedupState {
    /// A CON request the application is still handling.
    Processing(IncomingId),
    /// A CON request answered with an empty ACK; the response follows separately.
    EmptyAcked,
    /// A CON answered with this cached ACK or RST.
    Replied(ReplyRef),
    /// A message whose duplicates are ignored (NON, or a CON answered by the message layer
    /// with nothing to resend).
    Ignore,
}

pub(crate) type DedupKey = crate::hash::MidKey;

/// Where an entry lives, so its state can change without hashing the key again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DedupHandle(u64);

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: DedupKey,
    fingerprint: u64,
    state: DedupState,
    expires: Instant,
    /// Position in insertion order; a slot whose entry was replaced holds a newer one.
    sequence: u64,
}

/// Bounded table of recently seen messages: a ring of entries in insertion order (the oldest
/// goes first when full or expired) and a map from key to ring position.
#[derive(Debug)]
pub(crate) struct DedupCache {
    map: Map<DedupKey, u64>,
    ring: Vec<Option<Entry>>,
    /// Sequence number of the oldest entry still in the ring, and of the next one.
    oldest: u64,
    next: u64,
}

impl DedupCache {
    pub fn new(capacity: usize, seed: u64) -> DedupCache {
        let capacity = capacity.max(1);
        DedupCache {
            map: map_with_capacity(capacity, seed),
            ring: vec![None; capacity],
            oldest: 0,
            next: 0,
        }
    }

    fn slot(&self, sequence: u64) -> Option<&Entry> {
        self.ring[(sequence % self.ring.len() as u64) as usize]
            .as_ref()
            .filter(|e| e.sequence == sequence)
    }

    /// The state of an earlier copy of this exact message, if remembered.
    pub fn lookup(&self, key: &DedupKey, fingerprint: u64) -> Option<DedupState> {
        let &sequence = self.map.get(key)?;
        self.slot(sequence)
            .filter(|e| e.fingerprint == fingerprint)
            .map(|e| e.state)
    }

    /// Remembers a new message until `expires`, replacing any entry with the same key.
    pub fn insert(
        &mut self,
        now: Instant,
        key: DedupKey,
        fingerprint: u64,
        state: DedupState,
        expires: Instant,
    ) -> DedupHandle {
        self.expire(now);
        if self.next - self.oldest >= self.ring.len() as u64 {
            self.pop_oldest();
        }
        let sequence = self.next;
        self.next += 1;
        let len = self.ring.len() as u64;
        self.ring[(sequence % len) as usize] = Some(Entry {
            key,
            fingerprint,
            state,
            expires,
            sequence,
        });
        self.map.insert(key, sequence);
        DedupHandle(sequence)
    }

    /// Moves an entry to a new state (e.g. once the application answered).
    pub fn update(&mut self, handle: DedupHandle, state: DedupState) {
        let len = self.ring.len() as u64;
        if let Some(e) = self.ring[(handle.0 % len) as usize].as_mut() {
            if e.sequence == handle.0 {
                e.state = state;
            }
        }
    }

    /// Forgets entries whose lifetime ended.
    pub fn expire(&mut self, now: Instant) {
        while self.oldest < self.next {
            match self.slot(self.oldest) {
                Some(e) if e.expires > now => break,
                _ => self.pop_oldest(),
            }
        }
    }

    fn pop_oldest(&mut self) {
        if self.oldest >= self.next {
            return;
        }
        let len = self.ring.len() as u64;
        let sequence = self.oldest;
        self.oldest += 1;
        if let Some(e) = self.ring[(sequence % len) as usize].take() {
            // A newer message with the same key keeps its own entry.
            if let hashbrown::hash_map::Entry::Occupied(m) = self.map.entry(e.key) {
                if *m.get() == sequence {
                    m.remove();
                }
            }
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{IpAddr, Ipv6Addr, SocketAddr};

    fn key(mid: u16) -> DedupKey {
        DedupKey::new(SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 5683), mid)
    }

    #[test]
    fn same_mid_different_message_is_new() {
        let mut d = DedupCache::new(4, 1);
        let t = Instant::ZERO;
        d.insert(t, key(1), 111, DedupState::Ignore, Instant::from_secs(10));
        assert_eq!(d.lookup(&key(1), 111), Some(DedupState::Ignore));
        assert_eq!(d.lookup(&key(1), 222), None);
    }

    #[test]
    fn bounded_and_expiring() {
        let mut d = DedupCache::new(2, 1);
        for mid in 0..5 {
            d.insert(
                Instant::ZERO,
                key(mid),
                1,
                DedupState::Ignore,
                Instant::from_secs(10),
            );
        }
        assert_eq!(d.len(), 2);
        assert!(d.lookup(&key(4), 1).is_some());
        assert!(d.lookup(&key(0), 1).is_none());
        d.expire(Instant::from_secs(10));
        assert_eq!(d.len(), 0);
    }

    #[test]
    fn replaced_entry_survives_eviction_of_its_predecessor() {
        let mut d = DedupCache::new(3, 1);
        d.insert(
            Instant::ZERO,
            key(1),
            1,
            DedupState::Ignore,
            Instant::from_secs(5),
        );
        d.insert(
            Instant::from_secs(1),
            key(1),
            2,
            DedupState::Ignore,
            Instant::from_secs(50),
        );
        d.expire(Instant::from_secs(6));
        assert_eq!(d.lookup(&key(1), 2), Some(DedupState::Ignore));
    }
}
