//! Aggregates at the members' precision: members reading 19.1 and 19.3 average to 19.2 in
//! every reply format, not to the binary noise 19.200000000000003, and three 8.2 sum to 24.6.

mod support;

use covey_core::{Code, ContentFormat};
use support::client::Client;
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, Network};

#[test]
fn average_and_sum_print_the_members_precision() {
    let mut net = Network::new(covey_proto::Duration::from_millis(10), 0.0, 1);
    let mut uris = Vec::new();
    for (n, value) in [(10u16, 19.1), (11, 19.3), (12, 8.2), (13, 8.2), (14, 8.2)] {
        sensor(&mut net, n, value, Format::Text, 4);
        uris.push(format!("coap://[2001:db8::{n:x}]/s/t"));
    }
    em::add_in_memory(&mut net, em_config());
    let client = Client::add(&mut net, addr(2), 2);
    let er = serde_json::to_string(&uris[..2]).unwrap();
    let body = format!(r#"{{"name":"pair","er":{er},"eo":["avg","sum"]}}"#);
    let created = client.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(created.code, Code::CREATED, "{}", created.text());
    let er = serde_json::to_string(&uris[2..]).unwrap();
    let three = format!(r#"{{"name":"three","er":{er},"eo":["sum"]}}"#);
    let created = client.post_json(&mut net, em_addr(), "/e", &three);
    assert_eq!(created.code, Code::CREATED, "{}", created.text());

    let text = client
        .get(&mut net, em_addr(), "/e/pair?eo=avg", None)
        .text();
    assert_eq!(text.lines().next(), Some("19.2"), "{text}");
    let text = client
        .get(&mut net, em_addr(), "/e/pair?eo=sum", None)
        .text();
    assert_eq!(text.lines().next(), Some("38.4"), "{text}");
    let senml = client.get(
        &mut net,
        em_addr(),
        "/e/pair?eo=avg",
        Some(ContentFormat::SENML_JSON),
    );
    let senml = String::from_utf8(senml.payload).unwrap();
    assert!(senml.contains(r#""v":19.2"#), "{senml}");
    assert!(!senml.contains("19.200000"), "{senml}");
    let json = client.get(
        &mut net,
        em_addr(),
        "/e/pair?eo=avg",
        Some(ContentFormat::JSON),
    );
    let json = String::from_utf8(json.payload).unwrap();
    assert!(json.contains(r#""value":19.2"#), "{json}");
    let text = client.get(&mut net, em_addr(), "/e/three", None).text();
    assert_eq!(text.lines().next(), Some("24.6"), "{text}");
}
