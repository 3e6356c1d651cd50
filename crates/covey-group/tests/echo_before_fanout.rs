//! A query from an address that has not echoed an Echo value (RFC 9175) is answered 4.01
//! with Echo before any member is asked, so a spoofed query costs the members nothing; a
//! client that answers Echo gets its reply with each member asked once.

mod support;

use covey_core::{Code, ContentFormat, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::Duration;
use support::client::Client;
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, Network};

const MEMBERS: u16 = 5;

#[test]
fn a_spoofed_query_asks_no_member_and_an_echoing_client_asks_each_once() {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 3);
    let sensors: Vec<_> = (0..MEMBERS)
        .map(|i| sensor(&mut net, 100 + i, 20.0, Format::SenmlJson, 2).1)
        .collect();
    let (em_node, _) = em::add_in_memory(&mut net, em_config());
    let c = Client::add(&mut net, addr(2), 2);
    let uris: Vec<String> = (0..MEMBERS)
        .map(|i| format!("coap://[2001:db8::{:x}]/s/t", 100 + i))
        .collect();
    let body = format!(
        r#"{{"name":"room","er":{},"eo":["lst"]}}"#,
        serde_json::to_string(&uris).unwrap()
    );
    let created = c.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(created.code, Code::CREATED, "{}", created.text());
    let asked = || -> Vec<u32> { sensors.iter().map(|s| s.borrow().gets).collect() };
    let before = asked();

    // A NON query with a victim's address as its source.
    let victim = addr(0x0bad);
    let mut buf = [0u8; 64];
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::NonConfirmable, Code::GET, 1, &[]).unwrap();
    enc.option(OptionNumber::URI_PATH, b"e").unwrap();
    enc.option(OptionNumber::URI_PATH, b"room").unwrap();
    let n = enc.finish();
    net.inject(victim, em_node, &buf[..n]);
    net.run_for(Duration::from_secs(5));
    assert_eq!(asked(), before, "no member asked");
    let answers: Vec<Vec<u8>> = net
        .sent_by(em_addr())
        .into_iter()
        .filter(|s| s.to == victim)
        .map(|s| s.bytes.clone())
        .collect();
    assert_eq!(answers.len(), 1);
    let challenge = Message::parse(&answers[0]).unwrap();
    assert_eq!(challenge.code(), Code::UNAUTHORIZED);
    assert!(challenge.option(OptionNumber::ECHO).is_some());
    assert!(answers[0].len() <= 3 * n);

    // The engine's client answers the Echo; each member is asked once.
    let reply = c.get(
        &mut net,
        em_addr(),
        "/e/room",
        Some(ContentFormat::SENML_JSON),
    );
    assert_eq!(reply.code, Code::CONTENT, "{}", reply.text());
    let per_query: Vec<u32> = asked().iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(per_query, vec![1; MEMBERS as usize]);
}
