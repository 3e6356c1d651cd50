//! The server role's table of incoming requests (RFC 7252 §5.2): each request taken in until
//! it is answered (or its delayed multicast answer leaves), with its datagram in a pooled
//! slot, bounded by `Config::max_incoming`. When the table is full a request from a verified
//! peer takes the slot of one from the source whose unverified peers hold the most, and one
//! from a peer within its share the slot of one from the peer (or source) most beyond its
//! share. Its fields are private; the endpoint answers the evicted request.

use crate::config::FairShare;
use crate::exchange::incoming_exchange::IncomingExchange;
#[cfg(feature = "multicast")]
use crate::message::wire::Outgoing;
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::SlotBufs;
use crate::storage::fair_share::{
    heaviest_unverified, judge, RefusalMemo, ShareLimits, Source, Verdict,
};
use crate::storage::slab::{Slab, SlabKey};
use core::net::SocketAddr;

/// The incoming requests not yet answered.
#[derive(Debug)]
pub(crate) struct IncomingRequests {
    table: Slab<IncomingExchange>,
    /// Each request's datagram; a delayed response replaces it.
    bufs: SlotBufs,
    /// The table was found full with every holder within its share, and nothing was
    /// inserted since: no newcomer can take a slot, so the scan is skipped.
    shared_fairly: bool,
    /// The last holder refused a slot in the full table.
    refusals: RefusalMemo,
}

impl IncomingRequests {
    /// Room for `capacity` requests.
    pub fn new(capacity: usize) -> IncomingRequests {
        IncomingRequests {
            table: Slab::with_capacity(capacity),
            bufs: SlotBufs::default(),
            shared_fairly: false,
            refusals: RefusalMemo::default(),
        }
    }

    /// Request `key`.
    pub fn get(&self, key: SlabKey) -> Option<&IncomingExchange> {
        self.table.get(key)
    }

    /// Request `key`, to move it along its states.
    pub fn get_mut(&mut self, key: SlabKey) -> Option<&mut IncomingExchange> {
        self.table.get_mut(key)
    }

    /// The request in slot `index`, if any.
    pub fn key_at(&self, index: usize) -> Option<SlabKey> {
        self.table.key_at(index)
    }

    /// Whether no request can be taken in without evicting one.
    pub fn is_full(&self) -> bool {
        self.table.is_full()
    }

    /// Takes `exchange` in with its `datagram`; `None` when the table is full.
    pub fn insert(
        &mut self,
        exchange: IncomingExchange,
        datagram: &[u8],
        pool: &mut BufferPool,
    ) -> Option<SlabKey> {
        let inserted = self.table.insert(exchange);
        self.shared_fairly &= inserted.is_err();
        let key = inserted.ok()?;
        self.bufs.slot(key.index()).copy_from(datagram, pool);
        Some(key)
    }

    /// Forgets request `key` and gives its buffer back; false if it was gone.
    pub fn remove(&mut self, key: SlabKey, pool: &mut BufferPool) -> bool {
        if self.table.remove(key).is_none() {
            return false;
        }
        self.refusals.entry_removed();
        self.bufs.release(key.index(), pool);
        true
    }

    /// Request `key`'s datagram, or the delayed response that replaced it (empty when gone).
    pub fn bytes(&self, key: SlabKey) -> &[u8] {
        match self.table.get(key) {
            Some(_) => self.bufs.get(key.index()),
            None => &[],
        }
    }

    /// Encodes request `key`'s delayed response `m` in place of the request; false when it
    /// does not fit.
    #[cfg(feature = "multicast")]
    pub fn encode_response(
        &mut self,
        key: SlabKey,
        m: &Outgoing<'_>,
        pool: &mut BufferPool,
    ) -> bool {
        self.bufs.slot(key.index()).encode(m, pool).is_ok()
    }

    /// The request to evict from the full table for a newcomer from `remote`, if any: a
    /// request of the source whose unverified peers hold the most when the newcomer is
    /// verified (`verified` tells which addresses are), else one of the holder most beyond
    /// its share, unless the newcomer itself is beyond its share (then remembered, so a
    /// flood is refused without a scan).
    pub fn victim(
        &mut self,
        remote: SocketAddr,
        remote_verified: bool,
        verified: &dyn Fn(&SocketAddr) -> bool,
        share: &FairShare,
    ) -> Option<SlabKey> {
        if remote_verified {
            if let Some(key) = self.unverified_request(verified) {
                return Some(key);
            }
        }
        self.request_beyond_share(remote, share)
    }

    /// A request of the source whose unverified peers hold the most of the table.
    fn unverified_request(&self, verified: &dyn Fn(&SocketAddr) -> bool) -> Option<SlabKey> {
        let held = self.table.iter().map(|(_, inc)| (inc.remote, 1));
        let source = heaviest_unverified(held, verified)?;
        self.table
            .iter()
            .find(|(_, inc)| Source::of(&inc.remote) == source && !verified(&inc.remote))
            .map(|(key, _)| key)
    }

    /// A request of the holder most beyond its share, if `remote` may take its place.
    fn request_beyond_share(&mut self, remote: SocketAddr, share: &FairShare) -> Option<SlabKey> {
        if self.shared_fairly || self.refusals.refuses(&remote) {
            return None;
        }
        let limits = ShareLimits::new(share, self.table.capacity());
        let held = || self.table.iter().map(|(_, inc)| (inc.remote, 1));
        let holder = match judge(held, &remote, 1, limits) {
            Verdict::Evict(holder) => holder,
            Verdict::Full => {
                self.shared_fairly = true;
                return None;
            }
            Verdict::Refuse(beyond) => {
                self.refusals.remember(beyond);
                return None;
            }
        };
        self.table
            .iter()
            .find(|(_, inc)| holder.holds(&inc.remote))
            .map(|(key, _)| key)
    }
}
