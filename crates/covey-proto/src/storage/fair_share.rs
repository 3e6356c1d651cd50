//! Fair shares of a shared table: who holds how much of it, by peer (address and port) and by
//! source (an IPv4 /24, or an IPv6 /64, the smallest blocks one site is usually given), so
//! that a full table takes room from a holder beyond its share instead of refusing everyone.
//! A second axis keeps a few addresses from defeating the shares: a peer that proved its
//! address (or authenticated) may take the place of an unverified peer's entry in a full
//! table, so unverified traffic only ever holds what verified peers do not need.

use crate::config::FairShare;
use core::net::{IpAddr, SocketAddr};

/// The traffic source a peer belongs to: its IPv4 /24 or its IPv6 /64 prefix (the smallest
/// blocks one site is usually given), so one site counts once whatever its addresses and
/// ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Source(u128);

impl Source {
    /// The source of `addr`; an IPv4-mapped IPv6 address counts as the IPv4 address.
    pub fn of(addr: &SocketAddr) -> Source {
        match addr.ip().to_canonical() {
            IpAddr::V4(v4) => Source(u128::from(u32::from(v4) & 0xFFFF_FF00) | 1 << 127),
            IpAddr::V6(v6) => Source(u128::from(v6) & !(u128::from(u64::MAX))),
        }
    }
}

#[cfg(feature = "fair-share")]
/// The source whose unverified peers hold the most of a table (by weight), found with one
/// heavy-hitter pass over `entries`; `verified` tells a verified peer. A verified newcomer
/// to a full table takes its place from one of that source's unverified entries.
// Not inlined: the tally's counters (about half a KiB each on a 32-bit target) then take
// stack only while a full table is judged, not in every frame of the receive path that
// might call this (on a mote that cut the stack's peak by kilobytes).
#[inline(never)]
pub(crate) fn heaviest_unverified<I>(
    entries: I,
    verified: impl Fn(&SocketAddr) -> bool,
) -> Option<Source>
where
    I: Iterator<Item = (SocketAddr, usize)>,
{
    let mut sources = HeavyHitters::<Source>::new(CANDIDATES);
    for (addr, held) in entries.filter(|(addr, _)| !verified(addr)) {
        sources.add(Source::of(&addr), held);
    }
    sources.by_weight().next().map(|(source, _)| source)
}

/// How much of one table a peer and a source may hold once it is full (at least one entry,
/// or one unit of whatever the table counts).
#[cfg(feature = "fair-share")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShareLimits {
    pub peer: usize,
    pub source: usize,
    /// Heavy-hitter candidates needed to find any peer, and any source, beyond its share:
    /// one more than the holders of exactly a share each a full table can have.
    peer_candidates: usize,
    source_candidates: usize,
}

/// Without the `fair-share` feature there are no shares to hold.
#[cfg(not(feature = "fair-share"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShareLimits;

#[cfg(not(feature = "fair-share"))]
impl ShareLimits {
    /// No limits: nobody is judged beyond a share.
    pub fn new(_: &FairShare, _: usize) -> ShareLimits {
        ShareLimits
    }
}

#[cfg(feature = "fair-share")]
impl ShareLimits {
    /// The limits for a table of `capacity` entries (or bytes), with the shares of a
    /// validated `Config` (1 to 100 %, the source's at least the peer's).
    pub fn new(share: &FairShare, capacity: usize) -> ShareLimits {
        let part = |p: u8| (capacity * usize::from(p) / 100).max(1);
        let candidates = |p: u8| (100 / usize::from(p) + 1).min(CANDIDATES);
        ShareLimits {
            peer: part(share.peer_percent),
            source: part(share.source_percent),
            peer_candidates: candidates(share.peer_percent),
            source_candidates: candidates(share.source_percent),
        }
    }
}

/// A holder whose entries a full table gives up first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    #[cfg_attr(
        not(any(feature = "fair-share", feature = "block2-cache")),
        allow(dead_code)
    )]
    Peer(SocketAddr),
    Source(Source),
}

impl Holder {
    /// Whether the entry of `addr` belongs to this holder.
    pub fn holds(&self, addr: &SocketAddr) -> bool {
        match self {
            Holder::Peer(p) => p == addr,
            Holder::Source(s) => Source::of(addr) == *s,
        }
    }
}

/// What a full table does for a newcomer.
// Without fair shares only `Full` is ever judged.
#[cfg_attr(not(feature = "fair-share"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The newcomer would go beyond its share: refuse it.
    Refuse(Beyond),
    /// Everybody is within their share: the table is full for everyone.
    Full,
    /// Evict an entry of this holder, beyond its share, to make room.
    Evict(Holder),
}

/// A holder found beyond its share, and by how much: it stays beyond until that many of
/// its entries are gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Beyond {
    pub holder: Holder,
    pub excess: usize,
}

/// The last refusal of a full table, so a flood from the same holder is refused without
/// scanning the table for each datagram: valid until as many entries left the table as the
/// holder was beyond its share.
#[derive(Debug, Default)]
pub(crate) struct RefusalMemo {
    last: Option<Beyond>,
}

impl RefusalMemo {
    /// Whether `newcomer` is known to be beyond its share still.
    pub fn refuses(&self, newcomer: &SocketAddr) -> bool {
        // Without fair shares nobody is judged beyond one, so nothing is remembered.
        cfg!(feature = "fair-share")
            && self
                .last
                .is_some_and(|b| b.excess > 0 && b.holder.holds(newcomer))
    }

    /// Remembers a refusal.
    pub fn remember(&mut self, beyond: Beyond) {
        self.last = Some(beyond);
    }

    /// An entry left the table: the holder may be one entry nearer its share.
    pub fn entry_removed(&mut self) {
        // Without fair shares `refuses` never reads the memo: nothing to count down.
        if !cfg!(feature = "fair-share") {
            return;
        }
        if let Some(b) = &mut self.last {
            b.excess = b.excess.saturating_sub(1);
        }
    }
}

/// Without the `fair-share` feature (a node's server) a full table is full for everyone:
/// nobody is judged beyond a share, and idle entries are all that make room.
#[cfg(not(feature = "fair-share"))]
pub(crate) fn judge<F, I>(_: F, _: &SocketAddr, _: usize, _: ShareLimits) -> Verdict
where
    F: Fn() -> I,
    I: Iterator<Item = (SocketAddr, usize)>,
{
    Verdict::Full
}

/// Without the `fair-share` feature verified peers take no unverified peer's place.
#[cfg(not(feature = "fair-share"))]
pub(crate) fn heaviest_unverified<I>(_: I, _: impl Fn(&SocketAddr) -> bool) -> Option<Source>
where
    I: Iterator<Item = (SocketAddr, usize)>,
{
    None
}

/// Without the `fair-share` feature no holder is beyond its share.
#[cfg(not(feature = "fair-share"))]
pub(crate) fn heaviest<F, I>(_: F, _: ShareLimits) -> Option<Holder>
where
    F: Fn() -> I,
    I: Iterator<Item = (SocketAddr, usize)>,
{
    None
}

#[cfg(feature = "fair-share")]
/// What a full table of `entries()` (each a holder's address and amount) does for `amount`
/// more by `newcomer`: refused when that takes the newcomer's peer or source beyond its
/// share, else room is taken from the peer, then the source, most beyond its share. The
/// tables scan their entries only when full, so nothing is counted on the hot path.
pub(crate) fn judge<F, I>(
    entries: F,
    newcomer: &SocketAddr,
    amount: usize,
    limits: ShareLimits,
) -> Verdict
where
    F: Fn() -> I,
    I: Iterator<Item = (SocketAddr, usize)>,
{
    let source = Source::of(newcomer);
    let (mut own_peer, mut own_source) = (amount, amount);
    for (addr, held) in entries() {
        if addr == *newcomer {
            own_peer += held;
        }
        if Source::of(&addr) == source {
            own_source += held;
        }
    }
    if own_peer > limits.peer {
        return Verdict::Refuse(Beyond {
            holder: Holder::Peer(*newcomer),
            excess: own_peer - limits.peer,
        });
    }
    if own_source > limits.source {
        return Verdict::Refuse(Beyond {
            holder: Holder::Source(source),
            excess: own_source - limits.source,
        });
    }
    match heaviest(entries, limits) {
        Some(holder) => Verdict::Evict(holder),
        None => Verdict::Full,
    }
}

#[cfg(feature = "fair-share")]
/// The peer most beyond its share, else the source most beyond its share, found with one
/// small tally per kind (the Space-Saving heavy-hitter count with k counters keeps every
/// holder of more than 1/k of the table among its candidates; k is one more than the
/// number of shares in a table) and confirmed by an exact count.
// Not inlined, as `heaviest_unverified`.
#[inline(never)]
pub(crate) fn heaviest<F, I>(entries: F, limits: ShareLimits) -> Option<Holder>
where
    F: Fn() -> I,
    I: Iterator<Item = (SocketAddr, usize)>,
{
    let mut peers = HeavyHitters::<SocketAddr>::new(limits.peer_candidates);
    let mut sources = HeavyHitters::<Source>::new(limits.source_candidates);
    for (addr, held) in entries() {
        peers.add(addr, held);
        sources.add(Source::of(&addr), held);
    }
    for (candidate, _) in peers.by_weight() {
        let holder = Holder::Peer(candidate);
        if exact(entries(), &holder) > limits.peer {
            return Some(holder);
        }
    }
    for (candidate, _) in sources.by_weight() {
        let holder = Holder::Source(candidate);
        if exact(entries(), &holder) > limits.source {
            return Some(holder);
        }
    }
    None
}

#[cfg(feature = "fair-share")]
fn exact<I: Iterator<Item = (SocketAddr, usize)>>(entries: I, holder: &Holder) -> usize {
    entries
        .filter(|(addr, _)| holder.holds(addr))
        .map(|(_, held)| held)
        .sum()
}

/// Most candidates tracked by the heavy-hitter tally: enough for shares down to 7 %.
#[cfg(feature = "fair-share")]
const CANDIDATES: usize = 16;

#[cfg(feature = "fair-share")]
/// The Space-Saving tally: up to `CANDIDATES` counters on the stack; a new key replaces the
/// lightest, inheriting its weight, so every key holding more than 1/k of the total, with k
/// counters in use, is among them.
struct HeavyHitters<K> {
    counters: [Option<(K, usize)>; CANDIDATES],
    used: usize,
}

#[cfg(feature = "fair-share")]
impl<K: Copy + PartialEq> HeavyHitters<K> {
    fn new(candidates: usize) -> Self {
        HeavyHitters {
            counters: [const { None }; CANDIDATES],
            used: candidates.clamp(1, CANDIDATES),
        }
    }

    fn add(&mut self, key: K, weight: usize) {
        let mut lightest = 0;
        let mut lightest_weight = usize::MAX;
        for (i, counter) in self.counters[..self.used].iter_mut().enumerate() {
            match counter {
                Some((k, w)) if *k == key => {
                    *w += weight;
                    return;
                }
                Some((_, w)) => {
                    if *w < lightest_weight {
                        (lightest, lightest_weight) = (i, *w);
                    }
                }
                None => {
                    *counter = Some((key, weight));
                    return;
                }
            }
        }
        self.counters[lightest] = Some((key, lightest_weight + weight));
    }

    /// The candidates, heaviest first.
    fn by_weight(mut self) -> impl Iterator<Item = (K, usize)> {
        self.counters
            .sort_unstable_by_key(|c| core::cmp::Reverse(c.as_ref().map_or(0, |(_, w)| *w)));
        self.counters.into_iter().flatten()
    }
}

#[cfg(all(test, not(feature = "fair-share")))]
mod without_fair_share_tests {
    use super::*;

    #[test]
    fn the_memo_never_refuses_and_counts_nothing_down() {
        let mut memo = RefusalMemo::default();
        let flooder = SocketAddr::new(IpAddr::V6(core::net::Ipv6Addr::LOCALHOST), 1);
        memo.remember(Beyond {
            holder: Holder::Peer(flooder),
            excess: 1,
        });
        assert!(!memo.refuses(&flooder));
        memo.entry_removed();
        assert!(!memo.refuses(&flooder));
    }
}

#[cfg(all(test, feature = "fair-share"))]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn peer(host: u16, port: u16) -> SocketAddr {
        SocketAddr::new(
            IpAddr::V6(core::net::Ipv6Addr::new(0x2001, 0xdb8, 0, host, 0, 0, 0, 1)),
            port,
        )
    }

    /// A table of 16 with the default shares: 4 per peer, 8 per source.
    fn limits() -> ShareLimits {
        ShareLimits::new(&FairShare::default(), 16)
    }

    #[test]
    fn a_newcomer_within_its_share_takes_room_from_the_peer_beyond_its_share() {
        let mut table: Vec<(SocketAddr, usize)> = (0..14).map(|_| (peer(1, 1), 1)).collect();
        table.push((peer(2, 1), 1));
        table.push((peer(3, 1), 1));
        let verdict = judge(|| table.iter().copied(), &peer(4, 1), 1, limits());
        assert_eq!(verdict, Verdict::Evict(Holder::Peer(peer(1, 1))));
        // The flooder itself is refused.
        assert_eq!(
            judge(|| table.iter().copied(), &peer(1, 1), 1, limits()),
            Verdict::Refuse(Beyond {
                holder: Holder::Peer(peer(1, 1)),
                excess: 11
            })
        );
    }

    #[test]
    fn many_ports_of_one_source_count_together() {
        // One /64 from 16 ports, 1 entry each: no peer beyond 4, the source beyond 8.
        let table: Vec<(SocketAddr, usize)> = (0..16).map(|p| (peer(1, p), 1)).collect();
        let other_port = peer(1, 100);
        assert_eq!(
            judge(|| table.iter().copied(), &other_port, 1, limits()),
            Verdict::Refuse(Beyond {
                holder: Holder::Source(Source::of(&other_port)),
                excess: 9
            }),
            "another port of the flooding /64 is refused"
        );
        let verdict = judge(|| table.iter().copied(), &peer(2, 1), 1, limits());
        assert_eq!(
            verdict,
            Verdict::Evict(Holder::Source(Source::of(&peer(1, 0))))
        );
        assert!(
            matches!(verdict, Verdict::Evict(h) if h.holds(&peer(1, 7)) && !h.holds(&peer(2, 1)))
        );
    }

    proptest::proptest! {
        #[test]
        fn the_verdict_matches_exact_counts(
            table in proptest::collection::vec((0u16..6, 0u16..4), 1..64),
            newcomer in (0u16..6, 0u16..4),
        ) {
            let table: Vec<(SocketAddr, usize)> =
                table.iter().map(|&(h, p)| (peer(h, p), 1)).collect();
            let newcomer = peer(newcomer.0, newcomer.1);
            let limits = ShareLimits::new(&FairShare::default(), table.len());
            let count = |h: Holder| table.iter().filter(|(a, _)| h.holds(a)).count();
            let beyond = |a: &SocketAddr| {
                count(Holder::Peer(*a)) > limits.peer
                    || count(Holder::Source(Source::of(a))) > limits.source
            };
            let verdict = judge(|| table.iter().copied(), &newcomer, 1, limits);
            let own_beyond = count(Holder::Peer(newcomer)) + 1 > limits.peer
                || count(Holder::Source(Source::of(&newcomer))) + 1 > limits.source;
            match verdict {
                Verdict::Refuse(_) => proptest::prop_assert!(own_beyond),
                Verdict::Full => {
                    proptest::prop_assert!(!own_beyond);
                    proptest::prop_assert!(!table.iter().any(|(a, _)| beyond(a)));
                }
                Verdict::Evict(h) => {
                    proptest::prop_assert!(!own_beyond && !h.holds(&newcomer));
                    let limit = match h {
                        Holder::Peer(_) => limits.peer,
                        Holder::Source(_) => limits.source,
                    };
                    proptest::prop_assert!(count(h) > limit);
                }
            }
        }
    }

    #[test]
    fn a_refusal_is_remembered_until_enough_entries_left() {
        let mut memo = RefusalMemo::default();
        let flooder = peer(1, 1);
        assert!(!memo.refuses(&flooder));
        memo.remember(Beyond {
            holder: Holder::Source(Source::of(&flooder)),
            excess: 2,
        });
        assert!(memo.refuses(&peer(1, 7)), "any port of the source");
        assert!(!memo.refuses(&peer(2, 1)));
        memo.entry_removed();
        assert!(memo.refuses(&flooder));
        memo.entry_removed();
        assert!(!memo.refuses(&flooder), "it may be within its share now");
    }

    #[test]
    fn a_table_full_of_fair_holders_refuses() {
        let table: Vec<(SocketAddr, usize)> = (0..16).map(|h| (peer(h, 1), 1)).collect();
        assert_eq!(
            judge(|| table.iter().copied(), &peer(99, 1), 1, limits()),
            Verdict::Full
        );
    }

    #[test]
    fn amounts_are_weighed_and_the_heavy_holder_is_found_among_many() {
        // Bytes: 40 small holders of 10, one of 500; limits in bytes.
        let mut table: Vec<(SocketAddr, usize)> = (0..40).map(|h| (peer(h, 1), 10)).collect();
        table.insert(20, (peer(77, 9), 500));
        // 30 % and 60 % of 1000 bytes.
        let share = FairShare {
            peer_percent: 30,
            source_percent: 60,
        };
        let limits = ShareLimits::new(&share, 1000);
        assert_eq!(
            judge(|| table.iter().copied(), &peer(99, 1), 100, limits),
            Verdict::Evict(Holder::Peer(peer(77, 9)))
        );
        assert_eq!(
            judge(|| table.iter().copied(), &peer(99, 1), 301, limits),
            Verdict::Refuse(Beyond {
                holder: Holder::Peer(peer(99, 1)),
                excess: 1
            }),
            "more than a peer's share at once is refused"
        );
    }

    #[test]
    fn ipv4_sources_are_slash_24s_and_mapped_addresses_count_as_ipv4() {
        let a: SocketAddr = "192.0.2.1:1000".parse().unwrap();
        let b: SocketAddr = "192.0.2.1:2000".parse().unwrap();
        let c: SocketAddr = "192.0.2.200:1000".parse().unwrap();
        let d: SocketAddr = "192.0.3.1:1000".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:3000".parse().unwrap();
        assert_eq!(Source::of(&a), Source::of(&b));
        assert_eq!(Source::of(&a), Source::of(&c), "one /24");
        assert_ne!(Source::of(&a), Source::of(&d));
        assert_eq!(Source::of(&a), Source::of(&mapped));
        assert_eq!(Source::of(&peer(1, 1)), Source::of(&peer(1, 2)));
        assert_ne!(Source::of(&peer(1, 1)), Source::of(&peer(2, 1)));
    }

    #[test]
    fn the_heaviest_unverified_source_ignores_verified_peers() {
        let mut table: Vec<(SocketAddr, usize)> = (0..10).map(|p| (peer(1, p), 1)).collect();
        table.extend((0..3).map(|p| (peer(2, p), 1)));
        let everyone_of_1_verified = |a: &SocketAddr| Source::of(a) == Source::of(&peer(1, 0));
        assert_eq!(
            heaviest_unverified(table.iter().copied(), |_| false),
            Some(Source::of(&peer(1, 0)))
        );
        assert_eq!(
            heaviest_unverified(table.iter().copied(), everyone_of_1_verified),
            Some(Source::of(&peer(2, 0)))
        );
        assert_eq!(heaviest_unverified(table.iter().copied(), |_| true), None);
    }

    #[test]
    fn limits_are_at_least_one() {
        let share = FairShare {
            peer_percent: 25,
            source_percent: 50,
        };
        let one = ShareLimits::new(&share, 1);
        assert_eq!((one.peer, one.source), (1, 1));
        let many = ShareLimits::new(&share, 1024);
        assert_eq!((many.peer, many.source), (256, 512));
        assert_eq!((many.peer_candidates, many.source_candidates), (5, 3));
    }
}
