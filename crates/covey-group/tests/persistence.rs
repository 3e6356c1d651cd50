//! Entities in SQLite: they survive a restart of the EM (multicast memberships re-verified),
//! a creation killed midway leaves nothing behind, and a corrupt or unusable database is an
//! error at start-up.

mod support;

use covey_core::{Code, ContentFormat, Message};
use covey_group::store::{EntityRecord, RecordState};
use covey_group::{EmError, EntityManager, SqliteStore, Store, StoreError};
use covey_proto::Duration;
use std::path::PathBuf;
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format, Shared};
use support::{addr, sensor_uri, temp_db, Network};

fn setup(db: &PathBuf) -> (Network, usize, Client, Vec<Shared>) {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 21);
    let sensors = (10..14u16)
        .map(|n| sensor(&mut net, n, f64::from(n), Format::Text, 4).1)
        .collect();
    let (node, shared) = em::add(&mut net, EntityManager::open(em_config(), db).unwrap());
    drop(shared);
    let c = Client::add(&mut net, addr(2), 2);
    (net, node, c, sensors)
}

#[test]
fn entities_survive_a_restart() {
    let db = temp_db("persistence", "restart");
    let (mut net, node, c, sensors) = setup(&db);
    let unicast = format!(
        r#"{{"name":"u","er":["{}","{}"],"eo":["avg","lst"],"delay":"auto"}}"#,
        sensor_uri(10),
        sensor_uri(11)
    );
    let multicast = format!(
        r#"{{"name":"m","er":["{}","{}"],"ect":"multicast","eo":["max"]}}"#,
        sensor_uri(12),
        sensor_uri(13)
    );
    assert_eq!(
        c.post_json(&mut net, em_addr(), "/e", &unicast).code,
        Code::CREATED
    );
    assert_eq!(
        c.post_json(&mut net, em_addr(), "/e", &multicast).code,
        Code::CREATED
    );

    // The gateway restarts: a new EM on the same database, a new engine.
    let em2 = em::restart(
        &mut net,
        node,
        EntityManager::open(em_config(), &db).unwrap(),
    );
    net.run_for(Duration::from_secs(2));
    assert_eq!(em2.borrow().entities().count(), 2);
    let list = c.get(&mut net, em_addr(), "/e", None).text();
    assert!(list.contains("</e/u>") && list.contains("</e/m>"), "{list}");
    assert!(c
        .get(&mut net, em_addr(), "/e/u", None)
        .text()
        .starts_with("10.5\n"));
    assert!(c
        .get(&mut net, em_addr(), "/e/m", None)
        .text()
        .starts_with("13\n"));
    let profile = c.get(&mut net, em_addr(), "/e/u/profile", None).json();
    assert_eq!(profile["delay"], "auto");
    assert_eq!(profile["eo"], serde_json::json!(["avg", "lst"]));
    let profile = c.get(&mut net, em_addr(), "/e/m/profile", None).json();
    assert_eq!(profile["mcastURI"], "coap://[ff1e::89:1]/s/t");
    assert!(profile.get("unjoined").is_none());
    // Memberships were re-verified at start: each member was asked to join again.
    for s in &sensors[2..] {
        assert_eq!(s.borrow().membership, ["add", "add"]);
        assert_eq!(s.borrow().groups.len(), 1);
    }
    // The pool continues where it was: the next group is ff1e::89:2.
    let again = format!(
        r#"{{"name":"m2","er":["{}"],"ect":"multicast"}}"#,
        sensor_uri(10)
    );
    let a = c.post_json(&mut net, em_addr(), "/e", &again);
    assert!(a.text().contains("ff1e::89:2"), "{}", a.text());
    // A member that does not answer when the next EM starts is reported as unjoined.
    sensors[3].borrow_mut().mute = true;
    let em3 = em::restart(
        &mut net,
        node,
        EntityManager::open(em_config(), &db).unwrap(),
    );
    net.run_for(Duration::from_secs(120));
    let profile = c.get(&mut net, em_addr(), "/e/m/profile", None).json();
    assert_eq!(profile["unjoined"], serde_json::json!([sensor_uri(13)]));
    assert!(
        em3.borrow()
            .log()
            .iter()
            .any(|l| l.contains("did not re-join ff1e::89:1")),
        "{:?}",
        em3.borrow().log()
    );
    sensors[3].borrow_mut().mute = false;
    // And deletions are stored too.
    let del = c.call(
        &mut net,
        em_addr(),
        Code::DELETE,
        Req {
            target: "/e/u",
            ..Req::default()
        },
    );
    assert_eq!(del.code, Code::DELETED);
    let state = SqliteStore::open(&db).unwrap().load().unwrap();
    let names: Vec<_> = state.entities.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["m", "m2"]);
}

#[test]
fn a_creation_killed_midway_leaves_nothing() {
    let db = temp_db("persistence", "killed");
    let (mut net, node, c, sensors) = setup(&db);
    // The members' answers to the joins are lost: the EM is still waiting when it dies.
    let members = [addr(12), addr(13)];
    net.drop_rule = Some(Box::new(move |from, _to, bytes| {
        members.contains(from) && Message::parse(bytes).is_ok_and(|m| m.code() == Code::CHANGED)
    }));
    let body = format!(
        r#"{{"name":"half","er":["{}","{}"],"ect":"multicast"}}"#,
        sensor_uri(12),
        sensor_uri(13)
    );
    let id = c.start(
        &mut net,
        em_addr(),
        Code::POST,
        Req {
            target: "/e",
            content_format: Some(ContentFormat::JSON),
            payload: body.as_bytes(),
            ..Req::default()
        },
    );
    net.run_for(Duration::from_secs(3));
    assert!(!c.ended(id), "the creation is still in progress");
    for s in &sensors[2..] {
        assert_eq!(s.borrow().groups.len(), 1, "the members joined");
    }
    // On disk: a pending record only.
    let state = SqliteStore::open(&db).unwrap().load().unwrap();
    assert_eq!(state.entities.len(), 1);
    assert_eq!(state.entities[0].state, RecordState::Pending);

    // SIGKILL: the EM and its engine are gone without any clean-up. A new one starts.
    net.drop_rule = None;
    let em2 = em::restart(
        &mut net,
        node,
        EntityManager::open(em_config(), &db).unwrap(),
    );
    net.run_for(Duration::from_secs(2));
    for s in &sensors[2..] {
        assert!(
            s.borrow().groups.is_empty(),
            "asked to leave at the restart"
        );
        assert_eq!(
            s.borrow().membership.last().map(String::as_str),
            Some("del")
        );
    }
    assert_eq!(em2.borrow().entities().count(), 0);
    assert!(
        em2.borrow()
            .log()
            .iter()
            .any(|l| l.starts_with("undid the interrupted creation of half")),
        "{:?}",
        em2.borrow().log()
    );
    assert!(SqliteStore::open(&db)
        .unwrap()
        .load()
        .unwrap()
        .entities
        .is_empty());
    assert_eq!(
        c.get(&mut net, em_addr(), "/e/half", None).code,
        Code::NOT_FOUND
    );
    // The name is free again; the address is not reused yet.
    let a = c.post_json(&mut net, em_addr(), "/e", &body);
    assert_eq!(a.code, Code::CREATED, "{}", a.text());
    assert!(a.text().contains("ff1e::89:2"), "{}", a.text());
}

#[test]
fn corrupt_or_unusable_databases_are_errors() {
    let db = temp_db("persistence", "corrupt");
    std::fs::write(
        &db,
        b"this is not an SQLite database, just text that fills a page....",
    )
    .unwrap();
    let err = EntityManager::open(em_config(), &db).unwrap_err();
    assert!(
        matches!(err, EmError::Store(StoreError::Corrupt { .. })),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("entities.db is corrupt"), "{text}");
    assert!(!text.contains('\n'), "one line: {text}");

    let err = EntityManager::open(em_config(), "/nonexistent/covey/entities.db").unwrap_err();
    assert!(
        matches!(err, EmError::Store(StoreError::Unusable { .. })),
        "{err}"
    );

    // A stored entity that no longer parses is an error too, not a panic.
    let db = temp_db("persistence", "unreadable");
    SqliteStore::open(&db)
        .unwrap()
        .insert(
            &EntityRecord {
                name: "x".into(),
                state: RecordState::Active,
                profile: r#"{"name":"x","er":["not a uri"]}"#.into(),
                group: None,
                nested: vec![],
            },
            None,
        )
        .unwrap();
    let err = EntityManager::open(em_config(), &db).unwrap_err();
    assert!(matches!(err, EmError::Record(_)), "{err}");
    assert!(err.to_string().contains("stored entity \"x\""), "{err}");
}
