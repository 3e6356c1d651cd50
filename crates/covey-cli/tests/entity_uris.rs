//! An Entity Manager names an entity in its replies as the client reached it: at the address
//! the request was sent to (not the first address of the host), with the scheme it came in.
//! A gateway on the wildcard address answers `[::1]` to a client that used `[::1]` and
//! `127.0.0.1` to one that used `127.0.0.1`. (coaps:// is in `entity_coaps.rs`.)

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stdout, Background};

const LIMIT: Duration = Duration::from_secs(40);

fn entity(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.arg("entity").args(args);
    run_limited(cmd, LIMIT)
}

/// The `entity` field of the JSON reply to a query of `name` on `gateway`.
fn entity_named(gateway: &str, name: &str) -> String {
    let out = entity(&["query", "--json", gateway, name]);
    assert!(out.status.success(), "{out:?}");
    let reply: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    reply["entity"].as_str().expect("an entity URI").to_string()
}

#[test]
fn replies_name_the_entity_at_the_address_the_client_used() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("entity-uris-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (_member, member_port) = covey_server(&[]);
    let mut cmd = covey();
    cmd.args(["gateway", "--no-http", "--bind", "[::]:0", "--db"])
        .arg(dir.join("entities.db"));
    let mut gateway = Background::start_logged(cmd);
    let port = gateway.listening(1)[0].port();
    let v6 = format!("coap://[::1]:{port}");
    let v4 = format!("coap://127.0.0.1:{port}");
    let member = format!("coap://127.0.0.1:{member_port}/sensors/temp");

    let out = entity(&["create", &v6, "room1", "--member", &member]);
    assert!(out.status.success(), "{out:?}\n{}", gateway.log());
    assert!(
        stdout(&out).contains(&format!("created {v6}/e/room1")),
        "{}",
        stdout(&out)
    );
    assert_eq!(entity_named(&v6, "room1"), format!("{v6}/e/room1"));
    assert_eq!(entity_named(&v4, "room1"), format!("{v4}/e/room1"));

    // SenML names it the same way (its base name).
    let mut get = covey();
    get.args(["get", "-A", "senml+json", &format!("{v4}/e/room1")]);
    let out = run_limited(get, LIMIT);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).contains(&format!("\"bn\":\"{v4}/e/room1\"")),
        "{}",
        stdout(&out)
    );
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
}
