//! Authorization of the EM and of `/mc` on the in-memory network: each permission of a policy
//! lets its holders through (2.xx) and refuses others, 4.01 without an identity and 4.03 with
//! one not allowed; without a policy, loopback-only refuses other hosts, by unicast and by
//! multicast. The identities are those a DTLS layer would report, set on the serving node's
//! host.

mod support;

use covey_core::{Code, ContentFormat};
use covey_group::authorization::{Access, Policy};
use covey_group::{EmConfig, GroupMembershipResource};
use covey_proto::{Config, PeerIdentity};
use std::net::{Ipv6Addr, SocketAddr};
use std::sync::Arc;
use support::client::{Answer, Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, sensor_uri, Network};

const POLICY: &str = r#"
[[rule]]
who = ["psk:operator"]
may = ["read", "manage"]

[[rule]]
who = ["psk:actuator"]
may = ["read", "fanout"]

[[rule]]
who = ["subject:CN=ward"]
may = ["read"]

[[rule]]
who = ["psk:em"]
may = ["mc-join", "mc-leave"]
groups = ["ff05::/16"]
"#;

fn policy() -> Access {
    Access::Policy(Arc::new(Policy::parse(POLICY, "test policy").unwrap()))
}

/// A client at `addr(n)` that the serving node `server` sees as `identity`.
fn client(net: &mut Network, server: usize, n: u16, identity: Option<PeerIdentity>) -> Client {
    let c = Client::add(net, addr(n), u64::from(n));
    if let Some(identity) = identity {
        net.nodes[server].host.identities.insert(addr(n), identity);
    }
    c
}

fn psk(name: &str) -> Option<PeerIdentity> {
    Some(PeerIdentity::Psk(name.into()))
}

fn call(net: &mut Network, c: &Client, method: Code, target: &str, json: &str) -> Answer {
    let req = Req {
        target,
        content_format: (!json.is_empty()).then_some(ContentFormat::JSON),
        payload: json.as_bytes(),
        ..Req::default()
    };
    c.call(net, em_addr(), method, req)
}

fn assert_code(a: &Answer, code: Code, what: &str) {
    assert_eq!(a.code, code, "{what}: {}", a.text());
}

#[test]
fn each_permission_of_the_policy_opens_its_own_requests_only() {
    let mut net = Network::new(covey_proto::Duration::from_millis(5), 0.0, 3);
    let (_, member) = sensor(&mut net, 10, 21.5, Format::Text, 1);
    let config = EmConfig {
        access: policy(),
        ..em_config()
    };
    let (em, _) = em::add_in_memory(&mut net, config);
    let operator = client(&mut net, em, 2, psk("operator"));
    let actuator = client(&mut net, em, 3, psk("actuator"));
    let ward = Some(PeerIdentity::Certificate {
        subject: "CN=ward".into(),
        fingerprint: [7; 32],
    });
    let ward = client(&mut net, em, 4, ward);
    let stranger = client(&mut net, em, 5, psk("stranger"));
    let clear = client(&mut net, em, 6, None);
    let create = format!(r#"{{"name":"t","er":["{}"]}}"#, sensor_uri(10));

    // Without an identity: 4.01, with a diagnostic, for reading and changing alike.
    let a = call(&mut net, &clear, Code::GET, "/e", "");
    assert_code(&a, Code::UNAUTHORIZED, "clear GET /e");
    assert_eq!(
        a.text(),
        "reading needs an authenticated identity (coaps://)"
    );
    let a = call(&mut net, &clear, Code::POST, "/e", &create);
    assert_code(&a, Code::UNAUTHORIZED, "clear POST /e");
    // An identity the policy does not name: 4.03.
    let a = call(&mut net, &stranger, Code::GET, "/.well-known/core", "");
    assert_code(&a, Code::FORBIDDEN, "stranger discovery");
    assert_eq!(a.text(), "reading is not allowed for psk:stranger");

    // create: only with manage.
    for c in [&ward, &actuator] {
        let a = call(&mut net, c, Code::POST, "/e", &create);
        assert_code(&a, Code::FORBIDDEN, "POST /e without manage");
        assert!(a.text().contains("creating entities"), "{}", a.text());
    }
    let a = call(&mut net, &operator, Code::POST, "/e", &create);
    assert_code(&a, Code::CREATED, "operator creates");

    // read: everyone the policy names may query and see the profile.
    for c in [&ward, &actuator, &operator] {
        let a = call(&mut net, c, Code::GET, "/e/t", "");
        assert_code(&a, Code::CONTENT, "GET /e/t");
        let a = call(&mut net, c, Code::GET, "/e/t/profile", "");
        assert_code(&a, Code::CONTENT, "GET profile");
    }

    // fanout: refused before any member hears of it, allowed for the actuator only.
    for c in [&ward, &operator] {
        let req = Req {
            target: "/e/t?fanout",
            payload: b"on",
            ..Req::default()
        };
        let a = c.call(&mut net, em_addr(), Code::PUT, req);
        assert_code(&a, Code::FORBIDDEN, "fanout without permission");
    }
    assert!(member.borrow().writes.is_empty());
    let req = Req {
        target: "/e/t?fanout",
        payload: b"on",
        ..Req::default()
    };
    let a = actuator.call(&mut net, em_addr(), Code::PUT, req);
    assert!(a.code.is_success(), "actuator fanout: {}", a.text());
    assert_eq!(member.borrow().writes, vec![(Code::PUT, b"on".to_vec())]);

    // change: the profile.
    let profile = format!(r#"{{"er":["{}"],"eo":["avg"]}}"#, sensor_uri(10));
    let a = call(&mut net, &actuator, Code::PUT, "/e/t/profile", &profile);
    assert_code(&a, Code::FORBIDDEN, "actuator changes the profile");
    let a = call(&mut net, &operator, Code::PUT, "/e/t/profile", &profile);
    assert_code(&a, Code::CHANGED, "operator changes the profile");

    // delete.
    let a = call(&mut net, &ward, Code::DELETE, "/e/t", "");
    assert_code(&a, Code::FORBIDDEN, "ward deletes");
    let a = call(&mut net, &clear, Code::DELETE, "/e/t", "");
    assert_code(&a, Code::UNAUTHORIZED, "clear deletes");
    let a = call(&mut net, &operator, Code::DELETE, "/e/t", "");
    assert_code(&a, Code::DELETED, "operator deletes");
}

#[test]
fn without_a_policy_loopback_only_refuses_other_hosts() {
    let mut net = Network::new(covey_proto::Duration::from_millis(5), 0.0, 4);
    let config = EmConfig {
        access: Access::LoopbackOnly,
        ..em_config()
    };
    let (em, _) = em::add_in_memory(&mut net, config);
    let remote = client(&mut net, em, 2, None);
    let local = Client::add(&mut net, "[::1]:40000".parse().unwrap(), 9);
    let a = call(&mut net, &remote, Code::GET, "/e", "");
    assert_code(&a, Code::UNAUTHORIZED, "remote GET /e");
    assert!(
        a.text().contains("clients on this host only"),
        "{}",
        a.text()
    );
    let a = call(&mut net, &local, Code::GET, "/e", "");
    assert_code(&a, Code::CONTENT, "loopback GET /e");
}

/// A node serving `/mc` under `access` at `addr(20)`.
fn mc_node(net: &mut Network, access: Access) -> (usize, SocketAddr) {
    let app = GroupMembershipResource::with_access(access);
    let node = net.add(addr(20), Config::default(), 20, Some(Box::new(app)));
    (node, addr(20))
}

fn mc(net: &mut Network, c: &Client, to: SocketAddr, act: &str, group: &str) -> Answer {
    let target = format!("/mc?act={act}");
    let octets = group.parse::<Ipv6Addr>().unwrap().octets();
    let req = Req {
        target: &target,
        payload: &octets,
        ..Req::default()
    };
    c.call(net, to, Code::POST, req)
}

#[test]
fn mc_joins_and_leaves_only_within_the_granted_prefix() {
    let mut net = Network::new(covey_proto::Duration::from_millis(5), 0.0, 5);
    let (node, at) = mc_node(&mut net, policy());
    let em = client(&mut net, node, 2, psk("em"));
    let operator = client(&mut net, node, 3, psk("operator"));
    let clear = client(&mut net, node, 4, None);

    let a = mc(&mut net, &clear, at, "add", "ff05::1");
    assert_code(&a, Code::UNAUTHORIZED, "clear join");
    let a = mc(&mut net, &operator, at, "add", "ff05::1");
    assert_code(&a, Code::FORBIDDEN, "operator joins (no mc-join)");
    assert!(a.text().contains("joining ff05::1"), "{}", a.text());
    let a = mc(&mut net, &em, at, "add", "ff02::1");
    assert_code(&a, Code::FORBIDDEN, "em joins outside its prefix");
    assert!(net.groups().borrow().values().all(|m| !m.contains(&at)));

    let a = mc(&mut net, &em, at, "add", "ff05::1");
    assert_code(&a, Code::CHANGED, "em joins");
    let group = "ff05::1".parse().unwrap();
    assert!(net.groups().borrow()[&group].contains(&at));

    // Listing needs read, which the operator has and the EM's identity has not.
    let list = |net: &mut Network, c: &Client| {
        let req = Req {
            target: "/mc",
            ..Req::default()
        };
        c.call(net, at, Code::GET, req)
    };
    let a = list(&mut net, &operator);
    assert_code(&a, Code::CONTENT, "operator lists");
    assert_eq!(a.text(), "ff05::1\n");
    assert_code(&list(&mut net, &em), Code::FORBIDDEN, "em lists");
    assert_code(&list(&mut net, &clear), Code::UNAUTHORIZED, "clear lists");

    let a = mc(&mut net, &operator, at, "del", "ff05::1");
    assert_code(&a, Code::FORBIDDEN, "operator leaves");
    let a = mc(&mut net, &em, at, "del", "ff05::1");
    assert_code(&a, Code::DELETED, "em leaves");
    assert!(!net.groups().borrow()[&group].contains(&at));
}

#[test]
fn mc_without_a_policy_takes_changes_from_loopback_only() {
    let mut net = Network::new(covey_proto::Duration::from_millis(5), 0.0, 6);
    let (node, at) = mc_node(&mut net, Access::LoopbackOnly);
    let remote = client(&mut net, node, 2, None);
    let local = Client::add(&mut net, "[::1]:40001".parse().unwrap(), 9);
    let a = mc(&mut net, &remote, at, "add", "ff05::2");
    assert_code(&a, Code::UNAUTHORIZED, "remote join");
    let a = mc(&mut net, &local, at, "add", "ff05::2");
    assert_code(&a, Code::CHANGED, "loopback join");
}

#[test]
fn a_multicast_request_from_another_host_cannot_make_members_join() {
    let mut net = Network::new(covey_proto::Duration::from_millis(5), 0.0, 7);
    let (node, at) = mc_node(&mut net, Access::LoopbackOnly);
    let all: std::net::IpAddr = "ff05::fd".parse().unwrap();
    net.join(node, all);
    let attacker = client(&mut net, node, 2, None);
    let target: std::net::IpAddr = "ff05::66".parse().unwrap();
    let octets = "ff05::66".parse::<Ipv6Addr>().unwrap().octets();
    let req = Req {
        target: "/mc?act=add",
        payload: &octets,
        ..Req::default()
    };
    attacker.start_non(&mut net, SocketAddr::new(all, 5683), Code::POST, req);
    net.run_for(covey_proto::Duration::from_secs(30));
    let joined = net
        .groups()
        .borrow()
        .get(&target)
        .cloned()
        .unwrap_or_default();
    assert!(!joined.contains(&at), "{joined:?}");
    // The same request from the member's own host joins: the request did reach /mc.
    let local = Client::add(&mut net, "[::1]:40002".parse().unwrap(), 11);
    let req = Req {
        target: "/mc?act=add",
        payload: &octets,
        ..Req::default()
    };
    local.start_non(&mut net, SocketAddr::new(all, 5683), Code::POST, req);
    net.run_for(covey_proto::Duration::from_secs(30));
    assert!(net.groups().borrow()[&target].contains(&at));
}
