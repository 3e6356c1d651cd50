//! Response bodies served block by block (RFC 7959 §2.4), kept so every Block2 request of
//! a transfer gets the same representation.

use crate::config::Config;
use crate::hash::{seeded_map, Map};
use crate::storage::fair_share::{
    heaviest_unverified, judge, Holder, ShareLimits, Source, Verdict,
};
use crate::{Duration, Instant};
use alloc::vec::Vec;
use core::net::SocketAddr;

/// A response body being served block by block, kept so that later Block2 requests get
/// the same representation without asking the application again (and so a non-idempotent
/// POST is not executed once per block).
#[derive(Debug)]
pub(crate) struct CachedBody {
    /// The response encoded without payload: its code and the application's options.
    pub head: Vec<u8>,
    pub body: Vec<u8>,
    expires: Instant,
}

/// Response bodies of block-wise transfers in progress, bounded in count and bytes.
#[derive(Debug)]
pub(crate) struct BodyCache {
    map: Map<(SocketAddr, u64), CachedBody>,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
    lifetime: Duration,
    /// Entries and bytes one peer and one source may hold once the cache is full.
    entry_share: ShareLimits,
    byte_share: ShareLimits,
}

impl BodyCache {
    pub fn new(config: &Config, seed: u64) -> BodyCache {
        BodyCache {
            map: seeded_map(seed),
            bytes: 0,
            max_entries: config.max_uploads,
            max_bytes: config.max_reassembly_bytes,
            lifetime: config.block_cache_lifetime,
            entry_share: ShareLimits::new(&config.fair_share, config.max_uploads),
            byte_share: ShareLimits::new(&config.fair_share, config.max_reassembly_bytes),
        }
    }

    /// Keeps `body` for the transfer `key`, evicting the soonest-expiring entries if needed;
    /// `verified` tells a peer that proved its address, whose body takes the place of an
    /// unverified peer's first.
    pub fn insert(
        &mut self,
        now: Instant,
        key: (SocketAddr, u64),
        head: Vec<u8>,
        body: Vec<u8>,
        verified: &dyn Fn(&SocketAddr) -> bool,
    ) {
        self.take(&key);
        if body.len() > self.max_bytes {
            return;
        }
        while self.map.len() >= self.max_entries || self.bytes + body.len() > self.max_bytes {
            let unverified = verified(&key.0)
                .then(|| self.unverified_victim(verified))
                .flatten();
            let Some(victim) = unverified.or_else(|| self.victim(&key.0, body.len())) else {
                return;
            };
            self.take(&victim);
        }
        self.bytes += body.len();
        self.map.insert(
            key,
            CachedBody {
                head,
                body,
                expires: now + self.lifetime,
            },
        );
    }

    /// The soonest-expiring body of the source whose unverified peers hold the most bytes.
    fn unverified_victim(
        &self,
        verified: &dyn Fn(&SocketAddr) -> bool,
    ) -> Option<(SocketAddr, u64)> {
        let held = self.map.iter().map(|(k, c)| (k.0, c.body.len()));
        let source = heaviest_unverified(held, verified)?;
        self.map
            .iter()
            .filter(|(k, _)| Source::of(&k.0) == source && !verified(&k.0))
            .min_by_key(|(_, c)| c.expires)
            .map(|(k, _)| *k)
    }

    /// The body to forget so `client` can keep one of `len` bytes: the soonest-expiring of
    /// the holder most beyond its share (of entries, then of bytes), of `client` itself when
    /// it is the one beyond, or of anyone when all are within their share.
    fn victim(&self, client: &SocketAddr, len: usize) -> Option<(SocketAddr, u64)> {
        let (limits, amount, weight): (_, _, fn(&CachedBody) -> usize) =
            if self.map.len() >= self.max_entries {
                (self.entry_share, 1, |_| 1)
            } else {
                (self.byte_share, len, |c| c.body.len())
            };
        let held = || self.map.iter().map(|(k, c)| (k.0, weight(c)));
        let owner = match judge(held, client, amount, limits) {
            Verdict::Evict(holder) => holder,
            Verdict::Refuse(_) => Holder::Peer(*client),
            Verdict::Full => {
                return self
                    .map
                    .iter()
                    .min_by_key(|(_, c)| c.expires)
                    .map(|(k, _)| *k)
            }
        };
        self.map
            .iter()
            .filter(|(k, _)| owner.holds(&k.0))
            .min_by_key(|(_, c)| c.expires)
            .map(|(k, _)| *k)
    }

    /// Removes and returns the body of transfer `key`.
    pub fn take(&mut self, key: &(SocketAddr, u64)) -> Option<CachedBody> {
        let c = self.map.remove(key)?;
        self.bytes -= c.body.len();
        Some(c)
    }

    /// Whether a body is kept for transfer `key` (asked before a held response is sent).
    #[cfg(any(feature = "address-validation", all(test, feature = "fair-share")))]
    pub fn contains(&self, key: &(SocketAddr, u64)) -> bool {
        self.map.contains_key(key)
    }

    /// Removes and returns the body of transfer `key`, unless it expired by `now`.
    pub fn take_fresh(&mut self, now: Instant, key: &(SocketAddr, u64)) -> Option<CachedBody> {
        self.take(key).filter(|c| c.expires > now)
    }

    /// Puts back a body taken with `take`, keeping its expiry.
    pub fn put_back(&mut self, key: (SocketAddr, u64), cached: CachedBody) {
        self.bytes += cached.body.len();
        self.map.insert(key, cached);
    }

    /// When the soonest-expiring body expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.map.values().map(|c| c.expires).min()
    }

    /// Forgets bodies whose lifetime ended.
    pub fn expire(&mut self, now: Instant) {
        let mut freed = 0;
        self.map.retain(|_, c| {
            let keep = c.expires > now;
            if !keep {
                freed += c.body.len();
            }
            keep
        });
        self.bytes -= freed;
    }
}

// Its one test is of fair shares.
#[cfg(all(test, feature = "fair-share"))]
mod tests {
    use super::*;
    use alloc::{format, vec};

    fn addr(host: u8) -> SocketAddr {
        format!("192.0.{host}.1:5683").parse().unwrap()
    }

    #[test]
    fn a_verified_client_s_body_takes_the_place_of_an_unverified_one() {
        let config = Config {
            max_uploads: 4,
            ..Config::default()
        };
        let mut cache = BodyCache::new(&config, 1);
        let t = Instant::from_secs(1);
        let good = addr(9);
        let verified = |a: &SocketAddr| *a == good;
        // The verified client's body first, the soonest to expire.
        cache.insert(t, (good, 0), vec![], vec![0; 100], &verified);
        // Two silent hosts fill the rest, each within its share.
        for (i, host) in [2, 2, 3].into_iter().enumerate() {
            let later = t + Duration::from_secs(1 + i as u64);
            cache.insert(
                later,
                (addr(host), i as u64),
                vec![],
                vec![0; 100],
                &verified,
            );
        }
        // Another body of the verified client evicts an unverified one, not its own.
        cache.insert(t, (good, 1), vec![], vec![0; 100], &verified);
        assert!(cache.contains(&(good, 0)) && cache.contains(&(good, 1)));
        assert_eq!(cache.map.len(), 4);
    }
}
