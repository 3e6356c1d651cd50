//! What each client holds in flight — its queries and the member requests they cause — kept
//! per address and per prefix (an IPv4 /24, an IPv6 /64), so that neither one host nor the
//! hosts of one network can take the room every other client needs. An address may hold at
//! most a quarter of a table, a prefix half, as the engine shares its own tables.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// Queries and member requests held.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Held {
    /// Client queries in progress.
    pub queries: usize,
    /// Member requests reserved.
    pub members: usize,
}

impl Held {
    fn is_empty(&self) -> bool {
        self.queries == 0 && self.members == 0
    }
}

/// What every client address and prefix holds now.
#[derive(Debug, Default)]
pub(crate) struct ClientShares {
    by_address: BTreeMap<IpAddr, Held>,
    by_prefix: BTreeMap<IpAddr, Held>,
}

impl ClientShares {
    /// How much more of a table of `room` entries `client` may take, of what `of` counts:
    /// its address's share (`cap`, at most a quarter of the room) and its prefix's (twice
    /// that, at most half), less what they hold; always one when nothing is held.
    pub fn left(
        &self,
        client: IpAddr,
        room: usize,
        cap: usize,
        of: impl Fn(&Held) -> usize,
    ) -> usize {
        let held = |map: &BTreeMap<IpAddr, Held>, key| map.get(&key).map_or(0, &of);
        let share = cap.min(room / 4).max(1);
        let wide = cap.saturating_mul(2).min(room / 2).max(1);
        let by_address = share.saturating_sub(held(&self.by_address, address(client)));
        let by_prefix = wide.saturating_sub(held(&self.by_prefix, prefix(client)));
        by_address.min(by_prefix)
    }

    /// Counts `queries` and `members` more for `client`.
    pub fn take(&mut self, client: IpAddr, queries: usize, members: usize) {
        for (map, key) in [
            (&mut self.by_address, address(client)),
            (&mut self.by_prefix, prefix(client)),
        ] {
            let held = map.entry(key).or_default();
            held.queries += queries;
            held.members += members;
        }
    }

    /// Counts `queries` and `members` fewer for `client`; forgets what holds nothing.
    pub fn give_back(&mut self, client: IpAddr, queries: usize, members: usize) {
        for (map, key) in [
            (&mut self.by_address, address(client)),
            (&mut self.by_prefix, prefix(client)),
        ] {
            if let Some(held) = map.get_mut(&key) {
                held.queries = held.queries.saturating_sub(queries);
                held.members = held.members.saturating_sub(members);
                if held.is_empty() {
                    map.remove(&key);
                }
            }
        }
    }

    /// What the address of `client` holds.
    pub fn held_by(&self, client: IpAddr) -> Held {
        self.by_address
            .get(&address(client))
            .copied()
            .unwrap_or_default()
    }
}

/// The address a client is counted under (IPv4-mapped as IPv4).
fn address(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

/// The network a client is counted under with its neighbours: an IPv4 /24 or an IPv6 /64.
pub(crate) fn prefix(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        IpAddr::V4(v4) => IpAddr::V4((u32::from(v4) & !0xff).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn members(h: &Held) -> usize {
        h.members
    }

    /// No cap beyond the fractions of the room.
    const ALL: usize = usize::MAX;

    #[test]
    fn an_address_takes_a_quarter_and_its_prefix_half() {
        let mut shares = ClientShares::default();
        assert_eq!(shares.left(ip("2001:db8::1"), 100, ALL, members), 25);
        shares.take(ip("2001:db8::1"), 1, 25);
        assert_eq!(shares.left(ip("2001:db8::1"), 100, ALL, members), 0);
        assert_eq!(shares.left(ip("2001:db8::2"), 100, ALL, members), 25);
        shares.take(ip("2001:db8::2"), 1, 20);
        // The /64 holds 45 of its 50.
        assert_eq!(shares.left(ip("2001:db8::3"), 100, ALL, members), 5);
        assert_eq!(shares.left(ip("2001:db8:0:1::1"), 100, ALL, members), 25);
        shares.give_back(ip("2001:db8::1"), 1, 25);
        assert_eq!(shares.left(ip("2001:db8::3"), 100, ALL, members), 25);
        assert_eq!(shares.held_by(ip("2001:db8::1")), Held::default());
    }

    #[test]
    fn ipv4_neighbours_share_a_slash_24_and_mapped_addresses_are_ipv4() {
        let mut shares = ClientShares::default();
        shares.take(ip("::ffff:192.0.2.7"), 2, 10);
        assert_eq!(shares.held_by(ip("192.0.2.7")).queries, 2);
        shares.take(ip("192.0.2.200"), 0, 10);
        assert_eq!(shares.left(ip("192.0.2.1"), 40, ALL, members), 0);
        assert_eq!(shares.left(ip("192.0.3.1"), 40, ALL, members), 10);
        assert_eq!(prefix(ip("192.0.2.200")), ip("192.0.2.0"));
        assert_eq!(prefix(ip("2001:db8::5")), ip("2001:db8::"));
    }

    #[test]
    fn a_cap_limits_a_large_table_and_a_tiny_one_still_lets_each_client_have_one() {
        let mut shares = ClientShares::default();
        assert_eq!(shares.left(ip("192.0.2.1"), 4000, 10, members), 10);
        shares.take(ip("192.0.2.1"), 1, 10);
        assert_eq!(shares.left(ip("192.0.2.2"), 4000, 10, members), 10);
        shares.take(ip("192.0.2.2"), 1, 10);
        assert_eq!(shares.left(ip("192.0.2.3"), 4000, 10, members), 0);
        assert_eq!(
            ClientShares::default().left(ip("192.0.2.1"), 2, ALL, members),
            1
        );
    }
}
