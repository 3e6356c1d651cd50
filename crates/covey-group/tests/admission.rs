//! Queries under attack: a flood of queries of a dead entity leaves healthy entities
//! answering, a query that would fan out beyond the per-query budget (nesting included) is
//! refused before any member request, a client beyond its rate of member requests is
//! answered 5.03 with Max-Age, and one client (an address, or the hosts of one prefix)
//! keeping silent entities in flight holds only its share of the member requests.

mod support;

use covey_core::Code;
use covey_group::EmConfig;
use covey_proto::{Duration, RequestId};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, sensor_uri, Network};

/// Creates entity `name` of `er` on the EM; panics unless it is created.
fn create(net: &mut Network, c: &Client, name: &str, er: &[String]) {
    let body = format!(
        r#"{{"name":"{name}","er":{}}}"#,
        serde_json::to_string(er).unwrap()
    );
    let a = c.post_json(net, em_addr(), "/e", &body);
    assert_eq!(a.code, Code::CREATED, "{name}: {}", a.text());
}

/// A client in another /64 than the `addr(n)` nodes, so it has a budget of its own.
fn outsider() -> SocketAddr {
    "[2001:db8:1::2]:5683".parse().unwrap()
}

#[test]
fn a_flood_of_queries_of_a_dead_entity_leaves_healthy_entities_answering() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 21);
    let dead: Vec<u16> = (100..164).collect();
    for &n in &dead {
        sensor(&mut net, n, 1.0, Format::Text, 1);
    }
    sensor(&mut net, 10, 2.0, Format::Text, 1);
    let (_, em) = em::add_in_memory(&mut net, em_config());
    let attacker = Client::add(&mut net, addr(2), 2);
    let uris: Vec<String> = dead.iter().map(|&n| sensor_uri(n)).collect();
    create(&mut net, &attacker, "dead", &uris);
    create(&mut net, &attacker, "healthy", &[sensor_uri(10)]);
    // The 64 members go silent.
    let silent: Vec<SocketAddr> = dead.iter().map(|&n| addr(n)).collect();
    net.drop_rule = Some(Box::new(move |_, to, _| silent.contains(to)));
    // 70 queries from 70 hosts of one /64 (each waits for its answer before asking again),
    // 4 480 member requests asked for: more than the engine's 4 096 exchanges.
    let floods: Vec<_> = (200..270)
        .map(|n| {
            let c = Client::add(&mut net, addr(n), u64::from(n));
            let req = Req {
                target: "/e/dead",
                ..Req::default()
            };
            let id = c.start(&mut net, em_addr(), Code::GET, req);
            (c, id)
        })
        .collect();
    net.run_for(Duration::from_secs(1));
    let share = EmConfig::default().entity_share;
    assert!(
        em.borrow().member_requests_in_flight() <= share,
        "{} member requests in flight",
        em.borrow().member_requests_in_flight()
    );
    // The queries beyond the dead entity's share are told when to come back.
    let refused: Vec<_> = floods.iter().flat_map(|(c, id)| c.answers(*id)).collect();
    assert!(
        refused.len() >= 70 - share / 64,
        "{} refused",
        refused.len()
    );
    for a in &refused {
        assert_eq!(a.code, Code::SERVICE_UNAVAILABLE, "{}", a.text());
        assert!(a.max_age.is_some_and(|s| s >= 1), "{a:?}");
    }
    // Another client, and the attacker too, still get the healthy entity's value at once.
    let started = net.now;
    for c in [&Client::add(&mut net, outsider(), 4), &attacker] {
        let a = c.get(&mut net, em_addr(), "/e/healthy", None);
        assert_eq!(a.code, Code::CONTENT, "{}", a.text());
        assert!(a.text().contains(&sensor_uri(10)), "{}", a.text());
    }
    assert!(net.now - started < Duration::from_secs(5));
}

#[test]
fn a_query_beyond_the_per_query_budget_is_refused_before_any_member_request() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 22);
    for n in 10..22 {
        sensor(&mut net, n, 1.0, Format::Text, 1);
    }
    em::add_in_memory(
        &mut net,
        EmConfig {
            query_budget: 10,
            ..em_config()
        },
    );
    let c = Client::add(&mut net, addr(2), 2);
    let entity = |name: &str| format!("coap://[2001:db8::1]/e/{name}");
    for (i, name) in ["r0", "r1", "r2"].into_iter().enumerate() {
        let first = 10 + 4 * i as u16;
        let members: Vec<String> = (first..first + 4).map(sensor_uri).collect();
        create(&mut net, &c, name, &members);
    }
    // 3 nested entities of 4 members: 12 member requests, over the budget of 10.
    create(
        &mut net,
        &c,
        "floor",
        &[entity("r0"), entity("r1"), entity("r2")],
    );
    let sent = net.log.len();
    let a = c.get(&mut net, em_addr(), "/e/floor", None);
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert_eq!(
        a.text(),
        "entity floor needs 11 member requests or more; one query may cause 10 at most"
    );
    let member_requests = net.log[sent..]
        .iter()
        .filter(|d| d.from == em_addr() && d.to != addr(2))
        .count();
    assert_eq!(member_requests, 0);
    // One nested entity alone is within it.
    assert_eq!(
        c.get(&mut net, em_addr(), "/e/r1", None).code,
        Code::CONTENT
    );
}

#[test]
fn a_client_beyond_its_rate_gets_service_unavailable_with_max_age() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 23);
    for n in 10..14 {
        sensor(&mut net, n, 1.0, Format::Text, 1);
    }
    em::add_in_memory(
        &mut net,
        EmConfig {
            client_rate: 8,
            ..em_config()
        },
    );
    let c = Client::add(&mut net, addr(2), 2);
    let members: Vec<String> = (10..14).map(sensor_uri).collect();
    create(&mut net, &c, "room", &members);
    // 4 member requests a query, 8 a second: two queries, then a wait.
    assert_eq!(
        c.get(&mut net, em_addr(), "/e/room", None).code,
        Code::CONTENT
    );
    assert_eq!(
        c.get(&mut net, em_addr(), "/e/room", None).code,
        Code::CONTENT
    );
    let a = c.get(&mut net, em_addr(), "/e/room", None);
    assert_eq!(a.code, Code::SERVICE_UNAVAILABLE, "{}", a.text());
    assert_eq!(a.max_age, Some(1));
    // Another /64 is not held back, and the client is served again after Max-Age.
    let other = Client::add(&mut net, outsider(), 3);
    assert_eq!(
        other.get(&mut net, em_addr(), "/e/room", None).code,
        Code::CONTENT
    );
    net.run_for(Duration::from_secs(1));
    assert_eq!(
        c.get(&mut net, em_addr(), "/e/room", None).code,
        Code::CONTENT
    );
}

/// Four entities of `members` members each that go silent, and a healthy one; the EM
/// runs on the default engine (its exchanges leave room for 224 member requests).
fn silent_entities(net: &mut Network, members: u16) -> support::em::SharedEm {
    let owner = Client::add(net, addr(2), 2);
    let (_, em) = em::add_in_memory(net, em_config());
    let mut silent = Vec::new();
    for e in 0..4u16 {
        let first = 100 + e * members;
        let ns: Vec<u16> = (first..first + members).collect();
        for &n in &ns {
            sensor(net, n, 1.0, Format::Text, 1);
        }
        let uris: Vec<String> = ns.iter().map(|&n| sensor_uri(n)).collect();
        create(net, &owner, &format!("dead{e}"), &uris);
        silent.extend(ns.iter().map(|&n| addr(n)));
    }
    sensor(net, 10, 2.0, Format::Text, 1);
    create(net, &owner, "healthy", &[sensor_uri(10)]);
    net.drop_rule = Some(Box::new(move |_, to, _| silent.contains(to)));
    em
}

/// Starts a query of each silent entity, one from each of `clients`.
fn hold_the_silent_entities(net: &mut Network, clients: &[SocketAddr]) -> Vec<(Client, RequestId)> {
    let held: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, &at)| {
            let c = Client::add(net, at, 300 + i as u64);
            let target = format!("/e/dead{}", i % 4);
            let req = Req {
                target: &target,
                ..Req::default()
            };
            let id = c.start(net, em_addr(), Code::GET, req);
            (c, id)
        })
        .collect();
    net.run_for(Duration::from_secs(1));
    held
}

/// The answers so far of the queries `held` started.
fn answered(held: &[(Client, RequestId)]) -> Vec<support::client::Answer> {
    held.iter().flat_map(|(c, id)| c.answers(*id)).collect()
}

#[test]
fn one_client_holding_every_entity_in_flight_leaves_room_for_others() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 24);
    let em = silent_entities(&mut net, 56);
    // One address, four ports: a query of each silent entity, 224 member requests wanted,
    // each held for the member timeout (50 s).
    let ports: Vec<SocketAddr> = (0..4)
        .map(|p| SocketAddr::new("2001:db8:7::66".parse().unwrap(), 40_000 + p))
        .collect();
    let held = hold_the_silent_entities(&mut net, &ports);
    let in_flight = em.borrow().member_requests_in_flight();
    assert!(in_flight <= 224 / 4, "{in_flight} held by one address");
    let refused = answered(&held);
    assert_eq!(
        refused.len(),
        3,
        "the queries beyond its share: {refused:?}"
    );
    for a in &refused {
        assert_eq!(a.code, Code::SERVICE_UNAVAILABLE, "{}", a.text());
        assert!(a.text().contains("your address"), "{}", a.text());
        assert!(a.max_age.is_some_and(|s| s >= 1), "{a:?}");
    }
    // Another client is answered at once, while the attacker's queries still wait.
    let started = net.now;
    let other = Client::add(&mut net, outsider(), 4);
    let a = other.get(&mut net, em_addr(), "/e/healthy", None);
    assert_eq!(a.code, Code::CONTENT, "{}", a.text());
    assert!(net.now - started < Duration::from_secs(5));
    assert!(
        held.iter().any(|(c, id)| !c.ended(*id)),
        "the attack holds on"
    );
    // Once the silent members time out, the address has its whole share back.
    net.run_for(Duration::from_secs(60));
    assert!(held.iter().all(|(c, id)| c.ended(*id)));
    assert_eq!(em.borrow().member_requests_in_flight(), 0);
    let fresh_port = SocketAddr::new(ports[0].ip(), 41_000);
    let again = hold_the_silent_entities(&mut net, &[fresh_port]);
    assert!(answered(&again).is_empty(), "admitted again");
    assert_eq!(em.borrow().member_requests_in_flight(), 56);
}

#[test]
fn the_hosts_of_one_prefix_share_half_of_the_room() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 25);
    let em = silent_entities(&mut net, 56);
    // Four addresses of one /64: a quarter each, half of the room together.
    let hosts: Vec<SocketAddr> = (1..=4)
        .map(|h| {
            SocketAddr::new(
                IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 7, 0, 0, 0, 0, h)),
                5683,
            )
        })
        .collect();
    let held = hold_the_silent_entities(&mut net, &hosts);
    let in_flight = em.borrow().member_requests_in_flight();
    assert!(in_flight <= 224 / 2, "{in_flight} held by one /64");
    let refused = answered(&held);
    assert_eq!(refused.len(), 2, "{refused:?}");
    for a in &refused {
        assert_eq!(a.code, Code::SERVICE_UNAVAILABLE, "{}", a.text());
    }
    let other = Client::add(&mut net, outsider(), 4);
    let a = other.get(&mut net, em_addr(), "/e/healthy", None);
    assert_eq!(a.code, Code::CONTENT, "{}", a.text());
    // IPv4 hosts share a /24 the same way.
    let v4 = Client::add(&mut net, "192.0.2.7:5683".parse().unwrap(), 5);
    assert_eq!(
        v4.get(&mut net, em_addr(), "/e/healthy", None).code,
        Code::CONTENT
    );
}
