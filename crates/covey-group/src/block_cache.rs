//! Replies too large for one datagram, kept for a while so the client's later Block2
//! requests get slices of the same body instead of a new fan-out.

use covey_core::{Code, ContentFormat};
use covey_proto::Instant;
use std::collections::VecDeque;
use std::net::SocketAddr;

/// Replies kept at once.
const CAPACITY: usize = 64;

/// Which request a reply answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheKey {
    pub source: SocketAddr,
    pub method: Code,
    pub path: Vec<String>,
    pub query: Vec<String>,
    pub accept: Option<ContentFormat>,
}

/// A reply kept for block-wise retrieval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedReply {
    pub code: Code,
    pub content_format: Option<ContentFormat>,
    pub body: Vec<u8>,
    pub etag: [u8; 4],
}

/// A bounded cache of large replies.
#[derive(Debug, Default)]
pub(crate) struct BlockCache {
    entries: VecDeque<(CacheKey, CachedReply, Instant)>,
}

impl BlockCache {
    /// The reply to `key`, if still kept at `now`.
    pub fn get(&mut self, key: &CacheKey, now: Instant) -> Option<CachedReply> {
        self.entries.retain(|(_, _, expires)| *expires > now);
        self.entries
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, r, _)| r.clone())
    }

    /// Keeps `reply` to `key` until `expires`, forgetting the oldest when full.
    pub fn put(&mut self, key: CacheKey, reply: CachedReply, expires: Instant) {
        self.entries.retain(|(k, _, _)| *k != key);
        if self.entries.len() >= CAPACITY {
            self.entries.pop_front();
        }
        self.entries.push_back((key, reply, expires));
    }
}

/// A 4-byte entity tag of `body` (FNV-1a).
pub(crate) fn etag(body: &[u8]) -> [u8; 4] {
    let mut h: u32 = 0x811c_9dc5;
    for b in body {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.to_be_bytes()
}
