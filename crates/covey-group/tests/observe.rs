//! Observing an entity (RFC 7641) on virtual time: observers share one observation of
//! each member, are notified of the entity's new average at each member change, and the
//! member observations end with the last observer or the entity.

mod support;

use covey_core::{Code, ContentFormat};
use covey_group::EmConfig;
use covey_proto::{Duration, RequestId};
use support::client::{Answer, Client, Req};
use support::em::{self, em_addr, em_config, SharedEm};
use support::member::{change, observers, sensor, Format, Shared};
use support::{addr, sensor_uri, Network};

const VALUES: [f64; 3] = [20.0, 22.0, 27.0];

struct Lab {
    net: Network,
    em: SharedEm,
    /// Node and state of each sensor.
    sensors: Vec<(usize, Shared)>,
    a: Client,
    b: Client,
}

fn new_lab(config: EmConfig, observable: bool) -> Lab {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let mut sensors = Vec::new();
    for (i, v) in VALUES.iter().enumerate() {
        let (node, state) = sensor(&mut net, 10 + i as u16, *v, Format::Text, 4);
        state.borrow_mut().observable = observable;
        sensors.push((node, state));
    }
    let (_, em) = em::add_in_memory(&mut net, config);
    let a = Client::add(&mut net, addr(2), 2);
    let b = Client::add(&mut net, addr(3), 3);
    let mut lab = Lab {
        net,
        em,
        sensors,
        a,
        b,
    };
    create(&mut lab, "room", &[10, 11, 12]);
    lab
}

fn create(lab: &mut Lab, name: &str, nodes: &[u16]) {
    let er: Vec<String> = nodes.iter().map(|n| sensor_uri(*n)).collect();
    create_of(lab, name, &er);
}

fn create_of(lab: &mut Lab, name: &str, er: &[String]) {
    let body = format!(
        r#"{{"name":"{name}","er":{},"eo":["avg"]}}"#,
        serde_json::to_string(&er).unwrap()
    );
    let created = lab.a.post_json(&mut lab.net, em_addr(), "/e", &body);
    assert_eq!(created.code, Code::CREATED, "{}", created.text());
}

/// The average a text reply starts with.
fn average(answer: &Answer) -> f64 {
    let text = answer.text();
    let first = text.lines().next().unwrap_or_default();
    first
        .parse()
        .unwrap_or_else(|_| panic!("{} not an average: {text}", answer.code))
}

/// Runs the network until `done` holds, for at most a simulated minute.
fn run_until(net: &mut Network, what: &str, mut done: impl FnMut(&Network) -> bool) {
    let deadline = net.now + Duration::from_secs(60);
    while !done(net) {
        assert!(net.now < deadline, "never: {what}");
        net.run_for(Duration::from_millis(20));
    }
}

/// Sends GET `target` with Observe 0 and runs until its first answer.
fn observe(net: &mut Network, client: &Client, target: &str) -> (RequestId, Answer) {
    let req = Req {
        target,
        observe: Some(0),
        ..Req::default()
    };
    let id = client.start(net, em_addr(), Code::GET, req);
    run_until(net, "the registration is answered", |_| {
        !client.answers(id).is_empty()
    });
    (id, client.answers(id)[0].clone())
}

/// Changes sensor `i` to `value` and runs until both observations show `expected`.
fn change_and_see(lab: &mut Lab, i: usize, value: f64, expected: f64, ids: [RequestId; 2]) {
    let (node, state) = lab.sensors[i].clone();
    assert_eq!(change(&mut lab.net, node, &state, Format::Text, value), 1);
    let (a, b) = (&lab.a, &lab.b);
    run_until(&mut lab.net, "both observers see the new average", |_| {
        [(a, ids[0]), (b, ids[1])].iter().all(|(c, id)| {
            c.answers(*id)
                .last()
                .is_some_and(|n| n.code == Code::CONTENT && average(n) == expected)
        })
    });
}

fn registrations(lab: &Lab) -> Vec<u32> {
    lab.sensors
        .iter()
        .map(|(_, s)| s.borrow().registrations)
        .collect()
}

#[test]
fn two_observers_share_one_observation_per_member_and_see_every_change() {
    let mut lab = new_lab(em_config(), true);
    let (ida, first) = observe(&mut lab.net, &lab.a, "/e/room");
    assert_eq!(first.code, Code::CONTENT);
    assert!(first.observe.is_some(), "the first answer registers");
    assert_eq!(average(&first), 23.0);
    let (idb, first) = observe(&mut lab.net, &lab.b, "/e/room");
    assert!(first.observe.is_some());
    assert_eq!(average(&first), 23.0);
    assert_eq!(registrations(&lab), [1, 1, 1]);
    assert_eq!(lab.em.borrow().member_observations(), 3);

    // 26 22 27, 26 25 27, 26 25 30.
    change_and_see(&mut lab, 0, 26.0, 25.0, [ida, idb]);
    change_and_see(&mut lab, 1, 25.0, 26.0, [ida, idb]);
    change_and_see(&mut lab, 2, 30.0, 27.0, [ida, idb]);
    for (c, id) in [(&lab.a, ida), (&lab.b, idb)] {
        let notes = c.answers(id);
        assert!(notes.len() > 3, "{} answers", notes.len());
        assert!(notes.iter().all(|n| n.observe.is_some()));
    }
    assert_eq!(
        registrations(&lab),
        [1, 1, 1],
        "one registration per member"
    );

    // The first observer leaves: the members stay observed for the second.
    let dereg = lab.a.cancel_observation(&mut lab.net, ida);
    let a = &lab.a;
    run_until(&mut lab.net, "the deregistration is answered", |_| {
        a.ended(dereg)
    });
    assert_eq!(a.answers(dereg)[0].observe, None);
    for (node, state) in &lab.sensors {
        assert_eq!(observers(&lab.net, *node), 1);
        assert_eq!(state.borrow().deregistrations, 0);
    }
    change_and_see_b(&mut lab, 0, 29.0, 28.0, idb);

    // The last one leaves: every member observation is cancelled.
    let dereg = lab.b.cancel_observation(&mut lab.net, idb);
    let sensors = lab.sensors.clone();
    run_until(&mut lab.net, "the members' observations end", |net| {
        sensors
            .iter()
            .all(|(node, s)| observers(net, *node) == 0 && s.borrow().deregistrations == 1)
    });
    assert!(lab.b.ended(dereg));
    assert_eq!(lab.em.borrow().member_observations(), 0);
    assert_eq!(lab.em.borrow().observed_entities(), 0);

    // A plain GET is a query as before.
    let plain = lab.a.get(&mut lab.net, em_addr(), "/e/room", None);
    assert_eq!(plain.code, Code::CONTENT);
    assert_eq!(plain.observe, None);
    assert_eq!(average(&plain), 28.0);
    assert_eq!(registrations(&lab), [1, 1, 1]);
}

/// Like `change_and_see`, for client `b` alone.
fn change_and_see_b(lab: &mut Lab, i: usize, value: f64, expected: f64, id: RequestId) {
    let (node, state) = lab.sensors[i].clone();
    change(&mut lab.net, node, &state, Format::Text, value);
    let b = &lab.b;
    run_until(&mut lab.net, "the observer sees the new average", |_| {
        b.answers(id)
            .last()
            .is_some_and(|n| n.code == Code::CONTENT && average(n) == expected)
    });
}

#[test]
fn deleting_an_observed_entity_ends_its_observation_with_4_04() {
    let mut lab = new_lab(em_config(), true);
    let (id, _) = observe(&mut lab.net, &lab.a, "/e/room");
    let deleted = lab.b.call(
        &mut lab.net,
        em_addr(),
        Code::DELETE,
        Req {
            target: "/e/room",
            ..Req::default()
        },
    );
    assert_eq!(deleted.code, Code::DELETED);
    let a = &lab.a;
    run_until(&mut lab.net, "the observer hears of the deletion", |_| {
        a.ended(id)
    });
    let last = a.answers(id).last().cloned().expect("a final notification");
    assert_eq!(last.code, Code::NOT_FOUND);
    assert!(last.text().contains("room was deleted"), "{}", last.text());
    let sensors = lab.sensors.clone();
    run_until(&mut lab.net, "the members' observations end", |net| {
        sensors.iter().all(|(node, _)| observers(net, *node) == 0)
    });
}

#[test]
fn changing_an_observed_entity_asks_its_observers_to_register_again() {
    let mut lab = new_lab(em_config(), true);
    let (id, _) = observe(&mut lab.net, &lab.a, "/e/room");
    let er: Vec<String> = [10, 11].iter().map(|n| sensor_uri(*n)).collect();
    let body = format!(
        r#"{{"er":{},"eo":["avg"]}}"#,
        serde_json::to_string(&er).unwrap()
    );
    let changed = lab.b.call(
        &mut lab.net,
        em_addr(),
        Code::PUT,
        Req {
            target: "/e/room/profile",
            content_format: Some(ContentFormat::JSON),
            payload: body.as_bytes(),
            ..Req::default()
        },
    );
    assert_eq!(changed.code, Code::CHANGED, "{}", changed.text());
    let a = &lab.a;
    run_until(&mut lab.net, "the observer hears of the change", |_| {
        a.ended(id)
    });
    let last = a.answers(id).last().cloned().expect("a final notification");
    assert_eq!(last.code, Code::SERVICE_UNAVAILABLE);
    assert!(last.text().contains("observe it again"), "{}", last.text());
    let (_, again) = observe(&mut lab.net, &lab.a, "/e/room");
    assert!(again.observe.is_some());
    assert_eq!(average(&again), 21.0);
}

#[test]
fn a_client_that_forgets_its_observation_ends_the_member_observations() {
    let mut lab = new_lab(em_config(), true);
    let (id, _) = observe(&mut lab.net, &lab.a, "/e/room");
    // The client drops the observation without a word: it answers the next notification
    // with an RST, and the EM stops observing the members at the one after.
    let now = lab.net.now;
    lab.net.nodes[lab.a.node].endpoint.cancel(now, id);
    let sensors = lab.sensors.clone();
    for (step, value) in [30.0, 31.0, 32.0].into_iter().enumerate() {
        let (node, state) = &sensors[step];
        change(&mut lab.net, *node, state, Format::Text, value);
        lab.net.run_for(Duration::from_secs(1));
    }
    run_until(&mut lab.net, "the members' observations end", |net| {
        sensors.iter().all(|(node, _)| observers(net, *node) == 0)
    });
    assert_eq!(lab.em.borrow().observed_entities(), 0);
}

#[test]
fn members_that_cannot_be_observed_are_asked_again_at_each_registration() {
    let mut lab = new_lab(em_config(), false);
    let (id, first) = observe(&mut lab.net, &lab.a, "/e/room");
    assert!(first.observe.is_some());
    assert_eq!(average(&first), 23.0);
    let em = lab.em.clone();
    run_until(&mut lab.net, "the members answered without Observe", |_| {
        em.borrow().member_observations() == 0
    });
    assert_eq!(registrations(&lab), [1, 1, 1]);
    // No member notifies; the observer keeps the registration's answer.
    let (node, state) = lab.sensors[0].clone();
    assert_eq!(change(&mut lab.net, node, &state, Format::Text, 35.0), 0);
    lab.net.run_for(Duration::from_secs(5));
    assert!(lab
        .a
        .answers(id)
        .iter()
        .all(|n| n.code == Code::CONTENT && average(n) == 23.0));
    // A new observer's registration asks the members again: both see the new value.
    let (_, second) = observe(&mut lab.net, &lab.b, "/e/room");
    assert_eq!(average(&second), 28.0);
    let a = &lab.a;
    run_until(
        &mut lab.net,
        "the first observer sees the new value",
        |_| a.answers(id).last().is_some_and(|n| average(n) == 28.0),
    );
    assert_eq!(registrations(&lab), [2, 2, 2]);
}

#[test]
fn an_entity_of_entities_is_answered_once_without_observe() {
    let mut lab = new_lab(em_config(), true);
    create_of(
        &mut lab,
        "house",
        &["coap://[2001:db8::1]/e/room".to_string()],
    );
    let (id, first) = observe(&mut lab.net, &lab.a, "/e/house");
    assert_eq!(first.code, Code::CONTENT);
    assert_eq!(first.observe, None, "not registered");
    assert_eq!(average(&first), 23.0);
    assert!(lab.a.ended(id));
    assert_eq!(registrations(&lab), [0, 0, 0]);
    assert_eq!(lab.em.borrow().observed_entities(), 0);
}

#[test]
fn observations_beyond_the_limits_are_refused_with_a_diagnostic() {
    let config = EmConfig {
        max_observed_entities: 1,
        max_member_observations: 4,
        ..em_config()
    };
    let mut lab = new_lab(config, true);
    create(&mut lab, "pair", &[10, 11]);
    let (_, first) = observe(&mut lab.net, &lab.a, "/e/room");
    assert_eq!(first.code, Code::CONTENT);
    // A second observer of the same entity costs nothing more.
    let (_, second) = observe(&mut lab.net, &lab.b, "/e/room");
    assert!(second.observe.is_some());
    let (_, refused) = observe(&mut lab.net, &lab.b, "/e/pair");
    assert_eq!(refused.code, Code::SERVICE_UNAVAILABLE);
    assert!(refused.max_age.is_some());
    assert!(
        refused.text().contains("as many entities as it may"),
        "{}",
        refused.text()
    );

    let config = EmConfig {
        max_member_observations: 2,
        ..em_config()
    };
    let mut lab = new_lab(config, true);
    let (_, refused) = observe(&mut lab.net, &lab.a, "/e/room");
    assert_eq!(refused.code, Code::BAD_REQUEST);
    assert!(
        refused
            .text()
            .contains("observes 2 member resources at most"),
        "{}",
        refused.text()
    );
    // Without Observe the entity is queried as ever.
    let plain = lab.a.get(&mut lab.net, em_addr(), "/e/room", None);
    assert_eq!(plain.code, Code::CONTENT);
}
