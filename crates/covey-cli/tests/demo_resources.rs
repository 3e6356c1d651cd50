//! The demo resources of a default `covey serve` as a libcoap or aiocoap user tries them:
//! content negotiation with Accept, every method on /echo, paths matched segment by
//! segment, and /time notifications a second apart, never repeated.

mod support;

use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr, stdout};

const LIMIT: Duration = Duration::from_secs(20);

fn run(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{out:?}");
    serde_json::from_str(stdout(out).trim()).expect("one JSON object")
}

#[test]
fn the_sensor_offers_text_json_and_senml_and_refuses_other_formats() {
    let (_server, port) = covey_server(&[]);
    let uri = format!("coap://127.0.0.1:{port}/sensors/temp");

    let v = json(&run(&["get", "--json", "-A", "json", &uri]));
    assert_eq!(v["code"], "2.05");
    let reading = v["payload"]["json"].as_f64().expect("a JSON number");
    assert!((19.0..25.0).contains(&reading), "{v}");

    let v = json(&run(&["get", "--json", "-A", "senml+json", &uri]));
    let record = &v["payload"]["json"][0];
    assert_eq!(
        (record["n"].as_str(), record["u"].as_str()),
        (Some("temp"), Some("Cel")),
        "{v}"
    );
    assert!(record["v"].is_number(), "{v}");

    let out = run(&["get", "-A", "cbor", &uri]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stderr(&out).contains("4.06 Not Acceptable"),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "get",
        "-A",
        "json",
        &format!("coap://127.0.0.1:{port}/time"),
    ]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stderr(&out).contains("4.06 Not Acceptable"),
        "{}",
        stderr(&out)
    );

    // Notifications are text: an observer asking JSON gets one answer, not a text stream.
    let out = run(&["observe", "-s", "3", "-A", "json", &uri]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout(&out).lines().count(), 1, "{out:?}");
}

#[test]
fn echo_answers_every_method() {
    let (_server, port) = covey_server(&[]);
    let uri = format!("coap://127.0.0.1:{port}/echo");
    let said = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        stdout(&out)
    };
    assert_eq!(said(&["get", &uri]), "");
    assert_eq!(said(&["put", "-e", "kept", &uri]), "kept");
    assert_eq!(said(&["get", &uri]), "kept");
    assert_eq!(said(&["fetch", "-e", "asked", &uri]), "asked");
    assert_eq!(said(&["post", "-e", "posted", &uri]), "posted");
    assert_eq!(said(&["get", &uri]), "posted");
    let v = json(&run(&["delete", "--json", &uri]));
    assert_eq!(v["code"], "2.02");
    assert_eq!(said(&["get", &uri]), "");
}

#[test]
fn an_encoded_slash_stays_inside_its_segment() {
    let (_server, port) = covey_server(&[]);
    let out = run(&["get", &format!("coap://127.0.0.1:{port}/sensors%2Ftemp")]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("4.04 Not Found"), "{}", stderr(&out));
    let out = run(&["get", &format!("coap://127.0.0.1:{port}/sensors/temp")]);
    assert!(out.status.success(), "{out:?}");
}

/// Seconds since midnight of `2024-05-01T12:34:56Z`.
fn seconds_of_day(time: &str) -> u32 {
    let hms: Vec<u32> = time[11..19]
        .split(':')
        .map(|p| p.parse().expect("a number"))
        .collect();
    hms[0] * 3600 + hms[1] * 60 + hms[2]
}

#[test]
fn time_notifications_come_a_second_apart_and_never_repeat_a_value() {
    let (_server, port) = covey_server(&[]);
    let out = run(&[
        "observe",
        "-s",
        "3.6",
        &format!("coap://127.0.0.1:{port}/time"),
    ]);
    assert!(out.status.success(), "{out:?}");
    let values: Vec<u32> = stdout(&out).lines().map(seconds_of_day).collect();
    assert!(values.len() >= 4, "{values:?}");
    for pair in values.windows(2) {
        assert_eq!((pair[1] + 86_400 - pair[0]) % 86_400, 1, "{values:?}");
    }
}
