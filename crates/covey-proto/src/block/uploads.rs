//! Block1 uploads (RFC 7959 §2.5) being reassembled on the server, bounded in count and
//! bytes.

use crate::config::Config;
use crate::hash::{seeded_map, Map};
use crate::storage::fair_share::{heaviest_unverified, judge, ShareLimits, Source, Verdict};
use crate::{Duration, Instant};
use alloc::vec::Vec;
use core::net::SocketAddr;
use covey_core::Block;

/// One upload being reassembled.
#[derive(Debug)]
struct Upload {
    body: Vec<u8>,
    last_active: Instant,
}

/// What to answer to one Block1 block.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum UploadStep {
    /// Stored: answer 2.31 Continue acknowledging this block (with our preferred size).
    Continue(Block),
    /// The last block arrived: hand the whole body to the application.
    Complete(Vec<u8>),
    /// A block is missing or out of order: 4.08 Request Entity Incomplete.
    Incomplete,
    /// Over the size limit: 4.13 Request Entity Too Large with Size1 = the limit.
    TooLarge(usize),
    /// A non-final block whose payload is not exactly the block size: 4.00.
    BadBlock,
    /// No room, and the client's peer or source holds its share already: 5.03 with Max-Age.
    Busy,
}

/// Block1 uploads in progress, keyed by client and request (method, URI, Request-Tag).
#[derive(Debug)]
pub(crate) struct Uploads {
    map: Map<(SocketAddr, u64), Upload>,
    bytes: usize,
    max_uploads: usize,
    max_bytes: usize,
    max_body: usize,
    preferred_szx: u8,
    /// Slots and bytes one peer and one source may hold once there is no room.
    slot_share: ShareLimits,
    byte_share: ShareLimits,
}

impl Uploads {
    pub fn new(config: &Config, seed: u64) -> Uploads {
        Uploads {
            map: seeded_map(seed),
            bytes: 0,
            max_uploads: config.max_uploads,
            max_bytes: config.max_reassembly_bytes,
            max_body: config.max_body_size.min(config.max_reassembly_bytes),
            preferred_szx: config.block_szx,
            slot_share: ShareLimits::new(&config.fair_share, config.max_uploads),
            byte_share: ShareLimits::new(&config.fair_share, config.max_reassembly_bytes),
        }
    }

    /// Takes one Block1 block of the upload `key`; `verified` tells a peer that proved its
    /// address, whose upload may take the place of an unverified peer's in a full table.
    pub fn receive(
        &mut self,
        now: Instant,
        key: (SocketAddr, u64),
        block: Block,
        payload: &[u8],
        size1: Option<u32>,
        verified: &dyn Fn(&SocketAddr) -> bool,
    ) -> UploadStep {
        if block.more && payload.len() != block.size() {
            return UploadStep::BadBlock;
        }
        if block.num == 0 {
            self.remove(&key);
            if size1.is_some_and(|s| s as usize > self.max_body) {
                return UploadStep::TooLarge(self.max_body);
            }
            if self.map.len() >= self.max_uploads
                && !self.make_room(&key.0, 0, 1, self.slot_share, |_| 1, verified)
            {
                return UploadStep::Busy;
            }
            self.map.insert(
                key,
                Upload {
                    body: Vec::new(),
                    last_active: now,
                },
            );
        }
        let Some(upload) = self.map.get_mut(&key) else {
            return UploadStep::Incomplete;
        };
        if upload.body.len() != block.offset() {
            self.remove(&key);
            return UploadStep::Incomplete;
        }
        if upload.body.len() + payload.len() > self.max_body {
            self.remove(&key);
            return UploadStep::TooLarge(self.max_body);
        }
        let need = payload.len();
        if self.bytes + need > self.max_bytes
            && !self.make_room(
                &key.0,
                need,
                need,
                self.byte_share,
                |u| u.body.len(),
                verified,
            )
        {
            self.remove(&key);
            return UploadStep::Busy;
        }
        let Some(upload) = self.map.get_mut(&key) else {
            return UploadStep::Incomplete;
        };
        upload.body.extend_from_slice(payload);
        upload.last_active = now;
        self.bytes += payload.len();
        if block.more {
            // Acknowledge at our preferred size; the client rescales (RFC 7959 §2.5).
            let szx = block.szx.min(self.preferred_szx);
            UploadStep::Continue(Block { szx, ..block })
        } else {
            let body = self.map.remove(&key).map(|u| u.body).unwrap_or_default();
            self.bytes -= body.len();
            UploadStep::Complete(body)
        }
    }

    fn remove(&mut self, key: &(SocketAddr, u64)) {
        if let Some(u) = self.map.remove(key) {
            self.bytes -= u.body.len();
        }
    }

    /// Frees `need` bytes (or, with `need` 0, one slot) for `client`, which wants `amount`
    /// more of what `weight` counts, by forgetting the uploads of holders beyond their
    /// share; false when `client` is beyond its own share or everyone is within theirs.
    fn make_room(
        &mut self,
        client: &SocketAddr,
        need: usize,
        amount: usize,
        limits: ShareLimits,
        weight: fn(&Upload) -> usize,
        verified: &dyn Fn(&SocketAddr) -> bool,
    ) -> bool {
        loop {
            let held = || self.map.iter().map(|(k, u)| (k.0, weight(u)));
            // A verified client takes room from the unverified first, whatever the shares.
            let unverified = verified(client)
                .then(|| heaviest_unverified(held(), verified))
                .flatten();
            let (unverified_of, beyond_share) = match unverified {
                Some(source) => (Some(source), None),
                None => match judge(held, client, amount, limits) {
                    Verdict::Evict(holder) => (None, Some(holder)),
                    _ => return false,
                },
            };
            let chosen = |a: &SocketAddr| match (unverified_of, beyond_share) {
                (Some(source), _) => Source::of(a) == source && !verified(a),
                (None, Some(holder)) => holder.holds(a),
                (None, None) => false,
            };
            // The chosen holder's largest upload, then its least recently active.
            let victim = self
                .map
                .iter()
                .filter(|(k, _)| chosen(&k.0))
                .max_by_key(|(_, u)| (weight(u), core::cmp::Reverse(u.last_active)))
                .map(|(k, _)| *k);
            let Some(victim) = victim else {
                return false;
            };
            self.remove(&victim);
            let room = if need == 0 {
                self.map.len() < self.max_uploads
            } else {
                self.bytes + need <= self.max_bytes
            };
            if room {
                return true;
            }
        }
    }

    /// When the least recently active upload becomes idle for `idle`.
    pub fn next_expiry(&self, idle: Duration) -> Option<Instant> {
        self.map.values().map(|u| u.last_active + idle).min()
    }

    /// Forgets uploads idle for `idle` or longer at `now`.
    pub fn expire(&mut self, now: Instant, idle: Duration) {
        let mut freed = 0;
        self.map.retain(|_, u| {
            let keep = u.last_active + idle > now;
            if !keep {
                freed += u.body.len();
            }
            keep
        });
        self.bytes -= freed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{IpAddr, Ipv6Addr};

    fn block(num: u32, more: bool, szx: u8) -> Block {
        Block::new(num, more, szx).unwrap()
    }

    #[test]
    fn uploads_reassemble_in_order_and_are_bounded() {
        let config = Config {
            max_body_size: 100,
            block_szx: 1,
            ..Config::default()
        };
        let mut up = Uploads::new(&config, 1);
        let key = (SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 1), 9);
        let t = Instant::ZERO;
        assert_eq!(
            up.receive(t, key, block(0, true, 2), &[1; 64], Some(80), &|_| true),
            UploadStep::Continue(block(0, true, 1))
        );
        // The client rescales to 32-byte blocks: block 2 at offset 64.
        assert_eq!(
            up.receive(t, key, block(2, false, 1), &[2; 16], None, &|_| true),
            UploadStep::Complete([[1u8; 64].as_slice(), &[2; 16]].concat())
        );
        assert_eq!(
            up.receive(t, key, block(3, true, 1), &[0; 32], None, &|_| true),
            UploadStep::Incomplete
        );
        assert_eq!(
            up.receive(t, key, block(0, true, 2), &[0; 64], Some(101), &|_| true),
            UploadStep::TooLarge(100)
        );
        assert_eq!(
            up.receive(t, key, block(0, true, 2), &[0; 10], None, &|_| true),
            UploadStep::BadBlock
        );
        assert_eq!(
            up.receive(t, key, block(0, true, 2), &[0; 64], None, &|_| true),
            UploadStep::Continue(block(0, true, 1))
        );
        assert_eq!(
            up.receive(t, key, block(1, true, 2), &[0; 64], None, &|_| true),
            UploadStep::TooLarge(100)
        );
        assert_eq!(up.bytes, 0);
    }
}
