//! Per-peer state: message-ID allocation, the RTO estimator and NSTART accounting.

use crate::cc::PeerEstimator;
use crate::config::Config;
use crate::hash::{seeded_map, AddrKey, Map};
use crate::message::outbox::LocalId;
use crate::storage::fair_share::RefusalMemo;
use crate::storage::slab::{Slab, SlabKey};
use crate::{Duration, Instant};
use core::net::SocketAddr;

/// Message IDs are reused block by block: 16 blocks of 4096.
const MID_BLOCKS: usize = 16;
const MID_BLOCK_SHIFT: u32 = 12;

/// State kept for one remote endpoint.
#[derive(Debug)]
pub(crate) struct Peer {
    pub addr: SocketAddr,
    pub estimator: PeerEstimator,
    next_mid: u16,
    current_block: Option<usize>,
    /// Last time a MID of each block was handed out.
    block_last_used: [Option<Instant>; MID_BLOCKS],
    /// Exchanges counting against NSTART.
    pub in_flight: usize,
    /// Exchanges waiting for an NSTART slot: an intrusive FIFO through the exchange table.
    pub queue_head: Option<SlabKey>,
    pub queue_tail: Option<SlabKey>,
    pub queue_len: usize,
    /// Exchanges, transmissions and observations that point at this peer.
    pub refs: usize,
    pub last_used: Instant,
    /// The last exchange timed out and nothing was heard since: sending is limited to
    /// PROBING_RATE (RFC 7252 §4.7).
    pub unresponsive: bool,
    /// When the next message may go to an unresponsive peer.
    pub probe_allowed_at: Instant,
    /// The local socket the peer last reached, to answer from.
    pub local: LocalId,
}

impl Peer {
    /// The next message ID, or `None` when reusing it now would break the reuse interval.
    pub fn allocate_mid(&mut self, now: Instant, reuse: Duration) -> Option<u16> {
        let mid = self.next_mid;
        let block = (mid >> MID_BLOCK_SHIFT) as usize;
        if self.current_block != Some(block) {
            if let Some(last) = self.block_last_used[block] {
                if now.saturating_duration_since(last) < reuse {
                    return None;
                }
            }
            self.current_block = Some(block);
        }
        self.block_last_used[block] = Some(now);
        self.next_mid = mid.wrapping_add(1);
        Some(mid)
    }
}

/// A handle to a peer.
pub(crate) type PeerKey = SlabKey;

/// All peers, bounded by `max_peers`; idle peers are evicted least-recently-used first.
#[derive(Debug)]
pub(crate) struct PeerTable {
    peers: Slab<Peer>,
    by_addr: Map<AddrKey, PeerKey>,
    /// The last source refused a new peer while the table was full.
    pub refusals: RefusalMemo,
}

impl PeerTable {
    pub fn new(config: &Config, seed: u64) -> PeerTable {
        PeerTable {
            peers: Slab::with_capacity(config.max_peers),
            by_addr: seeded_map(seed),
            refusals: RefusalMemo::default(),
        }
    }

    pub fn lookup(&self, addr: &SocketAddr) -> Option<PeerKey> {
        self.by_addr.get(&AddrKey(*addr)).copied()
    }

    /// The peer for `addr`, created (evicting an idle one if needed) when absent.
    pub fn get_or_insert(
        &mut self,
        addr: SocketAddr,
        now: Instant,
        config: &Config,
        first_mid: u16,
    ) -> Option<PeerKey> {
        if let Some(k) = self.lookup(&addr) {
            return Some(k);
        }
        if self.peers.is_full() && !self.evict_idle() {
            return None;
        }
        let peer = Peer {
            addr,
            estimator: config.congestion_control.estimator(&config.transmission),
            next_mid: first_mid,
            current_block: None,
            block_last_used: [None; MID_BLOCKS],
            in_flight: 0,
            queue_head: None,
            queue_tail: None,
            queue_len: 0,
            refs: 0,
            last_used: now,
            unresponsive: false,
            probe_allowed_at: now,
            local: LocalId::default(),
        };
        let key = self.peers.insert(peer).ok()?;
        self.by_addr.insert(AddrKey(addr), key);
        Some(key)
    }

    /// Forgets the least recently used peer that nothing refers to; false if there is none.
    pub fn evict_idle(&mut self) -> bool {
        self.evict_idle_of(|_| true)
    }

    /// Forgets the least recently used peer at an address `chosen` accepts that nothing
    /// refers to; false if there is none.
    pub fn evict_idle_of(&mut self, chosen: impl Fn(&SocketAddr) -> bool) -> bool {
        let victim = self
            .peers
            .iter()
            .filter(|(_, p)| p.refs == 0 && p.in_flight == 0 && p.queue_len == 0)
            .filter(|(_, p)| chosen(&p.addr))
            .min_by_key(|(_, p)| p.last_used)
            .map(|(k, _)| k);
        victim.is_some_and(|k| self.remove(k))
    }

    /// Forgets peer `key`; the caller has ended whatever referred to it.
    pub fn remove(&mut self, key: PeerKey) -> bool {
        let Some(peer) = self.peers.remove(key) else {
            return false;
        };
        self.refusals.entry_removed();
        self.by_addr.remove(&AddrKey(peer.addr));
        true
    }

    /// True when no further peer fits without evicting one.
    pub fn is_full(&self) -> bool {
        self.peers.is_full()
    }

    /// How many peers fit.
    pub fn capacity(&self) -> usize {
        self.peers.capacity()
    }

    /// Every peer with its key.
    pub fn entries(&self) -> impl Iterator<Item = (PeerKey, &Peer)> {
        self.peers.iter()
    }

    pub fn get(&self, key: PeerKey) -> Option<&Peer> {
        self.peers.get(key)
    }

    pub fn get_mut(&mut self, key: PeerKey) -> Option<&mut Peer> {
        self.peers.get_mut(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Peer> {
        self.peers.iter().map(|(_, p)| p)
    }
}
