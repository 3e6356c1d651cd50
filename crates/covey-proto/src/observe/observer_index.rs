//! Observers by (client address, token). With `hash-tables`: their slab indices in a hash
//! table (5 bytes a bucket instead of a map's 17), hashed by a seeded digest of the pair and
//! checked against the observer each leads to, so two pairs with the same digest are still
//! told apart. Without it (a node's handful of observers) the observers are scanned, and
//! there is no index to keep.

#[cfg(feature = "hash-tables")]
use crate::hash::{digest, AddrKey, SeededState};
use crate::message::peer::PeerTable;
use crate::observe::observer::Observer;
#[cfg(feature = "hash-tables")]
use crate::storage::digest_table::DigestTable;
use crate::storage::slab::{Slab, SlabKey};
use core::net::SocketAddr;
use covey_core::Token;

/// The index of registered observers.
#[cfg(feature = "hash-tables")]
pub(crate) type ObserverIndex = HashedObserverIndex;
/// The index of registered observers.
#[cfg(not(feature = "hash-tables"))]
pub(crate) type ObserverIndex = ScannedObservers;

/// Observers found by scanning them: an index with nothing to keep.
#[cfg(any(test, not(feature = "hash-tables")))]
#[derive(Debug)]
pub(crate) struct ScannedObservers;

#[cfg(any(test, not(feature = "hash-tables")))]
impl ScannedObservers {
    pub fn new(_seed: u64) -> ScannedObservers {
        ScannedObservers
    }

    /// The observer registered by `remote` with `token`.
    pub fn find(
        &self,
        observers: &Slab<Observer>,
        peers: &PeerTable,
        remote: SocketAddr,
        token: Token,
    ) -> Option<SlabKey> {
        let registered = |o: &Observer| o.token == token && peers.addr(o.peer) == Some(remote);
        observers
            .iter()
            .find(|(_, o)| registered(o))
            .map(|(k, _)| k)
    }

    /// Nothing to index: the observer is in the slab.
    pub fn insert(
        &mut self,
        _: &Slab<Observer>,
        _: &PeerTable,
        _: SlabKey,
        _: SocketAddr,
        _: Token,
    ) {
    }

    /// Nothing to forget: the observer leaves the slab.
    pub fn remove(&mut self, _: SlabKey, _: SocketAddr, _: Token) {}
}

/// Observers by a hash table of their slab indices.
#[cfg(feature = "hash-tables")]
#[derive(Debug)]
pub(crate) struct HashedObserverIndex {
    table: DigestTable,
    digests: SeededState,
}

/// The (address, token) of the observer in slab slot `index`.
#[cfg(feature = "hash-tables")]
fn registration(
    observers: &Slab<Observer>,
    peers: &PeerTable,
    index: u32,
) -> Option<(SocketAddr, Token)> {
    let o = observers.get(observers.key_at(index as usize)?)?;
    Some((peers.addr(o.peer)?, o.token))
}

#[cfg(feature = "hash-tables")]
impl HashedObserverIndex {
    pub fn new(seed: u64) -> HashedObserverIndex {
        HashedObserverIndex {
            table: DigestTable::new(),
            digests: SeededState::with_seed(seed),
        }
    }

    fn digest(digests: &SeededState, remote: SocketAddr, token: Token) -> u64 {
        digest(digests, &(AddrKey(remote), token))
    }

    /// The observer registered by `remote` with `token`.
    pub fn find(
        &self,
        observers: &Slab<Observer>,
        peers: &PeerTable,
        remote: SocketAddr,
        token: Token,
    ) -> Option<SlabKey> {
        let d = Self::digest(&self.digests, remote, token);
        let &index = self.table.find(d, |&i| {
            registration(observers, peers, i) == Some((remote, token))
        })?;
        observers.key_at(index as usize)
    }

    /// Indexes observer `key`, registered by `remote` with `token` (and not indexed yet).
    pub fn insert(
        &mut self,
        observers: &Slab<Observer>,
        peers: &PeerTable,
        key: SlabKey,
        remote: SocketAddr,
        token: Token,
    ) {
        let digests = &self.digests;
        let d = Self::digest(digests, remote, token);
        self.table.insert_unique(d, key.index() as u32, |&i| {
            registration(observers, peers, i)
                .map_or(0, |(addr, token)| Self::digest(digests, addr, token))
        });
    }

    /// Forgets observer `key`, registered by `remote` with `token`.
    pub fn remove(&mut self, key: SlabKey, remote: SocketAddr, token: Token) {
        let d = Self::digest(&self.digests, remote, token);
        self.table.remove(d, |&i| i as usize == key.index());
    }
}
