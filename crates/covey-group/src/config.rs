//! The Entity Manager's configuration: limits, timeouts, the multicast pool and `delay=auto`.

use crate::authorization::Access;
use crate::multicast_pool::GroupPool;
use covey_proto::{Config, Duration};
use std::net::SocketAddr;

/// Queries the EM can fan out at once with every member request in flight: the engine's
/// exchange table holds `max_in_flight` member requests for each.
pub const CONCURRENT_QUERIES: usize = 64;

/// Everything an [`crate::EntityManager`] needs to know up front.
#[derive(Debug, Clone)]
pub struct EmConfig {
    /// Addresses this EM is reached at: they name its own entities (`coap://<a>/e/<name>`),
    /// so nesting and cycles through this EM are resolved locally. Replies (SenML `bn`, JSON
    /// `entity`) name an entity at the address the request was sent to, in its scheme; the
    /// first one here when the host does not tell that address, or with `named_by_first`.
    pub authorities: Vec<SocketAddr>,
    /// Replies name entities at the first of `authorities` whatever address a client used:
    /// an operator named it (the public address of a gateway behind a NAT).
    pub named_by_first: bool,
    /// Where multicast group addresses come from (`ff1e::89:1` ... by default).
    pub group_pool: GroupPool,
    /// Deepest nesting of entities (an entity is level 1).
    pub depth_limit: u8,
    /// Most members one entity may have.
    pub max_members: usize,
    /// Most entities at once.
    pub max_entities: usize,
    /// How long every member has to answer the validation requests at creation.
    pub validation_timeout: Duration,
    /// How long one member request may take before the member counts as missing.
    pub member_timeout: Duration,
    /// How long a multicast query collects replies: the members' leisure ...
    pub multicast_leisure: Duration,
    /// ... plus this margin for the network.
    pub multicast_margin: Duration,
    /// Target data rate R (bytes/s) towards the members, for `delay=auto`.
    pub target_rate: u32,
    /// Response size S (bytes) assumed by `delay=auto` before any reply was measured.
    pub initial_response_size: u32,
    /// Most member requests of one query outstanding at once (the engine's exchange
    /// table must hold them).
    pub max_in_flight: usize,
    /// Path of the members' group-membership resource.
    pub membership_path: String,
    /// Unix time in seconds at the engine's `Instant::ZERO`, if the driver knows it:
    /// SenML times are then absolute, else relative to the reply (negative `bt`).
    pub epoch: Option<f64>,
    /// How long a large reply is kept for the client's further Block2 requests (the
    /// engine's cache, set through [`EmConfig::engine_config`]).
    pub block_cache_lifetime: Duration,
    /// Most member requests one client query may cause, nested entities of this EM
    /// included (more is refused with 4.00).
    pub query_budget: usize,
    /// Member requests each client (an IPv4 address or an IPv6 /64) may cause per second,
    /// and at most at once (beyond, 5.03 with Max-Age).
    pub client_rate: u32,
    /// Clients whose spending is remembered at once.
    pub max_clients: usize,
    /// Most member requests in flight for the queries of one entity, so a dead or slow
    /// entity holds no more than this (and no more than a quarter) of the engine's
    /// exchanges; beyond, 5.03 with Max-Age.
    pub entity_share: usize,
    /// Most member requests in flight for the queries of one client address (and never more
    /// than a quarter of the engine's exchanges); the addresses of one IPv4 /24 or IPv6 /64
    /// may hold twice that (and never more than half). A client also has at most a quarter
    /// of the queries the engine takes at once in progress, its prefix half. Beyond, 5.03
    /// with Max-Age: a client keeping silent entities in flight starves no one else.
    pub client_share: usize,
    /// Most entities observed at once (RFC 7641); a registration beyond is 5.03 with Max-Age.
    pub max_observed_entities: usize,
    /// Most member resources the EM observes at once for the observed entities (each
    /// holds one of the engine's exchanges); beyond, 5.03 with Max-Age, and 4.00 for an
    /// entity with more members than this.
    pub max_member_observations: usize,
    /// Who may read, create, change and delete entities and fan requests out (open by
    /// default; `covey gateway` chooses loopback-only or a policy).
    pub access: Access,
    /// OSCORE contexts by member address: requests to such a member are protected with its
    /// context and its answers verified (RFC 8613), whichever entity it is in.
    pub member_oscore: Vec<(SocketAddr, covey_proto::covey_oscore::SecurityContext)>,
    /// What keeps some of those contexts' sequence numbers reserved ahead while the EM runs.
    pub member_reservations: Vec<(SocketAddr, crate::MemberReservation)>,
    /// Most member contexts the entities carry in their documents (`"oscore"`) at once; a
    /// creation or change beyond is refused.
    pub max_member_contexts: usize,
}

impl Default for EmConfig {
    fn default() -> EmConfig {
        EmConfig {
            authorities: Vec::new(),
            named_by_first: false,
            group_pool: GroupPool::default(),
            depth_limit: 8,
            max_members: 1024,
            max_entities: 4096,
            validation_timeout: Duration::from_secs(30),
            member_timeout: Duration::from_secs(50),
            multicast_leisure: Duration::from_secs(5),
            multicast_margin: Duration::from_secs(2),
            target_rate: 1000,
            initial_response_size: 80,
            max_in_flight: 64,
            membership_path: "mc".to_string(),
            epoch: None,
            block_cache_lifetime: Duration::from_secs(60),
            query_budget: 1024,
            client_rate: 2048,
            max_clients: 4096,
            entity_share: 1024,
            client_share: 1024,
            max_observed_entities: 64,
            max_member_observations: 256,
            access: Access::Open,
            member_oscore: Vec::new(),
            member_reservations: Vec::new(),
            max_member_contexts: 256,
        }
    }
}

impl EmConfig {
    /// The limits queries are admitted under.
    pub fn admission_limits(&self) -> crate::admission::Limits {
        crate::admission::Limits {
            query_budget: self.query_budget,
            client_rate: self.client_rate,
            max_clients: self.max_clients,
            entity_share: self.entity_share,
            client_share: self.client_share,
            hold: self.member_timeout,
        }
    }

    /// The configuration of the engine the EM runs on: RFC 7252 transmission parameters,
    /// with tables sized for fan-out ([`CONCURRENT_QUERIES`] queries with `max_in_flight`
    /// member requests each, a thousand members).
    pub fn engine_config(&self) -> Config {
        let mut c = Config::default();
        c.max_exchanges = self.max_in_flight.max(1) * CONCURRENT_QUERIES;
        c.max_peers = 4096;
        c.max_incoming = 1024;
        c.max_events = 8192;
        // A retransmission copy per member request in flight, plus the outgoing queue.
        c.max_buffers = 2 * c.max_exchanges + 2048;
        c.max_queued_per_peer = 4 * CONCURRENT_QUERIES;
        // The engine keeps large replies for the Block2 requests that follow.
        c.block_cache_lifetime = self.block_cache_lifetime;
        c.max_dedup_entries = 65_536;
        c.max_oscore_contexts += self.member_oscore.len() + self.max_member_contexts;
        // The EM sends its own message IDs to every member for every query: under load that
        // is more than the 265 per second per peer that EXCHANGE_LIFETIME (247 s) allows
        // (RFC 7252 §4.4). With 1 s an ID comes round within the lifetime only for a member
        // that gets more than 65 536 requests a second; members that match responses by
        // token as well (covey, libcoap) are not confused by that. (The same choice as
        // `covey serve`.)
        c.mid_reuse_interval = Some(Duration::from_secs(1));
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exchange_table_holds_every_member_request_in_flight() {
        let em = EmConfig::default();
        let c = em.engine_config();
        assert!(c.max_exchanges >= em.max_in_flight * CONCURRENT_QUERIES);
        assert!(c.max_peers > em.max_members);
        assert!(c.mid_reuse() < c.transmission.exchange_lifetime());
    }
}
