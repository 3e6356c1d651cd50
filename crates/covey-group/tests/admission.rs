//! Queries under attack: a flood of queries of a dead entity leaves healthy entities
//! answering, a query that would fan out beyond the per-query budget (nesting included) is
//! refused before any member request, and a client beyond its rate of member requests is
//! answered 5.03 with Max-Age.

mod support;

use covey_core::Code;
use covey_group::EmConfig;
use covey_proto::Duration;
use std::net::SocketAddr;
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
