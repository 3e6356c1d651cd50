//! A reply larger than one block (1 024 bytes) goes out block-wise: the client gets the whole
//! body, with an ETag, and its later Block2 requests are served from the engine's copy of the
//! body, so the members are asked once per query, not once per block.

mod support;

use covey_core::{Code, ContentFormat};
use covey_proto::Duration;
use support::client::Client;
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, Network};

const MEMBERS: u16 = 40;

#[test]
fn a_large_reply_is_fetched_block_wise_without_a_second_fan_out() {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 3);
    let sensors: Vec<_> = (0..MEMBERS)
        .map(|i| sensor(&mut net, 100 + i, 20.0 + f64::from(i), Format::SenmlJson, 2).1)
        .collect();
    em::add_in_memory(&mut net, em_config());
    let c = Client::add(&mut net, addr(2), 2);
    let uris: Vec<String> = (0..MEMBERS)
        .map(|i| format!("coap://[2001:db8::{:x}]/s/t", 100 + i))
        .collect();
    let body = format!(
        r#"{{"name":"many","er":{},"eo":["lst"]}}"#,
        serde_json::to_string(&uris).unwrap()
    );
    let created = c.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(created.code, Code::CREATED, "{}", created.text());

    let asked = |sensors: &[support::member::Shared]| -> Vec<u32> {
        sensors.iter().map(|s| s.borrow().gets).collect()
    };
    // Creation checks each member once.
    let before = asked(&sensors);
    let reply = c.get(
        &mut net,
        em_addr(),
        "/e/many",
        Some(ContentFormat::SENML_JSON),
    );
    assert_eq!(reply.code, Code::CONTENT);
    assert!(
        reply.payload.len() > 2 * 1024,
        "the reply spans several blocks ({} bytes)",
        reply.payload.len()
    );
    let records = reply.json();
    // One record per member, after the record of how many answered.
    let members = records.as_array().map_or(0, |r| {
        r.iter()
            .filter(|rec| rec["n"].as_str().is_some_and(|n| n.ends_with("/s/t")))
            .count()
    });
    assert_eq!(members, MEMBERS as usize, "{records}");
    assert_eq!(records[0]["v"], MEMBERS, "answered");
    let after = asked(&sensors);
    let per_query: Vec<u32> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert!(
        per_query.iter().all(|&n| n == 1),
        "every member asked once for the whole body: {per_query:?}"
    );
}
