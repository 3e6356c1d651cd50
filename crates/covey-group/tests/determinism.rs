//! Same seed, same inputs, same datagrams: a 30-member unicast CON entity and a multicast
//! one, queried at 10 % loss, give a byte-identical datagram log in two separate processes
//! (std's hash seed differs per process, so any hash order that leaks into what the EM sends
//! shows up here).

mod support;

use covey_core::{Code, ContentFormat};
use covey_proto::Duration;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::client::{Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, Network};

/// Where the child process writes its log.
const LOG_PATH_VAR: &str = "COVEY_DATAGRAM_LOG";
/// The test that writes the log, run in the child processes.
const CHILD: &str = "datagram_log_of_a_lossy_run";
const MEMBERS: u16 = 30;

fn uris() -> Vec<String> {
    (0..MEMBERS)
        .map(|i| format!("coap://[2001:db8::{:x}]/s/t", 100 + i))
        .collect()
}

/// Creates the entities and queries them at 10 % loss; returns every datagram, one line each.
fn lossy_run() -> String {
    let mut net = Network::new(Duration::from_millis(10), 0.10, 8);
    for i in 0..MEMBERS {
        sensor(&mut net, 100 + i, f64::from(i), Format::Text, 2);
    }
    em::add_in_memory(&mut net, em_config());
    let c = Client::add(&mut net, addr(2), 2);
    let members = serde_json::to_string(&uris()).unwrap();
    for body in [
        format!(r#"{{"name":"u","er":{members},"eo":["lst","avg"]}}"#),
        format!(r#"{{"name":"m","er":{members},"ect":"multicast"}}"#),
    ] {
        let a = c.post_json(&mut net, em_addr(), "/e", &body);
        assert_eq!(a.code, Code::CREATED, "{}", a.text());
    }
    // Whole answers, anycast (29 requests cancelled at the first reply), paced, multicast.
    for target in [
        "/e/u",
        "/e/u?enr=1",
        "/e/u?enr=5&delay=20",
        "/e/u?eo=avg",
        "/e/m",
    ] {
        for _ in 0..3 {
            c.get(&mut net, em_addr(), target, Some(ContentFormat::JSON));
        }
    }
    // An anycast query overtaken by a whole one: when the first cancels its other requests,
    // the second's requests queued behind them (NSTART 1) go out in cancellation order.
    let c2 = Client::add(&mut net, addr(3), 3);
    for _ in 0..3 {
        let anycast = Req {
            target: "/e/u?enr=1",
            ..Req::default()
        };
        let id = c2.start(&mut net, em_addr(), Code::GET, anycast);
        c.get(&mut net, em_addr(), "/e/u", Some(ContentFormat::JSON));
        assert!(c2.ended(id));
    }
    assert!(net.log.iter().any(|s| s.dropped), "the loss was real");
    let mut out = String::new();
    for s in &net.log {
        let _ = write!(
            out,
            "{} {} {} {} ",
            s.at.as_nanos(),
            s.from,
            s.to,
            u8::from(s.dropped)
        );
        for b in &s.bytes {
            let _ = write!(out, "{b:02x}");
        }
        out.push('\n');
    }
    out
}

/// Run by [`datagram_logs_match_across_processes`] in a child process.
#[test]
#[ignore = "a child of datagram_logs_match_across_processes"]
fn datagram_log_of_a_lossy_run() {
    let log = lossy_run();
    if let Some(path) = std::env::var_os(LOG_PATH_VAR) {
        std::fs::write(path, log).expect("write the datagram log");
    }
}

/// Runs [`CHILD`] in a new process of this test binary, writing its log to `path`.
fn run_child(path: &Path) -> String {
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args([CHILD, "--exact", "--ignored", "--test-threads=1"])
        .env(LOG_PATH_VAR, path)
        .output()
        .expect("start the child");
    assert!(
        out.status.success(),
        "the child run failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::read_to_string(path).expect("the child's log")
}

#[test]
fn datagram_logs_match_across_processes() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("covey-determinism-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let first = run_child(&dir.join("first.log"));
    let second = run_child(&dir.join("second.log"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(first.lines().count() > 1000, "a real run");
    if let Some((n, (a, b))) = first
        .lines()
        .zip(second.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        panic!("datagram {n} differs between the runs:\n{a}\n{b}");
    }
    assert_eq!(first.len(), second.len(), "one run sent more datagrams");
}
