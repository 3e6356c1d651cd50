//! Message deduplication (RFC 7252 §4.5), keyed by (peer, message ID) and confirmed by a
//! fingerprint of the datagram: a peer that reuses a message ID for a different message is
//! served afresh, so deduplication never caps a peer's message rate.

use crate::event::IncomingId;
use crate::hash::{digest, seeded_map, Map, SeededState};
use crate::message::reply_cache::ReplyRef;
use crate::Instant;
use alloc::collections::VecDeque;

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
}

/// Bounded table of recently seen messages: a queue of entries in insertion order (the
/// oldest goes first when full or expired), growing on demand up to its capacity, and a map
/// from key to sequence number.
#[derive(Debug)]
pub(crate) struct DedupCache {
    /// Digest of the key -> sequence number; the entry holds the key to check.
    map: Map<u64, u64>,
    digests: SeededState,
    /// Entries by sequence number, the oldest at the front: entry i has sequence `oldest + i`.
    /// A replaced entry stays as `None` until it reaches the front.
    entries: VecDeque<Option<Entry>>,
    capacity: usize,
    /// Sequence number of the front entry.
    oldest: u64,
}

impl DedupCache {
    pub fn new(capacity: usize, seed: u64) -> DedupCache {
        DedupCache {
            map: seeded_map(seed),
            digests: SeededState::with_seed(seed.rotate_left(32) ^ 0x6a09_e667_f3bc_c908),
            entries: VecDeque::new(),
            capacity: capacity.max(1),
            oldest: 0,
        }
    }

    fn slot(&self, sequence: u64) -> Option<&Entry> {
        let index = usize::try_from(sequence.checked_sub(self.oldest)?).ok()?;
        self.entries.get(index)?.as_ref()
    }

    /// The state of an earlier copy of this exact message, if remembered.
    pub fn lookup(&self, key: &DedupKey, fingerprint: u64) -> Option<DedupState> {
        let &sequence = self.map.get(&digest(&self.digests, key))?;
        self.slot(sequence)
            .filter(|e| e.key == *key && e.fingerprint == fingerprint)
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
        if self.entries.len() >= self.capacity {
            self.pop_oldest();
        }
        let sequence = self.oldest + self.entries.len() as u64;
        // The key's previous entry (a reused message ID) is dead from here on.
        if let Some(previous) = self.map.insert(digest(&self.digests, &key), sequence) {
            if let Some(index) = previous
                .checked_sub(self.oldest)
                .and_then(|i| usize::try_from(i).ok())
            {
                if let Some(slot) = self.entries.get_mut(index) {
                    if slot.as_ref().is_some_and(|e| e.key == key) {
                        *slot = None;
                    }
                }
            }
        }
        self.entries.push_back(Some(Entry {
            key,
            fingerprint,
            state,
            expires,
        }));
        DedupHandle(sequence)
    }

    /// Moves an entry to a new state (e.g. once the application answered).
    pub fn update(&mut self, handle: DedupHandle, state: DedupState) {
        let Some(index) = handle
            .0
            .checked_sub(self.oldest)
            .and_then(|i| usize::try_from(i).ok())
        else {
            return;
        };
        if let Some(Some(e)) = self.entries.get_mut(index) {
            e.state = state;
        }
    }

    /// Forgets entries whose lifetime ended.
    pub fn expire(&mut self, now: Instant) {
        while let Some(front) = self.entries.front() {
            match front {
                Some(e) if e.expires > now => break,
                _ => self.pop_oldest(),
            }
        }
    }

    fn pop_oldest(&mut self) {
        let Some(front) = self.entries.pop_front() else {
            return;
        };
        let sequence = self.oldest;
        self.oldest += 1;
        if let Some(e) = front {
            // A newer message with the same key keeps its own entry.
            let d = digest(&self.digests, &e.key);
            if let hashbrown::hash_map::Entry::Occupied(m) = self.map.entry(d) {
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
