//! A gateway's store writes from a thread of its own (`BackgroundStore`): the EM still
//! answers a creation or deletion only once the change is in the SQLite file, so a crash
//! right after the answer loses nothing.

mod support;

use covey_core::Code;
use covey_group::store::RecordState;
use covey_group::{BackgroundStore, EntityManager, SqliteStore, Store};
use covey_proto::Duration;
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, sensor_uri, temp_db, Network};

#[test]
fn a_background_store_answers_only_once_the_change_is_on_disk() {
    let db = temp_db("background", "background");
    let mut net = Network::new(Duration::from_millis(10), 0.0, 22);
    for n in 10..12u16 {
        sensor(&mut net, n, f64::from(n), Format::Text, 4);
    }
    let store = BackgroundStore::spawn(Box::new(SqliteStore::open(&db).unwrap())).unwrap();
    em::add(
        &mut net,
        EntityManager::new(em_config(), Box::new(store)).unwrap(),
    );
    let c = Client::add(&mut net, addr(2), 2);
    let on_disk = || {
        let state = SqliteStore::open(&db).unwrap().load().unwrap();
        state
            .entities
            .into_iter()
            .map(|e| (e.name, e.state))
            .collect::<Vec<_>>()
    };
    let unicast = format!(r#"{{"name":"u","er":["{}"]}}"#, sensor_uri(10));
    let multicast = format!(
        r#"{{"name":"m","er":["{}","{}"],"ect":"multicast"}}"#,
        sensor_uri(10),
        sensor_uri(11)
    );
    assert_eq!(
        c.post_json(&mut net, em_addr(), "/e", &unicast).code,
        Code::CREATED
    );
    assert_eq!(on_disk(), [("u".to_string(), RecordState::Active)]);
    assert_eq!(
        c.post_json(&mut net, em_addr(), "/e", &multicast).code,
        Code::CREATED
    );
    assert_eq!(
        on_disk(),
        [
            ("m".to_string(), RecordState::Active),
            ("u".to_string(), RecordState::Active)
        ]
    );
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
    assert_eq!(on_disk(), [("m".to_string(), RecordState::Active)]);
    let answer = c.get(&mut net, em_addr(), "/e/m", None).text();
    assert!(answer.contains("answered: 2 of 2"), "{answer}");
}
