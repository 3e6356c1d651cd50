//! Multicast for real (issue 4, deliverable 7): four network namespaces on one bridge (in a
//! fifth namespace, so the host's own network is untouched), three `covey serve --group
//! ff02::fd%eth0` and one client whose single multicast GET gets three responses, one per
//! server, spread in time by the servers' leisure (RFC 7252 §8.2). Everything the test creates
//! is removed when it ends, also on failure. Needs root (CAP_NET_ADMIN) and iproute2.

mod netns;
mod support;

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::process::Output;
use std::time::{Duration, Instant};

use covey_proto::Config;
use netns::{ip, is_root, netns_list, Lab};
use support::stdout;

/// The group the servers join (link-local scope, "All CoAP Nodes").
const GROUP: &str = "ff02::fd";
/// Namespaces 1..=SERVERS run servers; the one after them runs the client.
const SERVERS: usize = 3;
/// The client's host.
const CLIENT: usize = SERVERS + 1;

#[test]
#[ignore = "needs root"]
fn three_servers_answer_one_multicast_get_spread_by_leisure() {
    assert!(
        is_root(),
        "this test creates network namespaces and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("covey-mc-{}", std::process::id());
    let mut lab = Lab::new(&prefix, Duration::from_secs(20));
    build(&mut lab);

    for n in 1..=SERVERS {
        lab.start(
            n,
            &[
                "serve",
                "--bind",
                "[::]:5683",
                "--group",
                &format!("{GROUP}%eth0"),
            ],
        );
    }
    for n in 1..=SERVERS {
        lab.wait_until_serving(n, ula(n), CLIENT);
    }

    // A unicast baseline: the round trip over the bridge without leisure.
    let unicast = lab.covey_in(
        CLIENT,
        &[
            "get",
            "--json",
            "-B",
            "2",
            &format!("coap://[{}]:5683/sensors/temp", ula(1)),
        ],
    );
    assert!(unicast.status.success(), "{unicast:?}");
    let unicast_ms = responses(&unicast)[0].elapsed_ms;

    // `covey serve` and `covey get` run on the default configuration: each server answers at
    // a random instant within DEFAULT_LEISURE (5 s), and the client collects for the
    // multicast window (the leisure plus ACK_TIMEOUT).
    let config = Config::default();
    let leisure = config.transmission.default_leisure;
    let window = config.multicast_window();
    let started = Instant::now();
    let out = lab.covey_in(
        CLIENT,
        &[
            "get",
            "--json",
            "-B",
            "10",
            &format!("coap://[{GROUP}%25eth0]:5683/sensors/temp"),
        ],
    );
    let run_time = started.elapsed();
    assert!(out.status.success(), "{out:?}\n{}", lab.logs());
    let answers = responses(&out);

    assert_eq!(
        answers.len(),
        SERVERS,
        "one response per server expected:\n{}",
        stdout(&out)
    );
    assert!(
        answers
            .iter()
            .all(|a| a.code == "2.05" && a.reading.is_some()),
        "{answers:?}"
    );
    let sources: BTreeSet<IpAddr> = answers.iter().map(|a| a.source).collect();
    let expected: BTreeSet<IpAddr> = (1..=SERVERS).map(|n| IpAddr::V6(link_local(n))).collect();
    assert_eq!(sources, expected, "each response from a different server");

    // Leisure: the answers come at random instants within DEFAULT_LEISURE, not all at once
    // one round trip after the request (three uniform draws over 5 s fall within 20 ms of
    // each other with probability about 5e-5).
    let times: Vec<f64> = answers.iter().map(|a| a.elapsed_ms).collect();
    let first = times.iter().copied().fold(f64::INFINITY, f64::min);
    let last = times.iter().copied().fold(0.0, f64::max);
    let spread = last - first;
    eprintln!(
        "multicast GET to {GROUP}%eth0: {} responses from {:?} at {:?} ms (spread {spread:.1} ms; \
         unicast round trip {unicast_ms:.2} ms); the client ran {:.1} s",
        answers.len(),
        answers.iter().map(|a| a.source).collect::<Vec<_>>(),
        times,
        run_time.as_secs_f64()
    );
    assert!(spread > 20.0, "responses not spread: {times:?}");
    // How late the last response came against the leisure, and how long the client ran
    // against its window, are wall-clock times: printed for the reader, not asserted.
    eprintln!(
        "last response at {last:.1} ms for a leisure of {leisure:?}; the client ran {run_time:?} \
         for a window of {window:?}"
    );

    let names = lab.namespaces.clone();
    drop(lab);
    let left = netns_list();
    for name in names {
        assert!(!left.contains(&name), "namespace {name} was left behind");
    }
}

/// One parsed line of `covey get --json`.
#[derive(Debug)]
struct Answer {
    code: String,
    source: IpAddr,
    elapsed_ms: f64,
    reading: Option<f64>,
}

fn responses(out: &Output) -> Vec<Answer> {
    stdout(out)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON response");
            let source = v["source"].as_str().expect("a source");
            Answer {
                code: v["code"].as_str().unwrap_or_default().to_string(),
                source: source_ip(source),
                elapsed_ms: v["elapsed_ms"].as_f64().expect("elapsed_ms"),
                reading: v["payload"]["text"]
                    .as_str()
                    .and_then(|t| t.trim().parse().ok()),
            }
        })
        .collect()
}

/// The IP address of `[addr%scope]:port` or `[addr]:port`.
fn source_ip(text: &str) -> IpAddr {
    if let Ok(a) = text.parse::<SocketAddr>() {
        return a.ip();
    }
    let inside = text
        .trim_start_matches('[')
        .split([']', '%'])
        .next()
        .unwrap_or_default();
    inside
        .parse()
        .unwrap_or_else(|_| panic!("bad source {text:?}"))
}

/// The link-local address of host `n` (fixed, so responses can be told apart by source).
fn link_local(n: usize) -> Ipv6Addr {
    Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, n as u16)
}

/// The unique local address of host `n`, used for the unicast readiness checks.
fn ula(n: usize) -> Ipv6Addr {
    netns::ula(0xc0e, n)
}

/// Hosts 1..=SERVERS+1 on the bridge, each `eth0` with fe80::N and fd00:c0e::N, no DAD.
fn build(lab: &mut Lab) {
    lab.build(CLIENT, |host, n| {
        // Fixed addresses instead of generated ones.
        ip(&["-n", host, "link", "set", "eth0", "addrgenmode", "none"]);
        for addr in [link_local(n), ula(n)] {
            let cidr = format!("{addr}/64");
            ip(&["-n", host, "addr", "add", &cidr, "dev", "eth0", "nodad"]);
        }
        ip(&["-n", host, "link", "set", "eth0", "up"]);
    });
}
