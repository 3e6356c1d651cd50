//! Message deduplication (RFC 7252 §4.5), keyed by (peer, message ID) and confirmed by a
//! fingerprint of the datagram: a peer that reuses a message ID for a different message is
//! served afresh, so deduplication never caps a peer's message rate.

use crate::event::IncomingId;
use crate::hash::{digest, SeededState};
use crate::message::reply_cache::ReplyRef;
#[cfg(feature = "hash-tables")]
use crate::storage::digest_table::DigestTable;
use crate::storage::fifo::Fifo;
use crate::Instant;

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

/// One remembered message. The key is kept as its seeded 64-bit digest (8 bytes instead of
/// a 36-byte address and ID): two keys with the same digest would also need datagrams with
/// the same 64-bit fingerprint, from an independently seeded hash, to be taken for each
/// other, which is as unlikely as a collision of 128 random bits.
#[derive(Debug, Clone, Copy)]
struct Entry {
    digest: u64,
    fingerprint: u64,
    state: DedupState,
    expires: Instant,
}

/// Bounded table of recently seen messages: a queue of entries in insertion order (the
/// oldest goes first when full or expired), growing on demand up to its capacity, and with
/// `hash-tables` a hash table of the live entries' sequence numbers (4 bytes each), hashed
/// by the digest the entry holds; without it (a node's few entries) the queue is scanned.
#[derive(Debug)]
pub(crate) struct DedupCache {
    /// Low 32 bits of the sequence number of every live entry (the queue never holds 2^32).
    #[cfg(feature = "hash-tables")]
    index: DigestTable,
    digests: SeededState,
    /// Entries by sequence number, the oldest at the front: entry i has sequence `oldest + i`.
    /// A replaced entry stays as `None` until it reaches the front.
    entries: Fifo<Option<Entry>>,
    capacity: usize,
    /// Sequence number of the front entry.
    oldest: u64,
}

/// The queue position of the entry with (the low bits of) `sequence`.
#[cfg(feature = "hash-tables")]
fn position(oldest: u64, sequence: u32) -> usize {
    sequence.wrapping_sub(oldest as u32) as usize
}

/// The entry with (the low bits of) `sequence`, if live.
#[cfg(feature = "hash-tables")]
fn entry_at(entries: &Fifo<Option<Entry>>, oldest: u64, sequence: u32) -> Option<&Entry> {
    entries.get(position(oldest, sequence))?.as_ref()
}

impl DedupCache {
    /// A cache of `capacity` entries: 1 to 2^32 − 1, as `Config::validate` makes it (entries
    /// are found by the low 32 bits of their sequence number).
    pub fn new(capacity: usize, seed: u64) -> DedupCache {
        DedupCache {
            #[cfg(feature = "hash-tables")]
            index: DigestTable::new(),
            digests: SeededState::with_seed(seed.rotate_left(32) ^ 0x6a09_e667_f3bc_c908),
            entries: Fifo::new(),
            capacity,
            oldest: 0,
        }
    }

    /// The state of an earlier copy of this exact message, if remembered.
    pub fn lookup(&self, key: &DedupKey, fingerprint: u64) -> Option<DedupState> {
        let d = digest(&self.digests, key);
        self.entries
            .get(self.live(d)?)?
            .as_ref()
            .filter(|e| e.fingerprint == fingerprint)
            .map(|e| e.state)
    }

    /// The queue position of the live entry with digest `d`.
    #[cfg(feature = "hash-tables")]
    fn live(&self, d: u64) -> Option<usize> {
        let (entries, oldest) = (&self.entries, self.oldest);
        let &sequence = self.index.find(d, |&s| {
            entry_at(entries, oldest, s).is_some_and(|e| e.digest == d)
        })?;
        Some(position(oldest, sequence))
    }

    /// The queue position of the live entry with digest `d`.
    #[cfg(not(feature = "hash-tables"))]
    fn live(&self, d: u64) -> Option<usize> {
        (0..self.entries.len())
            .find(|&i| matches!(self.entries.get(i), Some(Some(e)) if e.digest == d))
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
        let d = digest(&self.digests, &key);
        // The key's previous entry (a reused message ID) is dead from here on.
        #[cfg(not(feature = "hash-tables"))]
        if let Some(previous) = self.live(d).and_then(|i| self.entries.get_mut(i)) {
            *previous = None;
        }
        let sequence = self.oldest + self.entries.len() as u64;
        self.entries.push_back(Some(Entry {
            digest: d,
            fingerprint,
            state,
            expires,
        }));
        #[cfg(feature = "hash-tables")]
        self.index_new(d, sequence);
        DedupHandle(sequence)
    }

    /// Indexes the newest entry (digest `d`, `sequence`), in place of the key's previous.
    #[cfg(feature = "hash-tables")]
    fn index_new(&mut self, d: u64, sequence: u64) {
        let (entries, oldest) = (&mut self.entries, self.oldest);
        // The new entry is not indexed yet, so a match is the key's previous entry (a
        // reused message ID), which is dead from here on.
        match self.index.find_mut(d, |&s| {
            entry_at(entries, oldest, s).is_some_and(|e| e.digest == d)
        }) {
            Some(previous) => {
                let replaced = core::mem::replace(previous, sequence as u32);
                if let Some(slot) = entries.get_mut(position(oldest, replaced)) {
                    *slot = None;
                }
            }
            None => {
                self.index.insert_unique(d, sequence as u32, |&s| {
                    entry_at(entries, oldest, s).map_or(0, |e| e.digest)
                });
            }
        }
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
        #[cfg(feature = "hash-tables")]
        if let Some(e) = front {
            // Only this entry's own index slot goes: a replaced one was re-pointed.
            let sequence = self.oldest as u32;
            self.index.remove(e.digest, |&s| s == sequence);
        }
        #[cfg(not(feature = "hash-tables"))]
        let _ = front;
        self.oldest += 1;
    }

    /// Live entries.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        #[cfg(feature = "hash-tables")]
        return self.index.len();
        #[cfg(not(feature = "hash-tables"))]
        (0..self.entries.len())
            .filter(|&i| matches!(self.entries.get(i), Some(Some(_))))
            .count()
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
