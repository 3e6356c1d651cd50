//! The whole life of a unicast entity on virtual time: create, list, show, query with every
//! operation and every Accept (SenML parsed back), anycast, delay, fan-out, profile change,
//! delete.

mod support;

use covey_core::{Code, ContentFormat};
use covey_group::senml::{self, ResolvedValue};
use covey_proto::{Duration, LogLevel};
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format, Shared};
use support::{addr, Network};

const VALUES: [f64; 5] = [20.0, 22.0, 27.0, 21.0, 25.0];
const FORMATS: [Format; 5] = [
    Format::Text,
    Format::Json,
    Format::Cbor,
    Format::SenmlJson,
    Format::SenmlCbor,
];

fn member_uri(n: u16) -> String {
    format!("coap://[2001:db8::{n:x}]/s/t")
}

struct Setup {
    net: Network,
    client: Client,
    sensors: Vec<Shared>,
    uris: Vec<String>,
}

fn setup() -> Setup {
    setup_with(em_config())
}

fn setup_with(config: covey_group::EmConfig) -> Setup {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let mut sensors = Vec::new();
    let mut uris = Vec::new();
    for (i, (v, f)) in VALUES.iter().zip(FORMATS).enumerate() {
        let n = 10 + i as u16;
        sensors.push(sensor(&mut net, n, *v, f, 4).1);
        uris.push(member_uri(n));
    }
    em::add_in_memory(&mut net, config);
    let client = Client::add(&mut net, addr(2), 2);
    Setup {
        net,
        client,
        sensors,
        uris,
    }
}

fn create(s: &mut Setup, name: &str, extra: &str) -> support::client::Answer {
    let er = serde_json::to_string(&s.uris).unwrap();
    let body = format!(r#"{{"name":"{name}","er":{er}{extra}}}"#);
    s.client.post_json(&mut s.net, em_addr(), "/e", &body)
}

fn cbor_json(bytes: &[u8]) -> serde_json::Value {
    ciborium::de::from_reader(bytes).expect("CBOR")
}

fn gets(s: &Setup) -> u32 {
    s.sensors.iter().map(|m| m.borrow().gets).sum()
}

#[test]
fn entity_life_cycle() {
    let mut s = setup();
    let created = create(&mut s, "room1", r#","delay":10"#);
    assert_eq!(created.code, Code::CREATED, "{}", created.text());
    assert_eq!(created.location, ["e", "room1"]);
    assert!(created
        .text()
        .starts_with("created coap://[2001:db8::1]/e/room1 (5 members, unicast)"));

    // Listed under /e and /.well-known/core.
    let list = s.client.get(&mut s.net, em_addr(), "/e", None);
    assert_eq!(list.content_format, Some(ContentFormat::LINK_FORMAT));
    assert!(
        list.text()
            .contains(r#"</e/room1>;rt="core.entity";ect=unicast"#),
        "{}",
        list.text()
    );
    let wk = s
        .client
        .get(&mut s.net, em_addr(), "/.well-known/core", None);
    assert!(
        wk.text()
            .starts_with(r#"</e>;rt="core.em";ct=40,</e/room1>"#),
        "{}",
        wk.text()
    );
    let filtered = s.client.get(
        &mut s.net,
        em_addr(),
        "/.well-known/core?rt=core.entity",
        None,
    );
    assert!(!filtered.text().contains("</e>"), "{}", filtered.text());
    assert!(filtered.text().contains("</e/room1>"));

    // The profile with every field's effective value.
    let profile = s
        .client
        .get(&mut s.net, em_addr(), "/e/room1/profile", None)
        .json();
    assert_eq!(profile["name"], "room1");
    assert_eq!(profile["er"], serde_json::json!(s.uris));
    assert_eq!(profile["emt"], "con");
    assert_eq!(profile["ect"], "unicast");
    assert_eq!(profile["enr"], 5);
    assert_eq!(profile["eo"][0], "lst");
    assert_eq!(profile["delay"], 10);
    assert!(profile.get("mcastURI").is_none());

    // Every operation in every format.
    let expected = [
        ("avg", 23.0),
        ("min", 20.0),
        ("max", 27.0),
        ("sum", 115.0),
        ("count", 5.0),
        ("median", 22.0),
    ];
    let entity_uri = "coap://[2001:db8::1]/e/room1";
    for (op, value) in expected {
        let target = format!("/e/room1?eo={op}");
        let text = s.client.get(&mut s.net, em_addr(), &target, None);
        assert_eq!(text.code, Code::CONTENT);
        assert_eq!(text.content_format, Some(ContentFormat::TEXT_PLAIN));
        let body = text.text();
        let mut lines = body.lines();
        assert_eq!(
            lines.next().unwrap().parse::<f64>().unwrap(),
            value,
            "{op}: {body}"
        );
        assert_eq!(lines.next(), Some("answered: 5 of 5"));

        let json = s
            .client
            .get(&mut s.net, em_addr(), &target, Some(ContentFormat::JSON))
            .json();
        assert_eq!(json["op"], op);
        assert_eq!(json["value"].as_f64(), Some(value), "{op}");
        assert_eq!(json["entity"], entity_uri);
        assert_eq!(json["answered"], 5);
        assert_eq!(json["missing"], serde_json::json!([]));

        let cbor = s
            .client
            .get(&mut s.net, em_addr(), &target, Some(ContentFormat::CBOR));
        assert_eq!(cbor.content_format, Some(ContentFormat::CBOR));
        assert_eq!(cbor_json(&cbor.payload)["value"].as_f64(), Some(value));

        for format in [ContentFormat::SENML_JSON, ContentFormat::SENML_CBOR] {
            let a = s.client.get(&mut s.net, em_addr(), &target, Some(format));
            assert_eq!(a.content_format, Some(format));
            let pack = if format == ContentFormat::SENML_JSON {
                senml::from_json(&a.payload).unwrap()
            } else {
                senml::from_cbor(&a.payload).unwrap()
            };
            let records = senml::resolve(&pack);
            assert_eq!(records[0].name, entity_uri);
            assert_eq!(
                records[0].value,
                ResolvedValue::Number(value),
                "{op} {format}"
            );
            assert_eq!(records[1].name, format!("{entity_uri}/answered"));
            assert_eq!(records[1].value, ResolvedValue::Number(5.0));
            // Then one record per member.
            let members: Vec<_> = records[2..].iter().map(|r| r.name.clone()).collect();
            assert_eq!(members, s.uris);
        }
    }

    // lst: one value per member, by name.
    let lst = s.client.get(&mut s.net, em_addr(), "/e/room1", None).text();
    for (uri, v) in s.uris.iter().zip(VALUES) {
        assert!(lst.contains(&format!("{uri} {v}")), "{lst}");
    }
    let pack = s.client.get(
        &mut s.net,
        em_addr(),
        "/e/room1",
        Some(ContentFormat::SENML_JSON),
    );
    let records = senml::resolve(&senml::from_json(&pack.payload).unwrap());
    assert_eq!(records[0].name, format!("{entity_uri}/answered"));
    for (r, (uri, v)) in records[1..].iter().zip(s.uris.iter().zip(VALUES)) {
        assert_eq!(&r.name, uri);
        assert_eq!(r.value, ResolvedValue::Number(v));
        assert!(r.time <= 0.0, "relative times: {}", r.time);
    }
    let json = s
        .client
        .get(&mut s.net, em_addr(), "/e/room1", Some(ContentFormat::JSON))
        .json();
    assert_eq!(json["value"], serde_json::Value::Null);
    assert_eq!(json["replies"].as_array().unwrap().len(), 5);
    assert_eq!(json["replies"][2]["value"], 27);
    assert_eq!(json["replies"][2]["code"], "2.05");

    // Delete: gone from everywhere.
    let deleted = s.client.call(
        &mut s.net,
        em_addr(),
        Code::DELETE,
        Req {
            target: "/e/room1",
            ..Req::default()
        },
    );
    assert_eq!(deleted.code, Code::DELETED);
    assert_eq!(
        s.client.get(&mut s.net, em_addr(), "/e/room1", None).code,
        Code::NOT_FOUND
    );
    assert!(!s
        .client
        .get(&mut s.net, em_addr(), "/e", None)
        .text()
        .contains("room1"));
}

#[test]
fn anycast_and_inserted_delay() {
    let mut s = setup();
    assert_eq!(create(&mut s, "r", "").code, Code::CREATED);
    let before = gets(&s);
    // enr=1 with a delay longer than a round trip: the first member answers before the
    // second is asked.
    let a = s.client.get(
        &mut s.net,
        em_addr(),
        "/e/r?enr=1&delay=200",
        Some(ContentFormat::JSON),
    );
    assert_eq!(a.code, Code::CONTENT);
    let doc = a.json();
    assert_eq!(doc["answered"], 1);
    assert_eq!(doc["missing"].as_array().unwrap().len(), 4);
    assert_eq!(
        doc["not_needed"], doc["missing"],
        "the members not asked were not needed"
    );
    assert_eq!(gets(&s) - before, 1, "anycast asked one member");

    // emt=non at use time: the member requests are NON.
    let sent = s.net.log.len();
    let a = s.client.get(&mut s.net, em_addr(), "/e/r?emt=non", None);
    assert_eq!(a.code, Code::CONTENT);
    let types: Vec<_> = s.net.log[sent..]
        .iter()
        .filter(|d| d.from == em_addr() && d.to != addr(2))
        .map(|d| covey_core::Message::parse(&d.bytes).unwrap().message_type())
        .collect();
    assert_eq!(types, [covey_core::MessageType::NonConfirmable; 5]);

    // delay=100 between 5 members: the last is asked 400 ms after the first.
    let start = s.net.now;
    let a = s.client.get(&mut s.net, em_addr(), "/e/r?delay=100", None);
    let took = (a.at - start).as_millis();
    assert!((440..=520).contains(&took), "took {took} ms");
    // Without delay it is one round trip to the EM and one to the members.
    let start = s.net.now;
    let a = s.client.get(&mut s.net, em_addr(), "/e/r", None);
    assert!((a.at - start).as_millis() <= 60);

    // delay=auto before any measurement: S = 80 bytes ... but replies were measured by now,
    // so the delay follows the real size (smaller than 80 bytes here).
    let start = s.net.now;
    let a = s.client.get(&mut s.net, em_addr(), "/e/r?delay=auto", None);
    let took = (a.at - start).as_millis();
    assert!(took > 40 && took < 440, "auto delay gave {took} ms");
}

#[test]
fn fanout_profile_change_and_numeric_errors() {
    let mut s = setup();
    assert_eq!(create(&mut s, "shutters", "").code, Code::CREATED);
    let a = s.client.call(
        &mut s.net,
        em_addr(),
        Code::PUT,
        Req {
            target: "/e/shutters?fanout",
            content_format: Some(ContentFormat::TEXT_PLAIN),
            payload: b"close",
            ..Req::default()
        },
    );
    assert_eq!(a.code, Code::CHANGED, "{}", a.text());
    assert_eq!(a.text().matches("2.04 Changed").count(), 5, "{}", a.text());
    for m in &s.sensors {
        assert_eq!(m.borrow().writes, [(Code::PUT, b"close".to_vec())]);
    }
    let a = s.client.call(
        &mut s.net,
        em_addr(),
        Code::DELETE,
        Req {
            target: "/e/shutters?fanout",
            ..Req::default()
        },
    );
    assert_eq!(a.code, Code::DELETED);
    assert_eq!(s.sensors[0].borrow().writes.len(), 2);
    assert_eq!(
        s.client
            .get(&mut s.net, em_addr(), "/e/shutters", None)
            .code,
        Code::CONTENT,
        "DELETE ?fanout leaves the entity"
    );

    // Change the profile: only avg and max offered, avg the default.
    let a = s.client.call(
        &mut s.net,
        em_addr(),
        Code::PUT,
        Req {
            target: "/e/shutters/profile",
            content_format: Some(ContentFormat::JSON),
            payload: br#"{"eo":["avg","max"],"enr":4}"#,
            ..Req::default()
        },
    );
    assert_eq!(a.code, Code::CHANGED, "{}", a.text());
    let avg = s.client.get(&mut s.net, em_addr(), "/e/shutters", None);
    let first: f64 = avg.text().lines().next().unwrap().parse().unwrap();
    assert!(
        (20.0..=27.0).contains(&first),
        "an average of 4 or 5: {}",
        avg.text()
    );
    let refused = s
        .client
        .get(&mut s.net, em_addr(), "/e/shutters?eo=lst", None);
    assert_eq!(refused.code, Code::BAD_REQUEST);
    assert_eq!(
        refused.text(),
        "eo=lst: entity shutters offers avg, max only"
    );

    // A member answering with a word: avg is refused with 5.02, lst is fine.
    let (_, _) = sensor(&mut s.net, 30, 0.0, Format::Word("on"), 1);
    let mut uris = s.uris.clone();
    uris.push(member_uri(30));
    let body = format!(
        r#"{{"name":"mixed","er":{}}}"#,
        serde_json::to_string(&uris).unwrap()
    );
    assert_eq!(
        s.client.post_json(&mut s.net, em_addr(), "/e", &body).code,
        Code::CREATED
    );
    let a = s.client.get(&mut s.net, em_addr(), "/e/mixed?eo=avg", None);
    assert_eq!(a.code, Code::BAD_GATEWAY);
    assert_eq!(
        a.text(),
        "cannot compute avg: member coap://[2001:db8::1e]/s/t replied \"on\", which is not a number"
    );
    let a = s.client.get(&mut s.net, em_addr(), "/e/mixed", None);
    assert_eq!(a.code, Code::CONTENT);
    assert!(
        a.text().contains("coap://[2001:db8::1e]/s/t on"),
        "{}",
        a.text()
    );
    assert_eq!(
        s.client
            .get(&mut s.net, em_addr(), "/e/mixed?eo=count", None)
            .text(),
        "6\nanswered: 6 of 6\n"
    );
}

#[test]
fn silent_members_give_5_04_listing_who_answered() {
    let mut s = setup_with(covey_group::EmConfig {
        member_timeout: Duration::from_secs(5),
        ..em_config()
    });
    assert_eq!(
        create(&mut s, "quiet", r#","eo":["avg"]"#).code,
        Code::CREATED
    );
    s.sensors[1].borrow_mut().mute = true;
    s.sensors[3].borrow_mut().mute = true;
    let start = s.net.now;
    let a = s
        .client
        .get(&mut s.net, em_addr(), "/e/quiet", Some(ContentFormat::JSON));
    assert_eq!(a.code, Code::GATEWAY_TIMEOUT);
    assert!((a.at - start) >= Duration::from_secs(5));
    let doc = a.json();
    assert_eq!(doc["answered"], 3);
    assert_eq!(doc["value"].as_f64(), Some((20.0 + 27.0 + 25.0) / 3.0));
    assert_eq!(doc["missing"], serde_json::json!([s.uris[1], s.uris[3]]));
    let replied: Vec<_> = doc["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["member"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        replied,
        [s.uris[0].clone(), s.uris[2].clone(), s.uris[4].clone()]
    );
    let text = s.client.get(&mut s.net, em_addr(), "/e/quiet", None).text();
    assert!(text.ends_with(&format!(
        "answered: 3 of 5\nmissing: {} {}\n",
        s.uris[1], s.uris[3]
    )));
}

#[test]
fn the_ems_log_lines_reach_its_host() {
    let mut s = setup();
    assert_eq!(create(&mut s, "hall", "").code, Code::CREATED);
    let del = s.client.call(
        &mut s.net,
        em_addr(),
        Code::DELETE,
        Req {
            target: "/e/hall",
            ..Req::default()
        },
    );
    assert_eq!(del.code, Code::DELETED);
    let em = s.net.nodes.iter().find(|n| n.addr == em_addr()).unwrap();
    let lines: Vec<_> = em
        .host
        .log
        .iter()
        .map(|(level, line)| (*level, line.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (LogLevel::Info, "created entity hall (5 members, unicast)"),
            (LogLevel::Info, "deleted entity hall"),
        ]
    );
}
