//! Message deduplication (RFC 7252 §4.5), keyed by (peer, message ID) and confirmed by a
//! fingerprint of the datagram: a peer that reuses a message ID for a different message is
//! served afresh, so deduplication never caps a peer's message rate.

use crate::event::IncomingId;
use crate::hash::{map_with_capacity, Map};
use crate::reply_cache::ReplyRef;
use crate::Instant;
use alloc::collections::VecDeque;
use core::net::SocketAddr;

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

pub(crate) type DedupKey = (SocketAddr, u16);

#[derive(Debug)]
struct Entry {
    fingerprint: u64,
    state: DedupState,
    sequence: u64,
}

/// Bounded table of recently seen messages; the oldest entry goes first when full.
#[derive(Debug)]
pub(crate) struct DedupCache {
    map: Map<DedupKey, Entry>,
    order: VecDeque<(DedupKey, u64, Instant)>,
    capacity: usize,
    sequence: u64,
}

impl DedupCache {
    pub fn new(capacity: usize, seed: u64) -> DedupCache {
        DedupCache {
            map: map_with_capacity(capacity, seed),
            order: VecDeque::with_capacity(capacity.max(1)),
            capacity: capacity.max(1),
            sequence: 0,
        }
    }

    /// The state of an earlier copy of this exact message, if remembered.
    pub fn lookup(&self, key: &DedupKey, fingerprint: u64) -> Option<DedupState> {
        self.map
            .get(key)
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
    ) {
        self.expire(now);
        if self.order.len() >= self.capacity {
            self.pop_oldest();
        }
        self.sequence += 1;
        self.map.insert(
            key,
            Entry {
                fingerprint,
                state,
                sequence: self.sequence,
            },
        );
        self.order.push_back((key, self.sequence, expires));
    }

    /// Moves an entry to a new state (e.g. once the application answered).
    pub fn update(&mut self, key: &DedupKey, state: DedupState) {
        if let Some(e) = self.map.get_mut(key) {
            e.state = state;
        }
    }

    /// Forgets entries whose lifetime ended.
    pub fn expire(&mut self, now: Instant) {
        while let Some(&(_, _, expires)) = self.order.front() {
            if expires > now {
                break;
            }
            self.pop_oldest();
        }
    }

    fn pop_oldest(&mut self) {
        if let Some((key, sequence, _)) = self.order.pop_front() {
            // A newer message with the same key keeps its own entry. One lookup (the entry)
            // instead of a `get` then a `remove`: this runs for every message once full.
            if let hashbrown::hash_map::Entry::Occupied(e) = self.map.entry(key) {
                if e.get().sequence == sequence {
                    e.remove();
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
    use core::net::{IpAddr, Ipv6Addr};

    fn key(mid: u16) -> DedupKey {
        (SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 5683), mid)
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
