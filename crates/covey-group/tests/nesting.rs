//! Nested entities: the paper's cold store (multicast room entities with avg and enr=2,
//! floors listing rooms, a building listing floors), cycles refused (on one EM and across
//! two), the depth limit and Hop-Limit.

mod support;

use covey_core::{Code, ContentFormat};
use covey_group::senml::{self, ResolvedValue};
use covey_group::EmConfig;
use covey_proto::Duration;
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, sensor_uri, Network};

fn entity_uri(name: &str) -> String {
    format!("coap://[2001:db8::1]/e/{name}")
}

fn create(
    net: &mut Network,
    c: &Client,
    to: std::net::SocketAddr,
    name: &str,
    er: &[String],
    extra: &str,
) -> support::client::Answer {
    let body = format!(
        r#"{{"name":"{name}","er":{}{extra}}}"#,
        serde_json::to_string(er).unwrap()
    );
    c.post_json(net, to, "/e", &body)
}

#[test]
fn cold_store_room_floor_building() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 5);
    // 2 floors x 2 rooms x 3 sensors; every sensor of room k reads 4 + k degrees.
    let mut rooms = Vec::new();
    for k in 0..4u16 {
        let sensors: Vec<String> = (0..3u16)
            .map(|j| {
                let n = 10 + 3 * k + j;
                sensor(&mut net, n, 4.0 + f64::from(k), Format::Text, 2);
                sensor_uri(n)
            })
            .collect();
        rooms.push(sensors);
    }
    em::add_in_memory(&mut net, em_config());
    let c = Client::add(&mut net, addr(2), 2);
    for (k, sensors) in rooms.iter().enumerate() {
        let a = create(
            &mut net,
            &c,
            em_addr(),
            &format!("room{k}"),
            sensors,
            r#","ect":"multicast","eo":["avg"],"enr":2"#,
        );
        assert_eq!(a.code, Code::CREATED, "{}", a.diagnostic());
    }
    for f in 0..2 {
        let er = vec![
            entity_uri(&format!("room{}", 2 * f)),
            entity_uri(&format!("room{}", 2 * f + 1)),
        ];
        let a = create(&mut net, &c, em_addr(), &format!("floor{f}"), &er, "");
        assert_eq!(a.code, Code::CREATED, "{}", a.diagnostic());
    }
    let a = create(
        &mut net,
        &c,
        em_addr(),
        "building",
        &[entity_uri("floor0"), entity_uri("floor1")],
        "",
    );
    assert_eq!(a.code, Code::CREATED, "{}", a.diagnostic());

    // A room alone: the average of two of its sensors.
    let room = c.get(&mut net, em_addr(), "/e/room2", None).text();
    assert!(room.starts_with("6\nanswered: 2 of 3\n"), "{room}");

    // The building in SenML: one record per room, through floors and rooms.
    let start = net.now;
    let a = c.get(
        &mut net,
        em_addr(),
        "/e/building",
        Some(ContentFormat::SENML_JSON),
    );
    assert_eq!(a.code, Code::CONTENT, "{}", a.diagnostic());
    assert!(
        a.at - start < Duration::from_secs(8),
        "multicast rooms answer within the leisure"
    );
    let records = senml::resolve(&senml::from_json(&a.payload).unwrap());
    assert_eq!(
        records[0].name,
        format!("{}/answered", entity_uri("building"))
    );
    assert_eq!(
        records[0].value,
        ResolvedValue::Number(2.0),
        "both floors answered"
    );
    let values: Vec<(String, ResolvedValue)> = records[1..]
        .iter()
        .map(|r| (r.name.clone(), r.value.clone()))
        .collect();
    let expected: Vec<(String, ResolvedValue)> = (0..4)
        .map(|k| {
            (
                entity_uri(&format!("room{k}")),
                ResolvedValue::Number(4.0 + k as f64),
            )
        })
        .collect();
    assert_eq!(values, expected);

    // In text, one line per room; in SenML CBOR the same.
    let text = c.get(&mut net, em_addr(), "/e/building", None).text();
    assert!(
        text.contains(&format!("{} 7\n", entity_uri("room3"))),
        "{text}"
    );
    assert!(text.ends_with("answered: 2 of 2\n"), "{text}");
    let cbor = c.get(
        &mut net,
        em_addr(),
        "/e/building",
        Some(ContentFormat::SENML_CBOR),
    );
    assert_eq!(
        senml::resolve(&senml::from_cbor(&cbor.payload).unwrap()).len(),
        5
    );

    // An arithmetic operation over entities that return lists is refused at use.
    let a = c.get(&mut net, em_addr(), "/e/building?eo=avg", None);
    assert_eq!(a.code, Code::BAD_GATEWAY);
    assert!(
        a.diagnostic()
            .contains("replied 2 values, which is not a number"),
        "{}",
        a.diagnostic()
    );
    // ... and at creation, when the client lists avg.
    let a = create(
        &mut net,
        &c,
        em_addr(),
        "avgb",
        &[entity_uri("floor0")],
        r#","eo":["avg"]"#,
    );
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert!(
        a.diagnostic()
            .contains("whose default operation lst gives a list"),
        "{}",
        a.diagnostic()
    );
    // Rooms average; an entity of rooms can average them.
    let a = create(
        &mut net,
        &c,
        em_addr(),
        "avgrooms",
        &[entity_uri("room0"), entity_uri("room3")],
        r#","eo":["avg"]"#,
    );
    assert_eq!(a.code, Code::CREATED, "{}", a.diagnostic());
    let a = c.get(&mut net, em_addr(), "/e/avgrooms", None);
    assert!(a.diagnostic().starts_with("5.5\n"), "{}", a.diagnostic());

    // A query forwarded with Hop-Limit 1 cannot go one level further.
    let a = c.call(
        &mut net,
        em_addr(),
        Code::GET,
        Req {
            target: "/e/building",
            hop_limit: Some(1),
            ..Req::default()
        },
    );
    assert_eq!(a.code, Code::HOP_LIMIT_REACHED);
    assert!(
        a.diagnostic().contains("Hop-Limit exhausted"),
        "{}",
        a.diagnostic()
    );
}

#[test]
fn cycles_are_refused() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 6);
    sensor(&mut net, 10, 1.0, Format::Text, 1);
    em::add_in_memory(&mut net, em_config());
    let c = Client::add(&mut net, addr(2), 2);
    let a = create(&mut net, &c, em_addr(), "self", &[entity_uri("self")], "");
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert!(
        a.diagnostic()
            .contains("cycle: entity self cannot be a member of itself"),
        "{}",
        a.diagnostic()
    );

    assert_eq!(
        create(&mut net, &c, em_addr(), "a", &[sensor_uri(10)], "").code,
        Code::CREATED
    );
    assert_eq!(
        create(&mut net, &c, em_addr(), "b", &[entity_uri("a")], "").code,
        Code::CREATED
    );
    assert_eq!(
        create(&mut net, &c, em_addr(), "c", &[entity_uri("b")], "").code,
        Code::CREATED
    );
    // a -> c -> b -> a
    let body = format!(r#"{{"er":["{}","{}"]}}"#, sensor_uri(10), entity_uri("c"));
    let a = c.call(
        &mut net,
        em_addr(),
        Code::PUT,
        Req {
            target: "/e/a/profile",
            content_format: Some(ContentFormat::JSON),
            payload: body.as_bytes(),
            ..Req::default()
        },
    );
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert_eq!(
        a.diagnostic(),
        format!(
            "profile of a not changed: cycle: a -> {} -> {} -> {}",
            entity_uri("c"),
            entity_uri("b"),
            entity_uri("a")
        )
    );
    // A member entity that does not exist here.
    let a = create(&mut net, &c, em_addr(), "d", &[entity_uri("nope")], "");
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert!(
        a.diagnostic().contains("this EM has no entity named nope"),
        "{}",
        a.diagnostic()
    );
}

#[test]
fn cycles_across_two_entity_managers_are_found_through_profiles() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 7);
    sensor(&mut net, 10, 1.0, Format::Text, 1);
    em::add_in_memory(&mut net, em_config());
    add_second_em(&mut net);
    let c = Client::add(&mut net, addr(2), 2);
    let remote_y = "coap://[2001:db8::3]/e/y".to_string();
    assert_eq!(
        create(&mut net, &c, addr(3), "y", &[sensor_uri(10)], "").code,
        Code::CREATED
    );
    let a = create(
        &mut net,
        &c,
        em_addr(),
        "x",
        std::slice::from_ref(&remote_y),
        "",
    );
    assert_eq!(a.code, Code::CREATED, "{}", a.diagnostic());
    // x (EM 1) answers through y (EM 2).
    let text = c.get(&mut net, em_addr(), "/e/x", None).text();
    assert!(
        text.starts_with(&format!("{} 1\n", sensor_uri(10))),
        "{text}"
    );
    // y may not include x: EM 2 reads x's profile on EM 1 and finds itself.
    let body = format!(r#"{{"er":["{}","{}"]}}"#, sensor_uri(10), entity_uri("x"));
    let a = c.call(
        &mut net,
        addr(3),
        Code::PUT,
        Req {
            target: "/e/y/profile",
            content_format: Some(ContentFormat::JSON),
            payload: body.as_bytes(),
            ..Req::default()
        },
    );
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert_eq!(
        a.diagnostic(),
        format!(
            "profile of y not changed: cycle: y -> {} -> {remote_y}",
            entity_uri("x")
        )
    );
}

#[test]
fn cycles_behind_a_query_are_refused_on_one_and_across_two_entity_managers() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 8);
    sensor(&mut net, 10, 1.0, Format::Text, 1);
    em::add_in_memory(&mut net, em_config());
    add_second_em(&mut net);
    let c = Client::add(&mut net, addr(2), 2);
    let listed = |uri: String| format!("{uri}?eo=lst");
    // An entity as its own member, its query changing only how it is used.
    let a = create(&mut net, &c, em_addr(), "a", &[listed(entity_uri("a"))], "");
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert!(
        a.diagnostic()
            .contains("cycle: entity a cannot be a member of itself"),
        "{}",
        a.diagnostic()
    );
    // Through another entity of the same EM: b -> a?eo=lst, then a -> b?eo=lst.
    assert_eq!(
        create(&mut net, &c, em_addr(), "a", &[sensor_uri(10)], "").code,
        Code::CREATED
    );
    let b = create(&mut net, &c, em_addr(), "b", &[listed(entity_uri("a"))], "");
    assert_eq!(b.code, Code::CREATED, "{}", b.text());
    let text = c.get(&mut net, em_addr(), "/e/b", None).text();
    assert!(text.contains(&sensor_uri(10)), "{text}");
    let a = change_members(&mut net, &c, em_addr(), "a", &[listed(entity_uri("b"))]);
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert_eq!(
        a.diagnostic(),
        format!(
            "profile of a not changed: cycle: a -> {} -> {}",
            listed(entity_uri("b")),
            listed(entity_uri("a"))
        )
    );
    // Across two EMs: y (EM 2) -> a?eo=lst (EM 1), then a -> y?eo=lst.
    let remote_y = listed("coap://[2001:db8::3]/e/y".to_string());
    let y = create(&mut net, &c, addr(3), "y", &[listed(entity_uri("a"))], "");
    assert_eq!(y.code, Code::CREATED, "{}", y.text());
    let a = change_members(
        &mut net,
        &c,
        em_addr(),
        "a",
        std::slice::from_ref(&remote_y),
    );
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert_eq!(
        a.diagnostic(),
        format!(
            "profile of a not changed: cycle: a -> {remote_y} -> {}",
            listed(entity_uri("a"))
        )
    );
}

#[test]
fn a_cycle_made_by_two_changes_at_once_ends_at_its_first_repeat() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 9);
    sensor(&mut net, 10, 1.0, Format::Text, 1);
    em::add_in_memory(&mut net, em_config());
    add_second_em(&mut net);
    let c = Client::add(&mut net, addr(2), 2);
    let remote_y = "coap://[2001:db8::3]/e/y?eo=lst".to_string();
    let local_x = format!("{}?eo=lst", entity_uri("x"));
    assert_eq!(
        create(&mut net, &c, em_addr(), "x", &[sensor_uri(10)], "").code,
        Code::CREATED
    );
    assert_eq!(
        create(&mut net, &c, addr(3), "y", &[sensor_uri(10)], "").code,
        Code::CREATED
    );
    // Both change at once: each validation reads the other's old profile, and both pass.
    let changes: Vec<String> = [&remote_y, &local_x]
        .iter()
        .map(|m| format!(r#"{{"er":["{}","{m}"]}}"#, sensor_uri(10)))
        .collect();
    let ids: Vec<_> = [("/e/x/profile", em_addr()), ("/e/y/profile", addr(3))]
        .into_iter()
        .zip(&changes)
        .map(|((target, to), body)| {
            let req = Req {
                target,
                content_format: Some(ContentFormat::JSON),
                payload: body.as_bytes(),
                ..Req::default()
            };
            c.start(&mut net, to, Code::PUT, req)
        })
        .collect();
    while !ids.iter().all(|id| c.ended(*id)) {
        net.run_for(Duration::from_millis(100));
    }
    for id in &ids {
        assert_eq!(
            c.answers(*id)[0].code,
            Code::CHANGED,
            "{}",
            c.answers(*id)[0].text()
        );
    }
    // x -> y -> x: EM 2 sees x among the entities passed through and asks EM 1 nothing.
    let from = net.log.len();
    let a = c.get(&mut net, em_addr(), "/e/x", None);
    assert!(
        a.diagnostic()
            .contains(&format!("{remote_y} 5.08 Hop Limit Reached")),
        "{}",
        a.diagnostic()
    );
    let asked_back = net.log[from..]
        .iter()
        .filter(|d| d.from == addr(3) && d.to == em_addr())
        .filter(|d| d.bytes.get(1).is_some_and(|code| (1..32).contains(code)))
        .count();
    assert_eq!(asked_back, 0);
}

/// Replaces the members of entity `name` on the EM at `to`.
fn change_members(
    net: &mut Network,
    c: &Client,
    to: std::net::SocketAddr,
    name: &str,
    er: &[String],
) -> support::client::Answer {
    let body = format!(r#"{{"er":{}}}"#, serde_json::to_string(er).unwrap());
    let target = format!("/e/{name}/profile");
    c.call(
        net,
        to,
        Code::PUT,
        Req {
            target: &target,
            content_format: Some(ContentFormat::JSON),
            payload: body.as_bytes(),
            ..Req::default()
        },
    )
}

/// A second EM, reached at `addr(3)`.
fn add_second_em(net: &mut Network) {
    let em2 = covey_group::EntityManager::new(
        EmConfig {
            authorities: vec![addr(3)],
            ..EmConfig::default()
        },
        Box::new(covey_group::MemoryStore::new()),
    )
    .unwrap();
    struct Other(covey_group::EntityManager);
    impl covey_proto::App for Other {
        fn handle_event(&mut self, cx: &mut covey_proto::AppContext<'_>, e: covey_proto::Event) {
            self.0.handle_event(cx, e)
        }
    }
    net.add(
        addr(3),
        covey_proto::Config::default(),
        11,
        Some(Box::new(Other(em2))),
    );
}

#[test]
fn nesting_depth_is_limited() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 8);
    sensor(&mut net, 10, 1.0, Format::Text, 1);
    em::add_in_memory(
        &mut net,
        EmConfig {
            depth_limit: 3,
            ..em_config()
        },
    );
    let c = Client::add(&mut net, addr(2), 2);
    assert_eq!(
        create(&mut net, &c, em_addr(), "e1", &[sensor_uri(10)], "").code,
        Code::CREATED
    );
    assert_eq!(
        create(&mut net, &c, em_addr(), "e2", &[entity_uri("e1")], "").code,
        Code::CREATED
    );
    assert_eq!(
        create(&mut net, &c, em_addr(), "e3", &[entity_uri("e2")], "").code,
        Code::CREATED
    );
    let a = c.get(&mut net, em_addr(), "/e/e3", None);
    assert_eq!(
        a.code,
        Code::CONTENT,
        "three levels work: {}",
        a.diagnostic()
    );
    let a = create(&mut net, &c, em_addr(), "e4", &[entity_uri("e3")], "");
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert_eq!(
        a.diagnostic(),
        format!(
            "entity e4 not created: nesting deeper than 3 levels: e4 -> {} -> {} -> {}",
            entity_uri("e3"),
            entity_uri("e2"),
            entity_uri("e1")
        )
    );
}
