//! 30 members under 10 % loss on virtual time: a unicast CON entity answers for all 30 every
//! time; a multicast entity misses members, and its replies name the missing ones.

mod support;

use covey_core::{Code, ContentFormat};
use covey_proto::Duration;
use support::client::Client;
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, Network};

const MEMBERS: u16 = 30;
const QUERIES: usize = 20;

fn uris() -> Vec<String> {
    (0..MEMBERS)
        .map(|i| format!("coap://[2001:db8::{:x}]/s/t", 100 + i))
        .collect()
}

fn setup(seed: u64) -> (Network, Client) {
    let mut net = Network::new(Duration::from_millis(10), 0.10, seed);
    for i in 0..MEMBERS {
        sensor(&mut net, 100 + i, f64::from(i), Format::Text, 2);
    }
    em::add_in_memory(&mut net, em_config());
    let client = Client::add(&mut net, addr(2), 2);
    (net, client)
}

/// (code, answered, missing) of one JSON query.
fn query(net: &mut Network, c: &Client, target: &str) -> (Code, usize, Vec<String>) {
    let a = c.get(net, em_addr(), target, Some(ContentFormat::JSON));
    let doc = a.json();
    let missing: Vec<String> = doc["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    (a.code, doc["answered"].as_u64().unwrap() as usize, missing)
}

#[test]
fn unicast_con_entity_answers_for_every_member_under_loss() {
    let (mut net, c) = setup(11);
    let body = format!(
        r#"{{"name":"all","er":{},"eo":["lst","avg"]}}"#,
        serde_json::to_string(&uris()).unwrap()
    );
    let a = c.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(a.code, Code::CREATED, "{}", a.text());
    for q in 0..QUERIES {
        let (code, answered, missing) = query(&mut net, &c, "/e/all");
        assert_eq!(code, Code::CONTENT, "query {q}");
        assert_eq!(answered, 30, "query {q}: missing {missing:?}");
        assert!(missing.is_empty());
    }
    let avg = c.get(&mut net, em_addr(), "/e/all?eo=avg", None).text();
    assert!(avg.starts_with("14.5\nanswered: 30 of 30\n"), "{avg}");
    assert!(net.log.iter().any(|s| s.dropped), "the loss was real");
}

#[test]
fn multicast_entity_misses_members_under_loss() {
    let (mut net, c) = setup(12);
    let body = format!(
        r#"{{"name":"group","er":{},"ect":"multicast"}}"#,
        serde_json::to_string(&uris()).unwrap()
    );
    let a = c.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(
        a.code,
        Code::CREATED,
        "membership set-up is reliable (CON): {}",
        a.text()
    );
    let all = uris();
    let mut answered_total = 0;
    let mut incomplete = 0;
    for q in 0..QUERIES {
        let (code, answered, missing) = query(&mut net, &c, "/e/group");
        assert_eq!(
            answered + missing.len(),
            30,
            "query {q}: every member is accounted for"
        );
        assert!(missing.iter().all(|m| all.contains(m)));
        if answered < 30 {
            incomplete += 1;
            assert_eq!(code, Code::GATEWAY_TIMEOUT, "fewer than enr=30 replies");
        }
        answered_total += answered;
    }
    let member_reliability = answered_total as f64 / (30 * QUERIES) as f64;
    let group_reliability = (QUERIES - incomplete) as f64 / QUERIES as f64;
    eprintln!(
        "multicast, 30 members, 10 % loss: member reliability {member_reliability:.3}, \
         group reliability {group_reliability:.2}"
    );
    assert!(member_reliability < 1.0, "{member_reliability}");
    assert!(
        (0.70..0.90).contains(&member_reliability),
        "about (1-0.1)^2 of the replies arrive: {member_reliability}"
    );
    assert!(group_reliability < 0.5, "{group_reliability}");
}
