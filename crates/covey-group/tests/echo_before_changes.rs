//! A request that changes state — creating, changing or deleting an entity, and joining or
//! leaving a group through `/mc` — from an address that has not echoed an Echo value
//! (RFC 9175) is answered 4.01 with Echo and changes nothing, even where management is
//! open: a blind spoofed request cannot act. A client that answers Echo (the engine's own
//! client) gets the change done.

mod support;

use covey_core::{Code, ContentFormat, Message, MessageEncoder, MessageType, OptionNumber};
use covey_group::GroupMembershipResource;
use covey_proto::{Config, Duration};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, sensor_uri, Network};

/// A CON request with `paths`, `query`, Content-Format JSON when `payload` is not empty.
fn request(code: Code, mid: u16, paths: &[&str], query: Option<&str>, payload: &[u8]) -> Vec<u8> {
    let mut buf = [0u8; 256];
    let mut enc = MessageEncoder::new(&mut buf, MessageType::Confirmable, code, mid, &[7]).unwrap();
    for p in paths {
        enc.option(OptionNumber::URI_PATH, p.as_bytes()).unwrap();
    }
    if !payload.is_empty() {
        enc.option(OptionNumber::CONTENT_FORMAT, &[50]).unwrap();
    }
    if let Some(q) = query {
        enc.option(OptionNumber::URI_QUERY, q.as_bytes()).unwrap();
    }
    if !payload.is_empty() {
        enc.payload(payload).unwrap();
    }
    let n = enc.finish();
    buf[..n].to_vec()
}

/// What `server` answered `spoofed` since `from` datagrams into the log.
fn answers_to(net: &Network, server: SocketAddr, spoofed: SocketAddr, from: usize) -> Vec<Code> {
    net.log[from..]
        .iter()
        .filter(|s| s.from == server && s.to == spoofed)
        .filter_map(|s| Message::parse(&s.bytes).ok().map(|m| m.code()))
        .collect()
}

/// Whether the last answer to `spoofed` is a 4.01 carrying Echo.
fn challenged(net: &Network, server: SocketAddr, spoofed: SocketAddr) -> bool {
    net.log
        .iter()
        .rev()
        .find(|s| s.from == server && s.to == spoofed)
        .and_then(|s| {
            let m = Message::parse(&s.bytes).ok()?;
            Some(m.code() == Code::UNAUTHORIZED && m.option(OptionNumber::ECHO).is_some())
        })
        .unwrap_or(false)
}

#[test]
fn spoofed_entity_changes_are_challenged_and_change_nothing() {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 31);
    sensor(&mut net, 10, 20.0, Format::Text, 1);
    // Management is open: only Echo stands between a spoofed source and the entities.
    let (em_node, _) = em::add_in_memory(&mut net, em_config());
    let owner = Client::add(&mut net, addr(2), 2);
    let body = format!(r#"{{"name":"room","er":["{}"]}}"#, sensor_uri(10));
    let created = owner.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(created.code, Code::CREATED, "{}", created.text());
    let profile = || Req {
        target: "/e/room/profile",
        ..Req::default()
    };
    let before = owner.call(&mut net, em_addr(), Code::GET, profile());

    let victim = addr(0x0bad);
    let other = format!(r#"{{"name":"hall","er":["{}"]}}"#, sensor_uri(10));
    let changed = format!(r#"{{"er":["{}"],"eo":["lst"]}}"#, sensor_uri(10));
    let attacks = [
        request(Code::DELETE, 1, &["e", "room"], None, b""),
        request(Code::POST, 2, &["e"], None, other.as_bytes()),
        request(
            Code::PUT,
            3,
            &["e", "room", "profile"],
            None,
            changed.as_bytes(),
        ),
        request(Code::PUT, 4, &["e", "room"], Some("fanout"), b"1"),
    ];
    for attack in &attacks {
        let from = net.log.len();
        net.inject(victim, em_node, attack);
        net.run_for(Duration::from_secs(2));
        assert_eq!(
            answers_to(&net, em_addr(), victim, from),
            [Code::UNAUTHORIZED],
            "{:?}",
            Message::parse(attack).map(|m| m.code())
        );
        assert!(challenged(&net, em_addr(), victim), "a 4.01 with Echo");
    }
    let after = owner.call(&mut net, em_addr(), Code::GET, profile());
    assert_eq!(after.code, Code::CONTENT, "room is still there");
    assert_eq!(after.payload, before.payload, "and unchanged");
    let hall = owner.get(&mut net, em_addr(), "/e/hall", None);
    assert_eq!(hall.code, Code::NOT_FOUND, "hall was not created");

    // A client that answers Echo changes and deletes as before, from a fresh address.
    let fresh = Client::add(&mut net, addr(3), 3);
    let req = Req {
        target: "/e/room/profile",
        content_format: Some(ContentFormat::JSON),
        payload: changed.as_bytes(),
        ..Req::default()
    };
    let a = fresh.call(&mut net, em_addr(), Code::PUT, req);
    assert_eq!(a.code, Code::CHANGED, "{}", a.text());
    let fresher = Client::add(&mut net, addr(4), 4);
    let req = Req {
        target: "/e/room",
        ..Req::default()
    };
    let a = fresher.call(&mut net, em_addr(), Code::DELETE, req);
    assert_eq!(a.code, Code::DELETED, "{}", a.text());
    let echoed = net.nodes[fresher.node].node.endpoint.stats().echo_retries;
    assert_eq!(echoed, 1, "the delete was sent again once, with Echo");
}

#[test]
fn a_spoofed_leave_is_challenged_and_the_node_stays_in_its_group() {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 32);
    let at = addr(20);
    let node = net.add(
        at,
        Config::default(),
        20,
        Some(Box::new(GroupMembershipResource::new())),
    );
    let group: Ipv6Addr = "ff05::1".parse().unwrap();
    let manager = Client::add(&mut net, addr(2), 2);
    let req = Req {
        target: "/mc?act=add",
        payload: &group.octets(),
        ..Req::default()
    };
    let a = manager.call(&mut net, at, Code::POST, req);
    assert_eq!(a.code, Code::CHANGED, "{}", a.text());
    assert!(net.groups().borrow()[&IpAddr::V6(group)].contains(&at));

    let victim = addr(0x0bad);
    for (mid, act) in [(1, "act=del"), (2, "act=add")] {
        let other: Ipv6Addr = if act == "act=del" {
            group
        } else {
            "ff05::2".parse().unwrap()
        };
        let from = net.log.len();
        let attack = request(Code::POST, mid, &["mc"], Some(act), &other.octets());
        net.inject(victim, node, &attack);
        net.run_for(Duration::from_secs(2));
        assert_eq!(answers_to(&net, at, victim, from), [Code::UNAUTHORIZED]);
        assert!(challenged(&net, at, victim), "a 4.01 with Echo");
    }
    let groups = net.groups();
    let groups = groups.borrow();
    assert!(groups[&IpAddr::V6(group)].contains(&at), "still joined");
    let second: IpAddr = "ff05::2".parse().unwrap();
    assert!(!groups.get(&second).is_some_and(|m| m.contains(&at)));
}
