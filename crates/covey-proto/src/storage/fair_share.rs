//! Fair shares of a shared table: who holds how much of it, by peer (address and port) and by
//! source (an IPv4 address, or an IPv6 /64, the smallest block one host is usually given), so
//! that a full table takes room from a holder beyond its share instead of refusing everyone.

use crate::config::FairShare;
use core::net::{IpAddr, SocketAddr};

/// The traffic source a peer belongs to: its IPv4 address, or its IPv6 /64 prefix (the
/// smallest block one host is usually given), so one host counts once whatever its ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Source(u128);

impl Source {
    /// The source of `addr`; an IPv4-mapped IPv6 address counts as the IPv4 address.
    pub fn of(addr: &SocketAddr) -> Source {
        match addr.ip().to_canonical() {
            IpAddr::V4(v4) => Source(u128::from(u32::from(v4)) | 1 << 127),
            IpAddr::V6(v6) => Source(u128::from(v6) & !(u128::from(u64::MAX))),
        }
    }
}

/// How much of one table a peer and a source may hold once it is full (at least one entry,
/// or one unit of whatever the table counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShareLimits {
    pub peer: usize,
    pub source: usize,
}

impl ShareLimits {
    /// The limits for a table of `capacity` entries (or bytes).
    pub fn new(share: &FairShare, capacity: usize) -> ShareLimits {
        let part = |percent: u8| (capacity * usize::from(percent.min(100)) / 100).max(1);
        ShareLimits {
            peer: part(share.peer_percent),
            source: part(share.source_percent).max(part(share.peer_percent)),
        }
    }
}

/// A holder whose entries a full table gives up first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The newcomer would go beyond its share: refuse it.
    Refuse,
    /// Everybody is within their share: the table is full for everyone.
    Full,
    /// Evict an entry of this holder, beyond its share, to make room.
    Evict(Holder),
}

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
    if own_peer > limits.peer || own_source > limits.source {
        return Verdict::Refuse;
    }
    match heaviest(entries, limits) {
        Some(holder) => Verdict::Evict(holder),
        None => Verdict::Full,
    }
}

/// The peer most beyond its share, else the source most beyond its share, found with one
/// fixed-size tally per kind (the Space-Saving heavy-hitter count, which keeps every holder
/// of more than a sixteenth of the table among its candidates) and confirmed by an exact
/// count.
fn heaviest<F, I>(entries: F, limits: ShareLimits) -> Option<Holder>
where
    F: Fn() -> I,
    I: Iterator<Item = (SocketAddr, usize)>,
{
    let mut peers = HeavyHitters::<SocketAddr>::default();
    let mut sources = HeavyHitters::<Source>::default();
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

fn exact<I: Iterator<Item = (SocketAddr, usize)>>(entries: I, holder: &Holder) -> usize {
    entries
        .filter(|(addr, _)| holder.holds(addr))
        .map(|(_, held)| held)
        .sum()
}

/// Candidates tracked by the heavy-hitter tally.
const CANDIDATES: usize = 16;

/// The Space-Saving tally: `CANDIDATES` counters on the stack; a new key replaces the
/// lightest, inheriting its weight, so every key holding more than 1/`CANDIDATES` of the
/// total is among the counters.
struct HeavyHitters<K> {
    counters: [Option<(K, usize)>; CANDIDATES],
}

impl<K> Default for HeavyHitters<K> {
    fn default() -> Self {
        HeavyHitters {
            counters: [const { None }; CANDIDATES],
        }
    }
}

impl<K: Copy + PartialEq> HeavyHitters<K> {
    fn add(&mut self, key: K, weight: usize) {
        let mut lightest = 0;
        let mut lightest_weight = usize::MAX;
        for (i, counter) in self.counters.iter_mut().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn peer(host: u16, port: u16) -> SocketAddr {
        SocketAddr::new(
            IpAddr::V6(core::net::Ipv6Addr::new(0x2001, 0xdb8, 0, host, 0, 0, 0, 1)),
            port,
        )
    }

    const LIMITS: ShareLimits = ShareLimits { peer: 4, source: 8 };

    #[test]
    fn a_newcomer_within_its_share_takes_room_from_the_peer_beyond_its_share() {
        let mut table: Vec<(SocketAddr, usize)> = (0..14).map(|_| (peer(1, 1), 1)).collect();
        table.push((peer(2, 1), 1));
        table.push((peer(3, 1), 1));
        let verdict = judge(|| table.iter().copied(), &peer(4, 1), 1, LIMITS);
        assert_eq!(verdict, Verdict::Evict(Holder::Peer(peer(1, 1))));
        // The flooder itself is refused.
        assert_eq!(
            judge(|| table.iter().copied(), &peer(1, 1), 1, LIMITS),
            Verdict::Refuse
        );
    }

    #[test]
    fn many_ports_of_one_source_count_together() {
        // One /64 from 16 ports, 1 entry each: no peer beyond 4, the source beyond 8.
        let table: Vec<(SocketAddr, usize)> = (0..16).map(|p| (peer(1, p), 1)).collect();
        let other_port = peer(1, 100);
        assert_eq!(
            judge(|| table.iter().copied(), &other_port, 1, LIMITS),
            Verdict::Refuse,
            "another port of the flooding /64 is refused"
        );
        let verdict = judge(|| table.iter().copied(), &peer(2, 1), 1, LIMITS);
        assert_eq!(
            verdict,
            Verdict::Evict(Holder::Source(Source::of(&peer(1, 0))))
        );
        assert!(
            matches!(verdict, Verdict::Evict(h) if h.holds(&peer(1, 7)) && !h.holds(&peer(2, 1)))
        );
    }

    #[test]
    fn a_table_full_of_fair_holders_refuses() {
        let table: Vec<(SocketAddr, usize)> = (0..16).map(|h| (peer(h, 1), 1)).collect();
        assert_eq!(
            judge(|| table.iter().copied(), &peer(99, 1), 1, LIMITS),
            Verdict::Full
        );
    }

    #[test]
    fn amounts_are_weighed_and_the_heavy_holder_is_found_among_many() {
        // Bytes: 40 small holders of 10, one of 500; limits in bytes.
        let mut table: Vec<(SocketAddr, usize)> = (0..40).map(|h| (peer(h, 1), 10)).collect();
        table.insert(20, (peer(77, 9), 500));
        let limits = ShareLimits {
            peer: 300,
            source: 600,
        };
        assert_eq!(
            judge(|| table.iter().copied(), &peer(99, 1), 100, limits),
            Verdict::Evict(Holder::Peer(peer(77, 9)))
        );
        assert_eq!(
            judge(|| table.iter().copied(), &peer(99, 1), 301, limits),
            Verdict::Refuse,
            "more than a peer's share at once is refused"
        );
    }

    #[test]
    fn ipv4_sources_are_addresses_and_mapped_addresses_count_as_ipv4() {
        let a: SocketAddr = "192.0.2.1:1000".parse().unwrap();
        let b: SocketAddr = "192.0.2.1:2000".parse().unwrap();
        let c: SocketAddr = "192.0.2.2:1000".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:3000".parse().unwrap();
        assert_eq!(Source::of(&a), Source::of(&b));
        assert_ne!(Source::of(&a), Source::of(&c));
        assert_eq!(Source::of(&a), Source::of(&mapped));
        assert_eq!(Source::of(&peer(1, 1)), Source::of(&peer(1, 2)));
        assert_ne!(Source::of(&peer(1, 1)), Source::of(&peer(2, 1)));
    }

    #[test]
    fn limits_are_at_least_one() {
        let share = FairShare {
            peer_percent: 25,
            source_percent: 50,
        };
        assert_eq!(
            ShareLimits::new(&share, 1),
            ShareLimits { peer: 1, source: 1 }
        );
        assert_eq!(
            ShareLimits::new(&share, 1024),
            ShareLimits {
                peer: 256,
                source: 512
            }
        );
    }
}
