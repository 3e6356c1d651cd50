//! Transmissions by (destination, message ID), so an ACK or RST finds the CON it answers
//! (RFC 7252 §4.2). Slab indices in a hash table (5 bytes a bucket instead of a map's 45),
//! hashed by a seeded digest of (address, message ID) and checked against the transmission
//! each leads to. An entry stands while its transmission holds that message ID, so the
//! table can rehash an entry from the transmission alone.

use crate::hash::{digest, MidKey, SeededState};
use crate::message::transmission::Transmission;
use crate::storage::digest_table::DigestTable;
use crate::storage::slab::{Slab, SlabKey};

/// The (destination, message ID) of the transmission at slab index `entry`.
fn transmission(transmissions: &Slab<Transmission>, entry: u32) -> Option<MidKey> {
    let t = transmissions.get(transmissions.key_at(entry as usize)?)?;
    Some(MidKey::new(t.destination, t.message_id))
}

/// The index of transmissions by message ID.
#[derive(Debug)]
pub(crate) struct TransmissionIndex {
    table: DigestTable,
    digests: SeededState,
}

impl TransmissionIndex {
    pub fn new(seed: u64) -> TransmissionIndex {
        TransmissionIndex {
            table: DigestTable::new(),
            digests: SeededState::with_seed(seed),
        }
    }

    /// Indexes transmission `key` under the destination and message ID it holds.
    pub fn insert(&mut self, transmissions: &Slab<Transmission>, key: SlabKey) {
        let Some(wanted) = transmission(transmissions, key.index() as u32) else {
            return;
        };
        let digests = &self.digests;
        let d = digest(digests, &wanted);
        self.table.insert_unique(d, key.index() as u32, |&e| {
            transmission(transmissions, e).map_or(0, |k| digest(digests, &k))
        });
    }

    /// Forgets transmission `key`, indexed under `mid` (its message ID when indexed).
    pub fn remove(&mut self, key: SlabKey, mid: MidKey) {
        let d = digest(&self.digests, &mid);
        let entry = key.index() as u32;
        self.table.remove(d, |&e| e == entry);
    }

    /// The transmission of message `mid` (destination and message ID).
    pub fn find(&self, transmissions: &Slab<Transmission>, mid: MidKey) -> Option<SlabKey> {
        let d = digest(&self.digests, &mid);
        let &e = self.table.find(d, |&e| {
            transmission(transmissions, e).is_some_and(|k| k == mid)
        })?;
        transmissions.key_at(e as usize)
    }
}
