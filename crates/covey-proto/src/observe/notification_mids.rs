//! Observers by the message ID of their last NON notification and of the CON one the
//! notification in flight replaced, so an RST to either ends the observation (RFC 7641
//! §3.6). Like the observer index: with `hash-tables`, slab indices in a hash table (5 bytes
//! a bucket instead of a map's 17), hashed by a seeded digest of (address, message ID) and
//! checked against the observer each leads to. An entry stands while its observer holds
//! that message ID, so the table can rehash an entry from the observer alone. Without
//! `hash-tables` the observers' message IDs are scanned.

#[cfg(feature = "hash-tables")]
use crate::hash::{digest, MidKey, SeededState};
use crate::message::peer::PeerTable;
use crate::observe::observer::Observer;
#[cfg(feature = "hash-tables")]
use crate::storage::digest_table::DigestTable;
use crate::storage::slab::{Slab, SlabKey};
use core::net::SocketAddr;

/// The index of notification message IDs.
#[cfg(feature = "hash-tables")]
pub(crate) type NotificationMids = HashedMids;
/// The index of notification message IDs.
#[cfg(not(feature = "hash-tables"))]
pub(crate) type NotificationMids = ScannedMids;

/// Notification message IDs found by scanning the observers: nothing to keep.
#[cfg(any(test, not(feature = "hash-tables")))]
#[derive(Debug)]
pub(crate) struct ScannedMids;

#[cfg(any(test, not(feature = "hash-tables")))]
impl ScannedMids {
    pub fn new(_seed: u64) -> ScannedMids {
        ScannedMids
    }

    /// Nothing to index: the observer holds the message ID.
    pub fn insert(
        &mut self,
        _: &Slab<Observer>,
        _: &PeerTable,
        _: SlabKey,
        _: MidRole,
        _: SocketAddr,
        _: u16,
    ) {
    }

    /// Nothing to forget.
    pub fn remove(&mut self, _: SlabKey, _: MidRole, _: SocketAddr, _: u16) {}

    /// The observer that notification `mid` to `remote` went to.
    pub fn find(
        &self,
        observers: &Slab<Observer>,
        peers: &PeerTable,
        remote: SocketAddr,
        mid: u16,
    ) -> Option<SlabKey> {
        let sent = |o: &Observer| {
            (o.last_non_mid == Some(mid) || o.replaced_mid == Some(mid))
                && peers.addr(o.peer) == Some(remote)
        };
        observers.iter().find(|(_, o)| sent(o)).map(|(k, _)| k)
    }
}

/// Which of an observer's notification message IDs an entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MidRole {
    /// The last NON notification's.
    LastNon,
    /// The CON notification's that the one in flight replaced.
    Replaced,
}

/// Entry bit of `MidRole::Replaced`; slab indices stay below it.
#[cfg(feature = "hash-tables")]
const REPLACED: u32 = 1 << 31;

impl MidRole {
    /// The observer's field for this role.
    pub fn field(self, o: &mut Observer) -> &mut Option<u16> {
        match self {
            MidRole::LastNon => &mut o.last_non_mid,
            MidRole::Replaced => &mut o.replaced_mid,
        }
    }

    #[cfg(feature = "hash-tables")]
    fn entry(self, key: SlabKey) -> u32 {
        let index = key.index() as u32 & !REPLACED;
        match self {
            MidRole::LastNon => index,
            MidRole::Replaced => index | REPLACED,
        }
    }
}

/// The (address, message ID) an entry stands for, read from its observer.
#[cfg(feature = "hash-tables")]
fn notification(observers: &Slab<Observer>, peers: &PeerTable, entry: u32) -> Option<MidKey> {
    let o = observers.get(observers.key_at((entry & !REPLACED) as usize)?)?;
    let mid = match entry & REPLACED {
        0 => o.last_non_mid?,
        _ => o.replaced_mid?,
    };
    Some(MidKey::new(peers.addr(o.peer)?, mid))
}

/// Notification message IDs in a hash table of entries.
#[cfg(feature = "hash-tables")]
#[derive(Debug)]
pub(crate) struct HashedMids {
    table: DigestTable,
    digests: SeededState,
}

#[cfg(feature = "hash-tables")]
impl HashedMids {
    pub fn new(seed: u64) -> HashedMids {
        HashedMids {
            table: DigestTable::new(),
            digests: SeededState::with_seed(seed),
        }
    }

    /// Indexes observer `key`'s `role` message ID, which it already holds (`mid` to `remote`).
    pub fn insert(
        &mut self,
        observers: &Slab<Observer>,
        peers: &PeerTable,
        key: SlabKey,
        role: MidRole,
        remote: SocketAddr,
        mid: u16,
    ) {
        let digests = &self.digests;
        let d = digest(digests, &MidKey::new(remote, mid));
        self.table.insert_unique(d, role.entry(key), |&e| {
            notification(observers, peers, e).map_or(0, |k| digest(digests, &k))
        });
    }

    /// Forgets observer `key`'s `role` message ID `mid` to `remote`.
    pub fn remove(&mut self, key: SlabKey, role: MidRole, remote: SocketAddr, mid: u16) {
        let d = digest(&self.digests, &MidKey::new(remote, mid));
        let entry = role.entry(key);
        self.table.remove(d, |&e| e == entry);
    }

    /// The observer that notification `mid` to `remote` went to.
    pub fn find(
        &self,
        observers: &Slab<Observer>,
        peers: &PeerTable,
        remote: SocketAddr,
        mid: u16,
    ) -> Option<SlabKey> {
        let wanted = MidKey::new(remote, mid);
        let d = digest(&self.digests, &wanted);
        let &e = self.table.find(d, |&e| {
            notification(observers, peers, e).is_some_and(|k| k == wanted)
        })?;
        observers.key_at((e & !REPLACED) as usize)
    }
}
