//! The block layer's state (RFC 7959): Block1 uploads being reassembled and Block2 bodies
//! kept while their transfer lasts, each keyed by client and request (method, URI,
//! Request-Tag) and bounded in count and bytes. Its fields are private; the endpoint
//! composes it with the exchanges and responses, lending it the address check (a verified
//! peer's transfer may take an unverified peer's place in a full table).

use super::body_cache::{BodyCache, CachedBody};
use super::uploads::{UploadStep, Uploads};
use crate::config::Config;
use crate::{Duration, Instant};
use alloc::vec::Vec;
use core::net::SocketAddr;
use covey_core::{Block, Message};

/// A transfer: the client's address and a digest of the request that names it.
pub(crate) type TransferKey = (SocketAddr, u64);

/// Uploads and response bodies of the block-wise transfers in progress.
#[derive(Debug)]
pub(crate) struct BlockTransfers {
    uploads: Uploads,
    bodies: BodyCache,
    /// How long an upload may idle (EXCHANGE_LIFETIME).
    upload_idle: Duration,
}

impl BlockTransfers {
    /// Bounded by `config`, the maps keyed with their own seeds; uploads are forgotten after
    /// idling for `upload_idle`.
    pub fn new(
        config: &Config,
        uploads_seed: u64,
        bodies_seed: u64,
        upload_idle: Duration,
    ) -> BlockTransfers {
        BlockTransfers {
            uploads: Uploads::new(config, uploads_seed),
            bodies: BodyCache::new(config, bodies_seed),
            upload_idle,
        }
    }

    /// The transfer request `message` from `remote` belongs to.
    pub fn key(&self, remote: SocketAddr, message: &Message<'_>) -> TransferKey {
        self.uploads.key(remote, message)
    }

    /// Takes one Block1 block of upload `key`; see [`Uploads::receive`].
    pub fn receive_block1(
        &mut self,
        now: Instant,
        key: TransferKey,
        block: Block,
        payload: &[u8],
        size1: Option<u32>,
        verified: &dyn Fn(&SocketAddr) -> bool,
    ) -> UploadStep {
        self.uploads
            .receive(now, key, block, payload, size1, verified)
    }

    /// Keeps the response `head` (encoded without payload) and `body` of transfer `key`.
    pub fn keep_body(
        &mut self,
        now: Instant,
        key: TransferKey,
        head: Vec<u8>,
        body: Vec<u8>,
        verified: &dyn Fn(&SocketAddr) -> bool,
    ) {
        self.bodies.insert(now, key, head, body, verified);
    }

    /// Whether a body is kept for transfer `key` (a response held for an address check).
    #[cfg(feature = "address-validation")]
    pub fn has_body(&self, key: &TransferKey) -> bool {
        self.bodies.contains(key)
    }

    /// Removes and returns the body of transfer `key` (a response held for an address check).
    #[cfg(feature = "address-validation")]
    pub fn take_body(&mut self, key: &TransferKey) -> Option<CachedBody> {
        self.bodies.take(key)
    }

    /// Removes and returns the body of transfer `key`, unless it expired by `now`.
    pub fn take_fresh_body(&mut self, now: Instant, key: &TransferKey) -> Option<CachedBody> {
        self.bodies.take_fresh(now, key)
    }

    /// Puts back a body taken with [`BlockTransfers::take_body`], keeping its expiry.
    pub fn put_back_body(&mut self, key: TransferKey, cached: CachedBody) {
        self.bodies.put_back(key, cached);
    }

    /// When the next idle upload or kept body is to be forgotten.
    pub fn next_expiry(&self) -> Option<Instant> {
        [
            self.uploads.next_expiry(self.upload_idle),
            self.bodies.next_expiry(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Forgets uploads idle too long and bodies past their lifetime.
    pub fn expire(&mut self, now: Instant) {
        self.uploads.expire(now, self.upload_idle);
        self.bodies.expire(now);
    }
}
