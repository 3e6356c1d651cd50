//! Observers by (client address, token): their slab indices in a hash table (5 bytes a
//! bucket instead of a map's 17), hashed by a seeded digest of the pair and checked against
//! the observer each leads to, so two pairs with the same digest are still told apart.

use crate::hash::{digest, AddrKey, SeededState};
use crate::message::peer::PeerTable;
use crate::observe::observer::Observer;
use crate::storage::digest_table::DigestTable;
use crate::storage::slab::{Slab, SlabKey};
use core::net::SocketAddr;
use covey_core::Token;

/// The index of registered observers.
#[derive(Debug)]
pub(crate) struct ObserverIndex {
    table: DigestTable,
    digests: SeededState,
}

/// The (address, token) of the observer in slab slot `index`.
fn registration(
    observers: &Slab<Observer>,
    peers: &PeerTable,
    index: u32,
) -> Option<(SocketAddr, Token)> {
    let o = observers.get(observers.key_at(index as usize)?)?;
    Some((peers.addr(o.peer)?, o.token))
}

impl ObserverIndex {
    pub fn new(seed: u64) -> ObserverIndex {
        ObserverIndex {
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
