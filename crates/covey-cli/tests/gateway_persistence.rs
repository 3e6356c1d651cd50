//! Entities survive the gateway: created, the gateway killed with SIGKILL (also in the
//! middle of a creation), restarted on the same database, and queried; a corrupt or
//! unusable database stops the gateway at start with one line.

mod gateway_support;
mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use gateway_support::{entity, fails, ok, GatewayProcess, Scratch, SilentMember};
use support::{covey, covey_server, run_limited, stderr};

#[test]
fn entities_survive_a_sigkill_and_a_restart() {
    let scratch = Scratch::new("persist");
    let db = scratch.join("entities.db");
    let (_m1, p1) = covey_server(&[]);
    let (_m2, p2) = covey_server(&[]);
    let t1 = format!("coap://127.0.0.1:{p1}/sensors/temp");
    let t2 = format!("coap://127.0.0.1:{p2}/sensors/temp");

    let gw = GatewayProcess::start(&db, &[]);
    let (port, base) = (gw.port, gw.base());
    ok(&entity(&[
        "create", &base, "room", "--member", &t1, "--member", &t2, "--eo", "avg,lst", "--delay",
        "auto",
    ]));
    ok(&entity(&[
        "create",
        &base,
        "floor",
        "--member",
        &gw.entity_uri("room"),
    ]));
    // A creation in progress when the gateway dies: its silent member keeps the validation
    // waiting (30 s by default).
    let silent = SilentMember::new();
    let quiet = format!("coap://127.0.0.1:{}/s/t", silent.port);
    let mut pending = covey()
        .args([
            "entity", "create", &base, "half", "--member", &t1, "--member", &quiet, "-B", "20",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a creation");
    // The gateway probing the silent member is the creation under way.
    silent.wait_until_asked();
    gw.kill_hard();
    let _ = pending.kill();
    let _ = pending.wait();

    // Restart on the same port and database (the port may need a moment to be free).
    let deadline = Instant::now() + Duration::from_secs(10);
    let gw = loop {
        match GatewayProcess::start_on(port, &db, &[]) {
            Ok(g) => break g,
            Err(e) if Instant::now() > deadline => panic!("restart failed: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let listed: serde_json::Value =
        serde_json::from_str(&ok(&entity(&["list", &base, "--json"]))).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["floor", "room"], "no half-created entity: {listed}");
    let profile: serde_json::Value =
        serde_json::from_str(&ok(&entity(&["show", &base, "room"]))).unwrap();
    assert_eq!(profile["er"], serde_json::json!([t1, t2]));
    assert_eq!(profile["eo"], serde_json::json!(["avg", "lst"]));
    assert_eq!(profile["delay"], "auto");
    let text = ok(&entity(&["query", &base, "room"]));
    let avg: f64 = text.lines().next().unwrap().parse().expect("the average");
    assert!((19.0..25.0).contains(&avg), "{text}");
    let text = ok(&entity(&["query", &base, "floor"]));
    assert!(text.contains(&gw.entity_uri("room")), "{text}");
    assert!(text.ends_with("answered: 1 of 1\n"), "{text}");
    // The interrupted name is free again.
    ok(&entity(&["create", &base, "half", "--member", &t1]));
    drop(gw);
}

#[test]
fn a_corrupt_or_unusable_database_is_one_line_at_start() {
    let scratch = Scratch::new("corrupt");
    let corrupt = scratch.join("corrupt.db");
    std::fs::write(&corrupt, vec![0x42u8; 16 * 1024]).unwrap();
    let not_a_dir = scratch.join("file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let under_file = not_a_dir.join("entities.db");
    for (db, needle) in [(&corrupt, "corrupt"), (&under_file, "cannot create")] {
        let mut cmd = covey();
        cmd.args(["gateway", "--bind", "127.0.0.1:0", "--db"])
            .arg(db);
        let out = run_limited(cmd, Duration::from_secs(20));
        let line = fails(&out, 1, &[needle]);
        assert!(line.starts_with("covey: entity database"), "{line}");
        assert!(line.contains(&db.display().to_string()), "{line}");
        assert!(!stderr(&out).contains("panicked"));
    }
    // Bad flags are usage errors.
    let mut cmd = covey();
    cmd.args([
        "gateway",
        "--bind",
        "127.0.0.1:0",
        "--group-pool",
        "2001:db8::/112",
    ]);
    let out = run_limited(cmd, Duration::from_secs(20));
    fails(&out, 2, &["invalid group pool"]);
}
