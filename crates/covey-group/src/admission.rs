//! Admission of entity queries, so a query cannot be turned into a flood of member requests
//! and one entity cannot starve the others: a budget of member requests per client query
//! (nested entities included), a rate of member requests per client (an IPv4 address or an
//! IPv6 /64), a share of the member requests in flight for each entity, and a share of the
//! queries and member requests in flight for each client address and prefix (an IPv4 /24,
//! an IPv6 /64), so no client holds what the others need for as long as its members stay
//! silent. A query refused for rate or room is answered 5.03 with Max-Age, so a healthy
//! entity is never answered 5.04 because a dead one holds the exchanges.

use crate::client_share::{ClientShares, Held};
use covey_proto::{Duration, Instant};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Why a query was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The query needs more member requests than one query may cause.
    OverBudget {
        /// Member requests the query needs.
        needed: usize,
        /// The per-query budget.
        budget: usize,
    },
    /// The client spent its member requests for now.
    ClientRate {
        /// Seconds until it has enough again.
        retry_after: u32,
    },
    /// The entity's share, or the EM's room, for member requests in flight is taken.
    Busy {
        /// Seconds until the requests holding it have surely ended.
        retry_after: u32,
    },
    /// The client's address or prefix holds its share of the queries or of the member
    /// requests in flight.
    ClientBusy {
        /// Seconds until the requests holding it have surely ended.
        retry_after: u32,
    },
}

/// A client's member requests: a token bucket refilled at the configured rate.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The limits of [`Admission`].
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Member requests one client query may cause, nested entities included.
    pub query_budget: usize,
    /// Member requests per client per second (and the most it may spend at once).
    pub client_rate: u32,
    /// Clients whose buckets are remembered.
    pub max_clients: usize,
    /// Member requests in flight for the queries of one entity (and never more than a
    /// quarter of the room there is).
    pub entity_share: usize,
    /// Member requests in flight for the queries of one client address (never more than a
    /// quarter of the room); the addresses of one prefix may hold twice that (never more
    /// than half).
    pub client_share: usize,
    /// How long a member request may hold its slot.
    pub hold: Duration,
}

/// The budgets and shares of one EM.
#[derive(Debug)]
pub struct Admission {
    limits: Limits,
    buckets: BTreeMap<IpAddr, Bucket>,
    in_flight: usize,
    by_entity: BTreeMap<String, usize>,
    clients: ClientShares,
}

impl Admission {
    /// Nothing spent, nothing in flight.
    pub fn new(limits: Limits) -> Admission {
        Admission {
            limits,
            buckets: BTreeMap::new(),
            in_flight: 0,
            by_entity: BTreeMap::new(),
            clients: ClientShares::default(),
        }
    }

    /// Admits a client query from `client` that needs `cost` member requests in all:
    /// within the per-query budget, and paid from the client's bucket.
    pub fn admit_query(
        &mut self,
        now: Instant,
        client: IpAddr,
        cost: usize,
    ) -> Result<(), Refusal> {
        if cost > self.limits.query_budget {
            return Err(Refusal::OverBudget {
                needed: cost,
                budget: self.limits.query_budget,
            });
        }
        let rate = f64::from(self.limits.client_rate.max(1));
        let key = client_key(client);
        let bucket = self.bucket(now, key);
        let tokens = (bucket.tokens + (now - bucket.at).as_secs_f64() * rate).min(rate);
        let cost = cost as f64;
        if tokens < cost {
            self.buckets.insert(key, Bucket { tokens, at: now });
            let wait = ((cost - tokens) / rate).ceil().max(1.0);
            return Err(Refusal::ClientRate {
                retry_after: wait as u32,
            });
        }
        self.buckets.insert(
            key,
            Bucket {
                tokens: tokens - cost,
                at: now,
            },
        );
        Ok(())
    }

    /// The bucket of `key`; a new client starts full. When the table is full, the
    /// client whose bucket has been idle longest is forgotten (it would be full again
    /// soonest), never one that is spending.
    fn bucket(&mut self, now: Instant, key: IpAddr) -> Bucket {
        if let Some(b) = self.buckets.get(&key) {
            return *b;
        }
        if self.buckets.len() >= self.limits.max_clients.max(1) {
            let idle = self
                .buckets
                .iter()
                .min_by_key(|(_, b)| b.at)
                .map(|(k, _)| *k);
            if let Some(k) = idle {
                self.buckets.remove(&k);
            }
        }
        Bucket {
            tokens: f64::from(self.limits.client_rate.max(1)),
            at: now,
        }
    }

    /// Counts a query of `client` in progress, out of `capacity` queries the EM takes at
    /// once: within its address's quarter and its prefix's half, else
    /// [`Refusal::ClientBusy`]. Ended with [`Admission::end_query`].
    pub fn start_query(&mut self, client: IpAddr, capacity: usize) -> Result<(), Refusal> {
        if self.clients.left(client, capacity, usize::MAX, queries) == 0 {
            return Err(Refusal::ClientBusy {
                retry_after: seconds_up(self.limits.hold),
            });
        }
        self.clients.take(client, 1, 0);
        Ok(())
    }

    /// Ends what [`Admission::start_query`] counted.
    pub fn end_query(&mut self, client: IpAddr) {
        self.clients.give_back(client, 1, 0);
    }

    /// Reserves room for up to `wanted` member requests in flight for a query of `entity`
    /// on behalf of `client` (if known), out of `room` for all queries together: as many
    /// as the entity's share, the client's share and the room left allow, at least one,
    /// else none and [`Refusal::ClientBusy`] when the client's share is what is taken,
    /// [`Refusal::Busy`] otherwise.
    pub fn reserve(
        &mut self,
        entity: &str,
        client: Option<IpAddr>,
        wanted: usize,
        room: usize,
    ) -> Result<usize, Refusal> {
        let share = self.limits.entity_share.min(room / 4).max(1);
        let held = self.by_entity.get(entity).copied().unwrap_or(0);
        let granted = wanted
            .min(share.saturating_sub(held))
            .min(room.saturating_sub(self.in_flight));
        let own = client.map_or(usize::MAX, |c| {
            self.clients
                .left(c, room, self.limits.client_share, members)
        });
        if wanted > 0 && (granted == 0 || own == 0) {
            let retry_after = seconds_up(self.limits.hold);
            return Err(if own == 0 {
                Refusal::ClientBusy { retry_after }
            } else {
                Refusal::Busy { retry_after }
            });
        }
        let granted = granted.min(own);
        self.in_flight += granted;
        *self.by_entity.entry(entity.to_string()).or_default() += granted;
        if let Some(c) = client {
            self.clients.take(c, 0, granted);
        }
        Ok(granted)
    }

    /// Gives back what [`Admission::reserve`] took.
    pub fn release(&mut self, entity: &str, client: Option<IpAddr>, n: usize) {
        self.in_flight = self.in_flight.saturating_sub(n);
        if let Some(held) = self.by_entity.get_mut(entity) {
            *held = held.saturating_sub(n);
            if *held == 0 {
                self.by_entity.remove(entity);
            }
        }
        if let Some(c) = client {
            self.clients.give_back(c, 0, n);
        }
    }

    /// Queries and member requests the address of `client` holds now.
    pub fn held_by(&self, client: IpAddr) -> (usize, usize) {
        let Held { queries, members } = self.clients.held_by(client);
        (queries, members)
    }

    /// Member requests reserved now.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}

fn queries(h: &Held) -> usize {
    h.queries
}

fn members(h: &Held) -> usize {
    h.members
}

/// The address a client's budget is kept under: an IPv4 address, or an IPv6 /64 (one
/// host can use every address of its /64).
fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(prefix.into())
        }
        v4 => v4,
    }
}

/// `d` in whole seconds, rounded up, at least one.
fn seconds_up(d: Duration) -> u32 {
    let s = d.as_secs_f64().ceil().max(1.0);
    s.min(f64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            query_budget: 100,
            client_rate: 200,
            max_clients: 2,
            entity_share: 20,
            client_share: 1000,
            hold: Duration::from_millis(2500),
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_query_over_budget_is_refused_whatever_the_client_has() {
        let mut a = Admission::new(limits());
        assert_eq!(
            a.admit_query(Instant::ZERO, ip("2001:db8::1"), 101),
            Err(Refusal::OverBudget {
                needed: 101,
                budget: 100
            })
        );
        assert_eq!(a.admit_query(Instant::ZERO, ip("2001:db8::1"), 100), Ok(()));
    }

    #[test]
    fn a_client_spends_its_rate_and_gets_it_back_over_time() {
        let mut a = Admission::new(limits());
        let t0 = Instant::ZERO;
        assert_eq!(a.admit_query(t0, ip("2001:db8::1"), 100), Ok(()));
        assert_eq!(a.admit_query(t0, ip("2001:db8::2"), 100), Ok(()));
        // The same /64: nothing left, and 100 requests come back in half a second.
        assert_eq!(
            a.admit_query(t0, ip("2001:db8::3"), 100),
            Err(Refusal::ClientRate { retry_after: 1 })
        );
        // Another /64 and an IPv4 client are not touched.
        assert_eq!(a.admit_query(t0, ip("2001:db8:0:1::1"), 100), Ok(()));
        let later = t0 + Duration::from_millis(500);
        assert_eq!(a.admit_query(later, ip("2001:db8::3"), 100), Ok(()));
    }

    #[test]
    fn forgetting_a_client_forgets_the_idle_one() {
        let mut a = Admission::new(Limits {
            query_budget: 1000,
            ..limits()
        });
        let t0 = Instant::ZERO;
        let t1 = t0 + Duration::from_millis(1);
        assert_eq!(a.admit_query(t0, ip("192.0.2.1"), 150), Ok(()));
        assert_eq!(a.admit_query(t1, ip("192.0.2.2"), 200), Ok(()));
        // A third client: 192.0.2.1 is forgotten, the one spending now is not.
        assert_eq!(a.admit_query(t1, ip("192.0.2.3"), 1), Ok(()));
        assert!(matches!(
            a.admit_query(t1, ip("192.0.2.2"), 10),
            Err(Refusal::ClientRate { .. })
        ));
    }

    #[test]
    fn an_entity_holds_no_more_than_its_share_and_others_still_get_room() {
        let mut a = Admission::new(limits());
        // A share of 20 (a quarter of 100 would allow 25).
        assert_eq!(a.reserve("dead", None, 16, 100), Ok(16));
        assert_eq!(a.reserve("dead", None, 16, 100), Ok(4));
        assert_eq!(
            a.reserve("dead", None, 16, 100),
            Err(Refusal::Busy { retry_after: 3 })
        );
        assert_eq!(a.reserve("healthy", None, 16, 100), Ok(16));
        assert_eq!(a.reserve("other", None, 20, 100), Ok(20));
        assert_eq!(a.reserve("fourth", None, 20, 100), Ok(20));
        assert_eq!(a.reserve("fifth", None, 20, 100), Ok(20));
        // 96 of 100 taken: the room left is the last limit.
        assert_eq!(a.reserve("sixth", None, 20, 100), Ok(4));
        assert!(a.reserve("seventh", None, 1, 100).is_err());
        a.release("dead", None, 20);
        assert_eq!(a.in_flight(), 80);
        assert_eq!(a.reserve("seventh", None, 1, 100), Ok(1));
        // A smaller engine: the share shrinks to a quarter of it.
        let mut small = Admission::new(limits());
        assert_eq!(small.reserve("dead", None, 64, 40), Ok(10));
        assert_eq!(small.reserve("healthy", None, 1, 40), Ok(1));
    }

    #[test]
    fn a_client_holds_its_share_of_member_requests_and_queries_wherever_they_go() {
        let mut a = Admission::new(limits());
        let c = Some(ip("192.0.2.1"));
        // A quarter of 100 for the address, whatever entities its queries are of.
        assert_eq!(a.reserve("one", c, 16, 100), Ok(16));
        assert_eq!(a.reserve("two", c, 16, 100), Ok(9));
        assert_eq!(
            a.reserve("three", c, 1, 100),
            Err(Refusal::ClientBusy { retry_after: 3 })
        );
        assert_eq!(a.held_by(ip("192.0.2.1")), (0, 25));
        // Its /24 neighbour gets a quarter too, and the /24 no more than half.
        assert_eq!(a.reserve("three", Some(ip("192.0.2.2")), 30, 100), Ok(20));
        assert_eq!(a.reserve("four", Some(ip("192.0.2.3")), 30, 100), Ok(5));
        assert!(matches!(
            a.reserve("four", Some(ip("192.0.2.4")), 1, 100),
            Err(Refusal::ClientBusy { .. })
        ));
        // Another network is not held back.
        assert_eq!(a.reserve("four", Some(ip("198.51.100.1")), 10, 100), Ok(10));
        a.release("one", c, 16);
        assert_eq!(a.held_by(ip("192.0.2.1")), (0, 9));
        assert_eq!(a.reserve("one", c, 16, 100), Ok(16));
        // Queries in progress: a quarter of 8 per address, half per prefix.
        let q = ip("2001:db8::1");
        assert_eq!(a.start_query(q, 8), Ok(()));
        assert_eq!(a.start_query(q, 8), Ok(()));
        assert!(matches!(
            a.start_query(q, 8),
            Err(Refusal::ClientBusy { .. })
        ));
        assert_eq!(a.start_query(ip("2001:db8::2"), 8), Ok(()));
        assert_eq!(a.start_query(ip("2001:db8::2"), 8), Ok(()));
        assert!(
            a.start_query(ip("2001:db8::3"), 8).is_err(),
            "the /64 holds half"
        );
        a.end_query(q);
        assert_eq!(a.start_query(ip("2001:db8::3"), 8), Ok(()));
    }
}
