//! Who may manage `covey gateway` and the `/mc` of `covey serve`: loopback clients only
//! without security (and the start-up line says so), everyone with --open-management, the
//! rules of a --policy file otherwise; a bad policy file stops the server with its line.

mod gateway_support;
mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use gateway_support::{
    covey_run, entity, fails, gateway_with_http_and, ok, GatewayProcess, Scratch,
};
use reqwest::StatusCode;
use support::{covey, covey_server, listening_lines};

/// Writes policy `text` into `scratch` as `name`.
fn policy(scratch: &Scratch, name: &str, text: &str) -> PathBuf {
    let path = scratch.join(name);
    std::fs::write(&path, text).expect("write the policy");
    path
}

fn text(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

const LOOPBACK_READS: &str = "[[rule]]\nwho = [\"loopback\"]\nmay = [\"read\"]\n";

#[test]
fn without_security_the_gateway_is_managed_from_loopback_and_says_so() {
    let scratch = Scratch::new("mgmt-default");
    let gw = GatewayProcess::start(&scratch.join("e.db"), &[]);
    let log = gw.log();
    assert!(
        log.contains("entity management: loopback clients only, others get 4.01"),
        "{log}"
    );
    // A client on this host (`GatewayProcess::start` waits for its GET /e) reads as before.
    ok(&entity(&["list", &gw.base()]));
    let open = GatewayProcess::start(&scratch.join("open.db"), &["--open-management"]);
    assert!(
        open.log().contains("entity management: open to anyone"),
        "{}",
        open.log()
    );
}

#[test]
fn a_bind_without_loopback_needs_a_policy_or_the_explicit_flag() {
    let scratch = Scratch::new("mgmt-bind");
    let db = scratch.join("e.db");
    let lan = "192.0.2.7:5683";
    let out = covey_run(&["gateway", "--bind", lan, "--db", text(&db), "--no-http"]);
    fails(
        &out,
        2,
        &["no --bind address is loopback", "--open-management"],
    );
    let out = covey_run(&["serve", "--bind", lan, "--mc"]);
    fails(&out, 2, &["--open-management"]);
    let p = policy(&scratch, "p.toml", LOOPBACK_READS);
    let out = covey_run(&["serve", "--policy", text(&p)]);
    fails(&out, 2, &["add --mc"]);
    let out = covey_run(&["serve", "--open-management"]);
    fails(&out, 2, &["add --mc"]);
    let out = covey_run(&["gateway", "--policy", text(&p), "--open-management"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_bad_policy_file_stops_the_gateway_with_its_line() {
    let scratch = Scratch::new("mgmt-bad");
    let p = policy(
        &scratch,
        "policy.toml",
        "[[rule]]\nwho = [\"loopback\"]\nmay = [\"read\", \"rule-the-world\"]\n",
    );
    let db = scratch.join("e.db");
    let port = "127.0.0.1:0";
    let out = covey_run(&[
        "gateway",
        "--bind",
        port,
        "--db",
        text(&db),
        "--policy",
        text(&p),
    ]);
    let line = fails(
        &out,
        2,
        &["policy.toml:3: ", "unknown permission \"rule-the-world\""],
    );
    assert!(line.contains("mc-join"), "{line}");
    let out = covey_run(&[
        "serve",
        "--bind",
        port,
        "--mc",
        "--policy",
        "/nonexistent.toml",
    ]);
    fails(&out, 2, &["/nonexistent.toml"]);
}

#[test]
fn the_policy_decides_what_loopback_clients_may_do() {
    let scratch = Scratch::new("mgmt-policy");
    let p = policy(&scratch, "reads.toml", LOOPBACK_READS);
    let gw = GatewayProcess::start(&scratch.join("e.db"), &["--policy", text(&p)]);
    let log = gw.log();
    assert!(
        log.contains(&format!("authorized by {} (1 rules)", text(&p))),
        "{log}"
    );
    // Reading is granted (the gateway answered GET /e to come up); creating is not, and a
    // request in the clear has no identity: 4.01.
    let out = entity(&[
        "create",
        &gw.base(),
        "room",
        "--member",
        "coap://127.0.0.1:9/x",
    ]);
    fails(
        &out,
        3,
        &["4.01", "creating entities needs an authenticated identity"],
    );
    ok(&entity(&["list", &gw.base()]));

    let (_member, port) = covey_server(&[]);
    let manage = format!("{LOOPBACK_READS}\n[[rule]]\nwho = [\"loopback\"]\nmay = [\"manage\"]\n");
    let p = policy(&scratch, "manage.toml", &manage);
    let gw = GatewayProcess::start(&scratch.join("m.db"), &["--policy", text(&p)]);
    let member = format!("coap://127.0.0.1:{port}/sensors/temp");
    ok(&entity(&[
        "create",
        &gw.base(),
        "room",
        "--member",
        &member,
    ]));
    // ?fanout was not granted.
    let out = covey_run(&[
        "put",
        &format!("{}?fanout", gw.entity_uri("room")),
        "-e",
        "1",
    ]);
    fails(&out, 3, &["4.01", "fanning requests out"]);
    ok(&entity(&["delete", &gw.base(), "room"]));
}

#[test]
fn the_web_console_acts_under_the_loopback_rules() {
    let scratch = Scratch::new("mgmt-console");
    let p = policy(&scratch, "reads.toml", LOOPBACK_READS);
    let (gw, base) = gateway_with_http_and(&scratch.join("e.db"), &["--policy", text(&p)]);
    assert!(
        gw.log().contains("act as a loopback client"),
        "{}",
        gw.log()
    );
    let em = format!("{base}/hc/{}/e", gw.base());
    let http = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("HTTP client");
    let r = http.get(&em).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = http
        .post(&em)
        .header("content-type", "application/json")
        .body(r#"{"name":"room","er":["coap://127.0.0.1:9/x"]}"#)
        .send()
        .unwrap();
    // RFC 8075 maps 4.01 to 403; the CoAP code travels in its own header.
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(r.headers()["coap-code"], "4.01");
    assert!(r.text().unwrap().contains("creating entities"));
}

/// `covey serve --mc EXTRA` on loopback port 0 with its log in a file: (child, port, log).
fn serve_mc(scratch: &Scratch, extra: &[&str]) -> (std::process::Child, u16, PathBuf) {
    static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = scratch.join(&format!("serve-{serial}.log"));
    let file = std::fs::File::create(&log).expect("create the log");
    let child = covey()
        .args(["serve", "--bind", "127.0.0.1:0", "--mc"])
        .env_remove("RUST_LOG")
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .expect("start covey serve");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("/mc (joining and leaving groups)")
    {
        assert!(Instant::now() < deadline, "covey serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let port = listening_lines(&std::fs::read_to_string(&log).unwrap())[0].port();
    (child, port, log)
}

#[test]
fn mc_of_serve_follows_its_policy_and_says_who_may_use_it() {
    let scratch = Scratch::new("mgmt-mc");
    let (mut open, port, log) = serve_mc(&scratch, &[]);
    let startup = std::fs::read_to_string(&log).unwrap();
    assert!(
        startup.contains("/mc (joining and leaving groups): loopback clients only"),
        "{startup}"
    );
    ok(&covey_run(&["get", &format!("coap://127.0.0.1:{port}/mc")]));

    let nobody = policy(&scratch, "nobody.toml", "# no rules: nobody may\n");
    let (mut closed, port, log) = serve_mc(&scratch, &["--policy", text(&nobody)]);
    let startup = std::fs::read_to_string(&log).unwrap();
    assert!(startup.contains("authorized by"), "{startup}");
    let out = covey_run(&["get", &format!("coap://127.0.0.1:{port}/mc")]);
    fails(
        &out,
        3,
        &["4.01", "reading needs an authenticated identity"],
    );
    // The demo resources are not management: the policy leaves them alone.
    ok(&covey_run(&[
        "get",
        &format!("coap://127.0.0.1:{port}/time"),
    ]));
    for child in [&mut open, &mut closed] {
        let _ = child.kill();
        let _ = child.wait();
    }
}
