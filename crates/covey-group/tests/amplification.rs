//! Amplification (RFC 7252 §11.3) through the EM: what one NON query makes the EM send,
//! against the query's own size. A query of a 1 000-member entity still asks each member
//! once (the entity's purpose), and no more than the per-query budget allows; a query whose
//! nesting would cause more is refused before any member request.

mod support;

use covey_core::Code;
use covey_group::{EntityManager, MemoryStore};
use covey_proto::Duration;
use std::net::SocketAddr;
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, sensor_uri, Network};

/// Members of the large entity.
const MEMBERS: u16 = 1000;

/// The EM's datagrams after log position `from`: (to members, their bytes, to `client`,
/// their bytes).
fn sent_by_em(net: &Network, from: usize, client: SocketAddr) -> (usize, usize, usize, usize) {
    let mut t = (0, 0, 0, 0);
    for d in net.log[from..].iter().filter(|d| d.from == em_addr()) {
        if d.to == client {
            t.2 += 1;
            t.3 += d.bytes.len();
        } else {
            t.0 += 1;
            t.1 += d.bytes.len();
        }
    }
    t
}

#[test]
fn one_query_asks_each_member_once_and_nesting_beyond_the_budget_asks_none() {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 31);
    for n in 0..MEMBERS {
        sensor(&mut net, 2000 + n, 1.0, Format::Text, 1);
    }
    let config = em_config();
    let engine = config.engine_config();
    let budget = config.query_budget;
    let em = EntityManager::new(config, Box::new(MemoryStore::new())).expect("EM");
    em::add_on(&mut net, em, engine);
    let c = Client::add(&mut net, addr(2), 2);
    let uris: Vec<String> = (0..MEMBERS).map(|n| sensor_uri(2000 + n)).collect();
    for name in ["big", "big2"] {
        let body = serde_json::json!({ "name": name, "er": uris }).to_string();
        let a = c.post_json(&mut net, em_addr(), "/e", &body);
        assert_eq!(a.code, Code::CREATED, "{}", a.text());
    }
    let nested: Vec<String> = ["big", "big2"]
        .iter()
        .map(|n| format!("coap://[2001:db8::1]/e/{n}"))
        .collect();
    let body = serde_json::json!({ "name": "both", "er": nested }).to_string();
    assert_eq!(
        c.post_json(&mut net, em_addr(), "/e", &body).code,
        Code::CREATED
    );

    for (target, members) in [("/e/big", MEMBERS as usize), ("/e/both", 0)] {
        let from = net.log.len();
        let id = c.start_non(
            &mut net,
            em_addr(),
            Code::GET,
            Req {
                target,
                ..Req::default()
            },
        );
        let request = net.log[from].bytes.len();
        while !c.ended(id) {
            net.run_for(Duration::from_millis(100));
        }
        let (to_members, member_bytes, replies, reply_bytes) = sent_by_em(&net, from, addr(2));
        eprintln!(
            "{target}: a {request}-byte NON query made the EM send {to_members} datagrams \
             ({member_bytes} bytes) to members and {replies} ({reply_bytes} bytes) back: \
             x{:.0} in bytes",
            (member_bytes + reply_bytes) as f64 / request as f64
        );
        assert_eq!(to_members, members, "{target}");
        assert!(to_members <= budget);
    }
    let a = c.get(&mut net, em_addr(), "/e/both", None);
    assert_eq!(a.code, Code::BAD_REQUEST, "{}", a.text());
}
