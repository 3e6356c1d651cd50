//! Per-peer state: message-ID allocation, the RTO estimator, PROBING_RATE and the references
//! that keep a peer. The exchange layer keeps its NSTART accounting per peer itself
//! (exchange/nstart.rs) and says which peers it is busy with when one is to be evicted.

use crate::cc::{PeerEstimator, RtoEstimator};
use crate::config::Config;
use crate::hash::{seeded_map, AddrKey, Map};
use crate::message::outbox::LocalId;
use crate::storage::fair_share::{Beyond, RefusalMemo};
use crate::storage::slab::{Slab, SlabKey};
use crate::time::split_nanos;
use crate::{Duration, Instant};
use core::net::SocketAddr;

/// Message IDs are reused block by block: 16 blocks of 4096.
const MID_BLOCKS: usize = 16;
const MID_BLOCK_SHIFT: u32 = 12;
// One bit of `Peer::blocks_used` per block.
const _: () = assert!(MID_BLOCKS <= u16::BITS as usize);

/// State kept for one remote endpoint.
#[derive(Debug)]
struct Peer {
    addr: SocketAddr,
    estimator: PeerEstimator,
    next_mid: u16,
    current_block: Option<usize>,
    /// When a MID of each block was last handed out, in whole seconds rounded up, for the
    /// blocks `blocks_used` marks: the reuse interval is minutes (EXCHANGE_LIFETIME), so
    /// seconds lose nothing that matters, and 32 bits of them (136 years) never wrap; half
    /// an `Instant`'s 8 bytes, 64 bytes less per peer.
    block_last_used: [u32; MID_BLOCKS],
    /// Bit `b`: block `b` has handed out a MID.
    blocks_used: u16,
    /// Exchanges, transmissions and observations that point at this peer.
    refs: usize,
    last_used: Instant,
    /// The last exchange timed out and nothing was heard since: sending is limited to
    /// PROBING_RATE (RFC 7252 §4.7).
    unresponsive: bool,
    /// When the next message may go to an unresponsive peer.
    probe_allowed_at: Instant,
    /// The local socket the peer last reached, to answer from.
    local: LocalId,
}

impl Peer {
    /// The next message ID, or `None` when reusing it now would break the reuse interval.
    fn allocate_mid(&mut self, now: Instant, reuse: Duration) -> Option<u16> {
        let mid = self.next_mid;
        let block = (mid >> MID_BLOCK_SHIFT) as usize;
        let bit = 1u16 << block;
        if self.current_block != Some(block) {
            // Whole seconds since the last use, rounded down, against the interval rounded
            // up: the block is reentered only once the interval has surely passed.
            let since = seconds_floor(now).saturating_sub(u64::from(self.block_last_used[block]));
            let interval = reuse.as_secs() + u64::from(reuse.subsec_nanos() > 0);
            if self.blocks_used & bit != 0 && since < interval {
                return None;
            }
            self.current_block = Some(block);
        }
        self.block_last_used[block] = seconds_ceil(now);
        self.blocks_used |= bit;
        self.next_mid = mid.wrapping_add(1);
        Some(mid)
    }
}

/// `t`'s whole seconds since the engine's epoch.
fn seconds_floor(t: Instant) -> u64 {
    split_nanos(t.as_nanos()).0
}

/// `t` in seconds, rounded up, as 32 bits (saturating after 136 years).
fn seconds_ceil(t: Instant) -> u32 {
    let (secs, nanos) = split_nanos(t.as_nanos());
    let secs = secs + u64::from(nanos > 0);
    u32::try_from(secs).unwrap_or(u32::MAX)
}

/// A handle to a peer.
pub(crate) type PeerKey = SlabKey;

/// All peers, bounded by `max_peers`; idle peers are evicted least-recently-used first.
#[derive(Debug)]
pub(crate) struct PeerTable {
    peers: Slab<Peer>,
    by_addr: Map<AddrKey, PeerKey>,
    /// The last source refused a new peer while the table was full.
    refusals: RefusalMemo,
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

    /// The peer for `addr`, created (evicting an idle one if needed) when absent; `busy`
    /// tells the peers an exchange of ours is in flight or queued to, which stay.
    pub fn get_or_insert(
        &mut self,
        addr: SocketAddr,
        now: Instant,
        config: &Config,
        first_mid: u16,
        busy: impl Fn(PeerKey) -> bool,
    ) -> Option<PeerKey> {
        if let Some(k) = self.lookup(&addr) {
            return Some(k);
        }
        if self.peers.is_full() && !self.evict_idle(busy) {
            return None;
        }
        let peer = Peer {
            addr,
            estimator: config.congestion_control.estimator(&config.transmission),
            next_mid: first_mid,
            current_block: None,
            block_last_used: [0; MID_BLOCKS],
            blocks_used: 0,
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

    /// Forgets the least recently used peer that nothing refers to and `busy` does not
    /// name; false if there is none.
    pub fn evict_idle(&mut self, busy: impl Fn(PeerKey) -> bool) -> bool {
        self.evict_idle_of(|_| true, busy)
    }

    /// Forgets the least recently used peer at an address `chosen` accepts that nothing
    /// refers to and `busy` does not name; false if there is none.
    pub fn evict_idle_of(
        &mut self,
        chosen: impl Fn(&SocketAddr) -> bool,
        busy: impl Fn(PeerKey) -> bool,
    ) -> bool {
        let victim = self
            .peers
            .iter()
            .filter(|&(k, p)| p.refs == 0 && !busy(k))
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

    /// Whether the last source refused a new peer while the table was full refuses `addr`.
    pub fn refuses(&self, addr: &SocketAddr) -> bool {
        self.refusals.refuses(addr)
    }

    /// Remembers the source refused a new peer while the table was full.
    pub fn remember_refusal(&mut self, beyond: Beyond) {
        self.refusals.remember(beyond);
    }

    /// The address of every peer.
    pub fn addrs(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.peers.iter().map(|(_, p)| p.addr)
    }

    /// Every peer's address and current RTO estimate.
    pub fn rtos(&self) -> impl Iterator<Item = (SocketAddr, Duration)> + '_ {
        self.peers
            .iter()
            .map(|(_, p)| (p.addr, p.estimator.current_rto()))
    }

    /// The peer at an address `chosen` accepts that may be freed: not one `busy` names (an
    /// exchange of ours to it is in flight or queued); one nothing refers to first, else
    /// the least recently used.
    pub fn to_free(
        &self,
        chosen: impl Fn(&SocketAddr) -> bool,
        busy: impl Fn(PeerKey) -> bool,
    ) -> Option<PeerKey> {
        self.peers
            .iter()
            .filter(|&(k, p)| chosen(&p.addr) && !busy(k))
            .min_by_key(|(_, p)| (p.refs > 0, p.last_used))
            .map(|(k, _)| k)
    }

    /// Forgets peer `key` if nothing refers to it; false if it stays.
    pub fn remove_unreferenced(&mut self, key: PeerKey) -> bool {
        self.peers.get(key).is_some_and(|p| p.refs == 0) && self.remove(key)
    }

    /// The address of peer `key`.
    pub fn addr(&self, key: PeerKey) -> Option<SocketAddr> {
        self.peers.get(key).map(|p| p.addr)
    }

    /// The local socket peer `key` last reached.
    pub fn local(&self, key: PeerKey) -> Option<LocalId> {
        self.peers.get(key).map(|p| p.local)
    }

    /// Remembers `local` as the socket peer `key` last reached.
    pub fn set_local(&mut self, key: PeerKey, local: LocalId) {
        if let Some(p) = self.peers.get_mut(key) {
            p.local = local;
        }
    }

    /// The next message ID towards peer `key`, or `None` when there is no such peer or
    /// reusing the ID now would break the reuse interval.
    pub fn allocate_mid(&mut self, key: PeerKey, now: Instant, reuse: Duration) -> Option<u16> {
        self.peers.get_mut(key)?.allocate_mid(now, reuse)
    }

    /// The RTO estimator of peer `key`.
    pub fn estimator(&self, key: PeerKey) -> Option<&PeerEstimator> {
        self.peers.get(key).map(|p| &p.estimator)
    }

    /// The RTO estimator of peer `key`, to feed.
    pub fn estimator_mut(&mut self, key: PeerKey) -> Option<&mut PeerEstimator> {
        self.peers.get_mut(key).map(|p| &mut p.estimator)
    }

    /// One more exchange, transmission or observation refers to peer `key`.
    pub fn hold(&mut self, key: PeerKey) {
        if let Some(p) = self.peers.get_mut(key) {
            p.refs += 1;
        }
    }

    /// One exchange, transmission or observation no longer refers to peer `key`.
    pub fn release(&mut self, key: PeerKey) {
        if let Some(p) = self.peers.get_mut(key) {
            p.refs = p.refs.saturating_sub(1);
        }
    }

    /// Peer `key` was used at `now` (the least recently used idle peer is evicted first).
    pub fn touch(&mut self, key: PeerKey, now: Instant) {
        if let Some(p) = self.peers.get_mut(key) {
            p.last_used = now;
        }
    }

    /// An exchange with peer `key` timed out or it is unreachable: from `now` on, sending
    /// to it is limited to PROBING_RATE until it is heard from.
    pub fn mark_unresponsive(&mut self, key: PeerKey, now: Instant) {
        if let Some(p) = self.peers.get_mut(key) {
            p.unresponsive = true;
            p.probe_allowed_at = now;
        }
    }

    /// Peer `key` was heard from: it is no longer limited to PROBING_RATE.
    pub fn mark_responsive(&mut self, key: PeerKey) {
        if let Some(p) = self.peers.get_mut(key) {
            p.unresponsive = false;
        }
    }

    /// When the next message may go to peer `key`, if it is unresponsive and that is
    /// later than `now`.
    #[cfg(feature = "client")]
    pub fn probe_wait(&self, key: PeerKey, now: Instant) -> Option<Instant> {
        let p = self.peers.get(key)?;
        (p.unresponsive && now < p.probe_allowed_at).then_some(p.probe_allowed_at)
    }

    /// Spends `wait` of peer `key`'s PROBING_RATE budget from `now`, if it is unresponsive.
    #[cfg(feature = "client")]
    pub fn charge_probe(&mut self, key: PeerKey, now: Instant, wait: Duration) {
        if let Some(p) = self.peers.get_mut(key) {
            if p.unresponsive {
                p.probe_allowed_at = now + wait;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    fn addr(i: u32) -> SocketAddr {
        format!("192.0.2.{}:5683", i).parse().unwrap()
    }

    /// A full table of `n` peers, peer `i` last used at second `i + 1`.
    fn table(n: usize) -> (PeerTable, alloc::vec::Vec<PeerKey>) {
        let config = Config {
            max_peers: n,
            ..Config::default()
        };
        let mut peers = PeerTable::new(&config, 7);
        let keys = (0..n)
            .map(|i| {
                let now = Instant::from_secs(i as u64 + 1);
                peers.get_or_insert(addr(i as u32), now, &config, 0, |_| false)
            })
            .map(Option::unwrap)
            .collect();
        assert!(peers.is_full());
        (peers, keys)
    }

    #[test]
    fn seconds_round_as_the_division_by_a_billion_does() {
        for n in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            u64::from(u32::MAX) * 1_000_000_000,
            u64::from(u32::MAX) * 1_000_000_000 + 1,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let t = Instant::from_nanos(n);
            assert_eq!(seconds_floor(t), n / 1_000_000_000, "{n}");
            let ceil = u32::try_from(n.div_ceil(1_000_000_000)).unwrap_or(u32::MAX);
            assert_eq!(seconds_ceil(t), ceil, "{n}");
        }
    }

    #[test]
    fn a_block_of_message_ids_is_reentered_only_once_the_reuse_interval_has_passed() {
        let (mut peers, k) = table(1);
        let reuse = Duration::from_millis(247_500);
        let start = Instant::from_millis(10_400);
        let first = peers.allocate_mid(k[0], start, reuse).unwrap();
        // The rest of the 65 536 IDs, a block ahead of the first's, all at once.
        for _ in 1..65_536 {
            assert!(peers.allocate_mid(k[0], start, reuse).is_some());
        }
        // Back at the first block: refused until 247.5 s after its last use, whatever the
        // rounding to seconds, then handed out again from where it left off.
        let almost = start.saturating_add(reuse - Duration::from_millis(1));
        assert_eq!(peers.allocate_mid(k[0], almost, reuse), None);
        let later = start.saturating_add(reuse + Duration::from_secs(2));
        assert_eq!(peers.allocate_mid(k[0], later, reuse), Some(first));
    }

    #[test]
    fn eviction_spares_referenced_and_busy_peers_and_takes_the_least_recently_used() {
        let (mut peers, k) = table(4);
        peers.hold(k[0]);
        assert!(peers.evict_idle(|key| key == k[1]));
        assert_eq!(peers.lookup(&addr(2)), None);
        assert_eq!(peers.addr(k[0]), Some(addr(0)));
        assert_eq!(peers.addr(k[1]), Some(addr(1)));
        peers.release(k[0]);
        assert!(peers.evict_idle_of(|a| *a != addr(0), |_| false));
        assert_eq!(peers.lookup(&addr(1)), None);
        assert!(!peers.evict_idle(|key| key == k[0] || key == k[3]));
    }

    #[test]
    fn the_peer_to_free_is_an_unreferenced_one_first_else_the_least_recently_used() {
        let (mut peers, k) = table(3);
        peers.hold(k[0]);
        peers.hold(k[1]);
        assert_eq!(peers.to_free(|_| true, |_| false), Some(k[2]));
        assert_eq!(peers.to_free(|_| true, |key| key == k[2]), Some(k[0]));
        peers.touch(k[0], Instant::from_secs(10));
        assert_eq!(peers.to_free(|_| true, |key| key == k[2]), Some(k[1]));
        assert!(!peers.remove_unreferenced(k[1]));
        assert!(peers.remove_unreferenced(k[2]));
        assert_eq!(peers.addr(k[2]), None);
    }

    #[test]
    #[cfg(feature = "client")]
    fn an_unresponsive_peer_waits_for_its_probe_budget_until_heard_from() {
        let (mut peers, k) = table(1);
        let now = Instant::from_secs(5);
        let second = Duration::from_secs(1);
        peers.charge_probe(k[0], now, second);
        assert_eq!(peers.probe_wait(k[0], now), None);
        peers.mark_unresponsive(k[0], now);
        assert_eq!(peers.probe_wait(k[0], now), None);
        peers.charge_probe(k[0], now, second);
        assert_eq!(peers.probe_wait(k[0], now), Some(now + second));
        assert_eq!(peers.probe_wait(k[0], now + second), None);
        peers.mark_responsive(k[0]);
        assert_eq!(peers.probe_wait(k[0], now), None);
    }
}
