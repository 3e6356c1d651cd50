//! Multicast entities on virtual time: group address assignment, membership set-up with
//! unicast CON `POST /mc?act=add`, one NON request per query, the group used directly at
//! `mcastURI`, rollback when a member refuses, and leave-on-delete.

mod support;

use covey_core::{Code, ContentFormat, Message, MessageType};
use covey_group::{ErrorReport, Reason};
use covey_proto::Duration;
use std::net::{IpAddr, SocketAddr};
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format, Shared};
use support::{addr, Network};

fn uri(n: u16) -> String {
    format!("coap://[2001:db8::{n:x}]/s/t")
}

fn group(n: u16) -> IpAddr {
    format!("ff1e::89:{n:x}").parse().unwrap()
}

fn create_body(name: &str, members: &[u16], extra: &str) -> String {
    let er: Vec<String> = members.iter().map(|n| uri(*n)).collect();
    format!(
        r#"{{"name":"{name}","er":{},"ect":"multicast"{extra}}}"#,
        serde_json::to_string(&er).unwrap()
    )
}

fn setup(max_groups: &[usize]) -> (Network, Client, Vec<Shared>) {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 4);
    let sensors = max_groups
        .iter()
        .enumerate()
        .map(|(i, max)| sensor(&mut net, 10 + i as u16, 20.0 + i as f64, Format::Text, *max).1)
        .collect();
    em::add_in_memory(&mut net, em_config());
    let client = Client::add(&mut net, addr(2), 2);
    (net, client, sensors)
}

#[test]
fn multicast_entity_life_cycle() {
    let (mut net, client, sensors) = setup(&[4, 4, 4]);
    let created = client.post_json(
        &mut net,
        em_addr(),
        "/e",
        &create_body("mc1", &[10, 11, 12], ""),
    );
    assert_eq!(created.code, Code::CREATED, "{}", created.text());
    let text = created.text();
    assert!(text.contains("(3 members, multicast)"), "{text}");
    assert!(text.contains("mcastURI: coap://[ff1e::89:1]/s/t"), "{text}");
    assert_eq!(text.matches(" joined (2.04 Changed)").count(), 3, "{text}");

    // Every member joined, through a unicast CON POST /mc?act=add with 16 raw bytes.
    for s in &sensors {
        assert_eq!(s.borrow().groups, [group(1)]);
        assert_eq!(s.borrow().membership, ["add"]);
    }
    let joins: Vec<_> = net
        .sent_by(em_addr())
        .into_iter()
        .filter_map(|s| {
            let m = Message::parse(&s.bytes).ok()?;
            (m.uri_path().next() == Some("mc"))
                .then(|| (m.message_type(), m.payload().to_vec(), s.to))
        })
        .collect();
    assert_eq!(joins.len(), 3);
    for (t, payload, to) in &joins {
        assert_eq!(*t, MessageType::Confirmable);
        assert!(!to.ip().is_multicast());
        let IpAddr::V6(g) = group(1) else { panic!() };
        assert_eq!(payload.as_slice(), g.octets());
    }
    // The members' /mc lists the group.
    let listed = client.get(&mut net, addr(10), "/mc", None);
    assert_eq!(listed.text(), "ff1e::89:1\n");

    let profile = client
        .get(&mut net, em_addr(), "/e/mc1/profile", None)
        .json();
    assert_eq!(profile["ect"], "multicast");
    assert_eq!(profile["emt"], "non");
    assert_eq!(profile["mcastURI"], "coap://[ff1e::89:1]/s/t");
    assert!(client
        .get(&mut net, em_addr(), "/e", None)
        .text()
        .contains("</e/mc1>;rt=\"core.entity\";ect=multicast"));

    // A query is one NON request to the group; replies come within the leisure.
    let sent_before = net.sent_by(em_addr()).len();
    let start = net.now;
    let a = client.get(
        &mut net,
        em_addr(),
        "/e/mc1?eo=avg",
        Some(ContentFormat::JSON),
    );
    assert_eq!(a.code, Code::CONTENT, "{}", a.text());
    assert!(a.at - start < Duration::from_secs(6), "within the leisure");
    let doc = a.json();
    assert_eq!(doc["value"].as_f64(), Some(21.0));
    assert_eq!(doc["answered"], 3);
    let to_group: Vec<_> = net.sent_by(em_addr())[sent_before..]
        .iter()
        .filter(|s| s.to.ip() == group(1))
        .map(|s| Message::parse(&s.bytes).unwrap().message_type())
        .collect();
    assert_eq!(to_group, [MessageType::NonConfirmable]);
    for s in &sensors {
        assert_eq!(s.borrow().multicast_gets, 1);
    }

    // Anycast: the first reply wins.
    let doc = client
        .get(
            &mut net,
            em_addr(),
            "/e/mc1?enr=1",
            Some(ContentFormat::JSON),
        )
        .json();
    assert_eq!(doc["answered"], 1);
    assert_eq!(
        doc["not_needed"], doc["missing"],
        "asked, but not awaited once the first answered"
    );

    // Any client can use the group without the EM.
    let answers = client.multicast(&mut net, SocketAddr::new(group(1), 5683), "/s/t");
    let mut values: Vec<String> = answers.iter().map(|a| a.text()).collect();
    values.sort();
    assert_eq!(values, ["20", "21", "22"]);

    // Deletion: every member leaves, the reply says so.
    let deleted = client.call(
        &mut net,
        em_addr(),
        Code::DELETE,
        Req {
            target: "/e/mc1",
            ..Req::default()
        },
    );
    assert_eq!(deleted.code, Code::DELETED);
    let text = deleted.text();
    assert!(text.contains("3 of 3 members left ff1e::89:1"), "{text}");
    assert_eq!(text.matches(" left (2.02 Deleted)").count(), 3, "{text}");
    for s in &sensors {
        assert!(s.borrow().groups.is_empty());
        assert_eq!(s.borrow().membership, ["add", "del"]);
    }
    assert!(net.groups().borrow()[&group(1)].is_empty());

    // The released address is not handed out again while the pool has others.
    let again = client.post_json(
        &mut net,
        em_addr(),
        "/e",
        &create_body("mc2", &[10, 11], ""),
    );
    assert!(again.text().contains("ff1e::89:2"), "{}", again.text());
}

#[test]
fn creation_rolls_back_when_a_member_refuses() {
    // The third member's group table is full.
    let (mut net, client, sensors) = setup(&[4, 4, 0]);
    let a = client.post_json(
        &mut net,
        em_addr(),
        "/e",
        &create_body("mc", &[10, 11, 12], ""),
    );
    assert_eq!(a.code, Code::BAD_GATEWAY, "{}", a.text());
    // A JSON request: the report names the members as the field at fault.
    let report = ErrorReport::from_response(a.content_format, &a.payload).expect("a report");
    assert_eq!(
        (report.field.as_deref(), report.reason),
        (Some("er"), Reason::MemberRefused)
    );
    let text = report.error;
    assert!(
        text.starts_with("entity mc not created: not every member joined ff1e::89:1\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} refused: 5.03 Service Unavailable group table full",
            uri(12)
        )),
        "{text}"
    );
    assert_eq!(text.matches("rolled back: ").count(), 2, "{text}");
    for s in &sensors[..2] {
        assert_eq!(s.borrow().membership, ["add", "del"], "joined, then left");
        assert!(s.borrow().groups.is_empty());
    }
    assert_eq!(sensors[2].borrow().membership, ["add"]);
    assert_eq!(
        client.get(&mut net, em_addr(), "/e/mc", None).code,
        Code::NOT_FOUND
    );
    assert_eq!(client.get(&mut net, em_addr(), "/e", None).text(), "");
}

#[test]
fn multicast_members_must_share_path() {
    let (mut net, client, _) = setup(&[4, 4]);
    let body = format!(
        r#"{{"name":"m","er":["{}","coap://[2001:db8::b]/s/h"],"ect":"multicast"}}"#,
        uri(10)
    );
    let a = client.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert!(
        a.text().contains("needs every member at the same path"),
        "{}",
        a.text()
    );
}

#[test]
fn changing_the_members_of_a_multicast_entity() {
    let (mut net, client, sensors) = setup(&[4, 4, 4]);
    let a = client.post_json(&mut net, em_addr(), "/e", &create_body("m", &[10, 11], ""));
    assert_eq!(a.code, Code::CREATED, "{}", a.text());
    let body = format!(r#"{{"er":["{}","{}"]}}"#, uri(11), uri(12));
    let a = client.call(
        &mut net,
        em_addr(),
        Code::PUT,
        Req {
            target: "/e/m/profile",
            content_format: Some(ContentFormat::JSON),
            payload: body.as_bytes(),
            ..Req::default()
        },
    );
    assert_eq!(a.code, Code::CHANGED, "{}", a.text());
    let text = a.text();
    assert!(text.contains(&format!("{} joined", uri(12))), "{text}");
    assert!(text.contains(&format!("{} left", uri(10))), "{text}");
    assert_eq!(sensors[0].borrow().membership, ["add", "del"]);
    assert_eq!(
        sensors[1].borrow().membership,
        ["add"],
        "kept, not asked again"
    );
    assert_eq!(sensors[2].borrow().groups, [group(1)]);
    let doc = client
        .get(&mut net, em_addr(), "/e/m", Some(ContentFormat::JSON))
        .json();
    assert_eq!(doc["answered"], 2);
    assert_eq!(doc["replies"][1]["member"], uri(12));
}
