//! The block layer's state (RFC 7959): Block1 uploads being reassembled and Block2 bodies
//! kept while their transfer lasts, each keyed by client and request (method, URI,
//! Request-Tag) and bounded in count and bytes. Its fields are private; the endpoint
//! composes it with the exchanges and responses, lending it the address check (a verified
//! peer's transfer may take an unverified peer's place in a full table).

#[cfg(feature = "block2-cache")]
use super::body_cache::{BodyCache, CachedBody};
#[cfg(feature = "block1-uploads")]
use super::uploads::{UploadStep, Uploads};
use crate::config::Config;
use crate::hash::SeededState;
use crate::{Duration, Instant};
#[cfg(feature = "block2-cache")]
use alloc::vec::Vec;
use core::hash::{BuildHasher, Hash, Hasher};
use core::net::SocketAddr;
#[cfg(feature = "block1-uploads")]
use covey_core::Block;
use covey_core::{Message, OptionNumber};

/// A transfer: the client's address and a digest of the request that names it.
pub(crate) type TransferKey = (SocketAddr, u64);

/// Uploads and response bodies of the block-wise transfers in progress.
#[derive(Debug)]
pub(crate) struct BlockTransfers {
    /// Keys the requests that name a transfer.
    names: SeededState,
    #[cfg(feature = "block1-uploads")]
    uploads: Uploads,
    #[cfg(feature = "block2-cache")]
    bodies: BodyCache,
    /// How long an upload may idle (EXCHANGE_LIFETIME).
    #[cfg(feature = "block1-uploads")]
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
        #[cfg(not(feature = "block1-uploads"))]
        let _ = upload_idle;
        #[cfg(not(feature = "block2-cache"))]
        let _ = bodies_seed;
        BlockTransfers {
            names: SeededState::with_seed(uploads_seed ^ 0x5bd1_e995),
            #[cfg(feature = "block1-uploads")]
            uploads: Uploads::new(config, uploads_seed),
            #[cfg(feature = "block2-cache")]
            bodies: BodyCache::new(config, bodies_seed),
            #[cfg(feature = "block1-uploads")]
            upload_idle,
        }
    }

    /// The transfer request `message` from `remote` belongs to: its method and the options
    /// that name the target resource and the body (Uri-*, Request-Tag).
    pub fn key(&self, remote: SocketAddr, message: &Message<'_>) -> TransferKey {
        // One keyed hash over the method and those options in order (each value with its
        // number and length, so no two lists hash alike by construction).
        let mut h = self.names.build_hasher();
        message.code().0.hash(&mut h);
        for o in message.options() {
            if matches!(
                o.number,
                OptionNumber::URI_HOST
                    | OptionNumber::URI_PORT
                    | OptionNumber::URI_PATH
                    | OptionNumber::URI_QUERY
                    | OptionNumber::REQUEST_TAG
            ) {
                (o.number.0, o.value).hash(&mut h);
            }
        }
        (remote, h.finish())
    }

    /// Takes one Block1 block of upload `key`; see [`Uploads::receive`].
    #[cfg(feature = "block1-uploads")]
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
    #[cfg(feature = "block2-cache")]
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
    #[cfg(feature = "block2-cache")]
    pub fn take_fresh_body(&mut self, now: Instant, key: &TransferKey) -> Option<CachedBody> {
        self.bodies.take_fresh(now, key)
    }

    /// Puts back a body taken with [`BlockTransfers::take_body`], keeping its expiry.
    #[cfg(feature = "block2-cache")]
    pub fn put_back_body(&mut self, key: TransferKey, cached: CachedBody) {
        self.bodies.put_back(key, cached);
    }

    /// When the next idle upload or kept body is to be forgotten.
    pub fn next_expiry(&self) -> Option<Instant> {
        #[cfg(feature = "block1-uploads")]
        let uploads = self.uploads.next_expiry(self.upload_idle);
        #[cfg(not(feature = "block1-uploads"))]
        let uploads = None;
        #[cfg(feature = "block2-cache")]
        let bodies = self.bodies.next_expiry();
        #[cfg(not(feature = "block2-cache"))]
        let bodies = None;
        [uploads, bodies].into_iter().flatten().min()
    }

    /// Forgets uploads idle too long and bodies past their lifetime.
    pub fn expire(&mut self, now: Instant) {
        #[cfg(feature = "block1-uploads")]
        self.uploads.expire(now, self.upload_idle);
        #[cfg(feature = "block2-cache")]
        self.bodies.expire(now);
    }
}
