//! Transmissions by (destination, message ID), so an ACK or RST finds the CON it answers
//! (RFC 7252 §4.2). With `hash-tables`: slab indices in a hash table (5 bytes a bucket
//! instead of a map's 45), hashed by a seeded digest of (address, message ID) and checked
//! against the transmission each leads to. An entry stands while its transmission holds
//! that message ID, so the table can rehash an entry from the transmission alone. Without
//! it (a node's handful of CONs in flight) the transmissions are scanned.

use crate::hash::MidKey;
#[cfg(feature = "hash-tables")]
use crate::hash::{digest, SeededState};
use crate::message::transmission::Transmission;
#[cfg(feature = "hash-tables")]
use crate::storage::digest_table::DigestTable;
use crate::storage::slab::{Slab, SlabKey};

/// The index of transmissions by message ID.
#[cfg(feature = "hash-tables")]
pub(crate) type TransmissionIndex = HashedTransmissions;
/// The index of transmissions by message ID.
#[cfg(not(feature = "hash-tables"))]
pub(crate) type TransmissionIndex = ScannedTransmissions;

/// Transmissions found by scanning them: nothing to keep. Every transmission in the slab
/// holds its message ID (a reserved one is armed within the call that reserved it).
#[cfg(any(test, not(feature = "hash-tables")))]
#[derive(Debug)]
pub(crate) struct ScannedTransmissions;

#[cfg(any(test, not(feature = "hash-tables")))]
impl ScannedTransmissions {
    pub fn new(_seed: u64) -> ScannedTransmissions {
        ScannedTransmissions
    }

    /// Nothing to index: the transmission holds its message ID.
    pub fn insert(&mut self, _: &Slab<Transmission>, _: SlabKey) {}

    /// Nothing to forget.
    pub fn remove(&mut self, _: SlabKey, _: MidKey) {}

    /// The transmission of message `mid` (destination and message ID).
    pub fn find(&self, transmissions: &Slab<Transmission>, mid: MidKey) -> Option<SlabKey> {
        let sent = |t: &Transmission| t.message_id == mid.mid && t.destination == mid.addr;
        transmissions.iter().find(|(_, t)| sent(t)).map(|(k, _)| k)
    }
}

/// The (destination, message ID) of the transmission at slab index `entry`.
#[cfg(feature = "hash-tables")]
fn transmission(transmissions: &Slab<Transmission>, entry: u32) -> Option<MidKey> {
    let t = transmissions.get(transmissions.key_at(entry as usize)?)?;
    Some(MidKey::new(t.destination, t.message_id))
}

/// Transmissions by a hash table of their slab indices.
#[cfg(feature = "hash-tables")]
#[derive(Debug)]
pub(crate) struct HashedTransmissions {
    table: DigestTable,
    digests: SeededState,
}

#[cfg(feature = "hash-tables")]
impl HashedTransmissions {
    pub fn new(seed: u64) -> HashedTransmissions {
        HashedTransmissions {
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

/// The scanned index (without `hash-tables`) finds what the hashed one does, through
/// transmissions started, renumbered and ended in a random order.
#[cfg(all(test, feature = "hash-tables"))]
mod tests {
    use super::*;
    use crate::message::transmission::TransmissionOwner;
    use crate::rng::Rng;
    use crate::{Duration, Instant};
    use core::net::SocketAddr;
    use std::vec::Vec;

    #[test]
    fn scanned_transmissions_find_what_hashed_ones_do() {
        let addrs: Vec<SocketAddr> = (1..=3)
            .map(|p| SocketAddr::new("2001:db8::1".parse().unwrap(), p))
            .collect();
        let peer = Slab::with_capacity(1).insert(()).unwrap();
        let mut slab: Slab<Transmission> = Slab::with_capacity(8);
        let (mut hashed, mut scanned) = (HashedTransmissions::new(3), ScannedTransmissions::new(3));
        let mut rng = Rng::new(4);
        // A message ID goes to one transmission of a destination at a time.
        let taken = |slab: &Slab<Transmission>, addr: SocketAddr, mid: u16| {
            slab.iter()
                .any(|(_, t)| t.destination == addr && t.message_id == mid)
        };
        for _ in 0..2_000 {
            let draw = rng.next_u32();
            let (addr, mid) = (addrs[draw as usize % 3], (draw >> 8) as u16 % 6);
            let live: Vec<SlabKey> = slab.iter().map(|(k, _)| k).collect();
            match draw >> 16 & 3 {
                0 if !taken(&slab, addr, mid) => {
                    let t = Transmission {
                        peer,
                        destination: addr,
                        message_id: mid,
                        owner: TransmissionOwner::SeparateResponse,
                        retransmissions: 0,
                        base_rto: Duration::ZERO,
                        timeout: Duration::ZERO,
                        first_sent: Instant::ZERO,
                    };
                    if let Ok(key) = slab.insert(t) {
                        hashed.insert(&slab, key);
                        scanned.insert(&slab, key);
                    }
                }
                1 if !live.is_empty() => {
                    let key = live[(draw >> 20) as usize % live.len()];
                    let t = slab.get(key).unwrap();
                    let old = MidKey::new(t.destination, t.message_id);
                    if !taken(&slab, old.addr, mid) {
                        slab.get_mut(key).unwrap().message_id = mid;
                        hashed.remove(key, old);
                        scanned.remove(key, old);
                        hashed.insert(&slab, key);
                        scanned.insert(&slab, key);
                    }
                }
                2 if !live.is_empty() => {
                    let key = live[(draw >> 20) as usize % live.len()];
                    let t = slab.remove(key).unwrap();
                    let old = MidKey::new(t.destination, t.message_id);
                    hashed.remove(key, old);
                    scanned.remove(key, old);
                }
                _ => {}
            }
            for &addr in &addrs {
                for mid in 0..6 {
                    let wanted = MidKey::new(addr, mid);
                    assert_eq!(scanned.find(&slab, wanted), hashed.find(&slab, wanted));
                }
            }
        }
    }
}
