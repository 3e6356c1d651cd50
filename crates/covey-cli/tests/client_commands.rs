//! `covey serve` in the background and the client commands against it: output, JSON and
//! exit codes.

mod support;

use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr, stdout};

const LIMIT: Duration = Duration::from_secs(20);

fn get(args: &[&str]) -> std::process::Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

#[test]
fn get_put_post_delete_and_exit_codes() {
    let (_server, port) = covey_server(&[]);
    let base = format!("coap://127.0.0.1:{port}");

    let out = get(&["get", &format!("{base}/sensors/temp")]);
    assert!(out.status.success(), "{out:?}");
    let reading: f64 = stdout(&out).trim().parse().expect("a number");
    assert!((19.0..25.0).contains(&reading));

    // Piped output is the raw payload.
    let out = get(&["put", "-e", "hello", "-t", "text", &format!("{base}/echo")]);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), "hello".into()));
    let out = get(&["post", "-N", "--payload", "non", &format!("{base}/echo")]);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), "non".into()));

    let out = get(&["get", &format!("{base}/nope")]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("4.04 Not Found"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1);

    let out = get(&["delete", &format!("{base}/sensors/temp")]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("4.05 Method Not Allowed"));

    let out = get(&["get", "--json", &format!("{base}/large")]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["code"], "2.05");
    assert_eq!(v["payload"]["text"].as_str().unwrap().len(), 2048);
    // Loopback answers in far less than the default timeout.
    assert!(
        v["elapsed_ms"].as_f64().is_some_and(|ms| ms < 10_000.0),
        "{v}"
    );

    let out = get(&["discover", &format!("{base}?rt=temperature-c")]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        r#"</sensors/temp>;rt="temperature-c";if="sensor";ct="0 50 110";obs"#
    );
}

#[test]
fn timeout_against_a_silent_port() {
    // Bound but never answering (a closed port fails at once instead: tests/unreachable.rs).
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("local address").port();
    let out = get(&["get", "-B", "0.5", &format!("coap://127.0.0.1:{port}/x")]);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert!(stderr(&out).contains("in time"), "{}", stderr(&out));
}

#[test]
fn bad_uris_and_usage() {
    for uri in ["coap://[::1/x", "http://127.0.0.1/x", "no-scheme"] {
        let out = get(&["get", uri]);
        assert_eq!(out.status.code(), Some(2), "{uri}: {out:?}");
        assert!(
            stderr(&out).starts_with("covey: bad URI"),
            "{}",
            stderr(&out)
        );
    }
    let out = get(&["get", "-A", "nonsense", "coap://127.0.0.1/x"]);
    assert_eq!(out.status.code(), Some(2));
    let out = get(&["get", "coap://unknown-host.invalid/x"]);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
}

#[test]
fn verbose_trace_shows_the_exchange() {
    let (_server, port) = covey_server(&["--plugtest"]);
    let out = get(&[
        "get",
        "-v",
        &format!("coap://127.0.0.1:{port}/seg1/seg2/seg3"),
    ]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(err.contains("-> 127.0.0.1"), "{err}");
    assert!(err.contains("CON GET"), "{err}");
    assert!(err.contains("<- 127.0.0.1"), "{err}");
    assert!(err.contains("ACK 2.05 Content"), "{err}");
}

#[test]
fn observe_prints_notifications_then_deregisters() {
    let (_server, port) = covey_server(&[]);
    let out = get(&[
        "observe",
        "-s",
        "2.5",
        &format!("coap://127.0.0.1:{port}/time"),
    ]);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    // The registration's answer plus one notification a second.
    assert!(lines.len() >= 2, "{lines:?}");
    assert!(
        lines.iter().all(|l| l.ends_with('Z') && l.len() == 20),
        "{lines:?}"
    );
}
