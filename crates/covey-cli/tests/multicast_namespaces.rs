//! Multicast for real (issue 4, deliverable 7): four network namespaces on one bridge (in a
//! fifth namespace, so the host's own network is untouched), three `covey serve --group
//! ff02::fd%eth0` and one client whose single multicast GET gets three responses, one per
//! server, spread in time by the servers' leisure (RFC 7252 §8.2). Everything the test creates
//! is removed when it ends, also on failure. Needs root (CAP_NET_ADMIN) and iproute2.

mod support;

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use covey_proto::Config;
use support::{run_limited, stderr, stdout};

/// The group the servers join (link-local scope, "All CoAP Nodes").
const GROUP: &str = "ff02::fd";
/// Namespaces 1..=SERVERS run servers; the one after them runs the client.
const SERVERS: usize = 3;
/// The longest any single `ip` command may take.
const IP_LIMIT: Duration = Duration::from_secs(10);

#[test]
fn three_servers_answer_one_multicast_get_spread_by_leisure() {
    assert!(
        is_root(),
        "this test creates network namespaces and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("covey-mc-{}", std::process::id());
    let mut lab = Lab::new(&prefix);
    lab.build();
    let client = lab.host(SERVERS + 1);

    for n in 1..=SERVERS {
        lab.start_server(n);
    }
    for n in 1..=SERVERS {
        lab.wait_until_serving(n);
    }

    // A unicast baseline: the round trip over the bridge without leisure.
    let unicast = lab.covey_in(
        &client,
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
        &client,
        &[
            "get",
            "--json",
            "-B",
            "10",
            &format!("coap://[{GROUP}%25eth0]:5683/sensors/temp"),
        ],
    );
    let run_time = started.elapsed();
    assert!(out.status.success(), "{out:?}\n{}", lab.server_logs());
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
    assert!(
        last < leisure.as_secs_f64() * 1000.0 + 500.0,
        "a response came after the leisure period: {times:?}"
    );
    // The client stops collecting when the window closes (plus process start and exit).
    assert!(
        run_time < window + Duration::from_secs(5),
        "the client ran {run_time:?} for a window of {window:?}"
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
    Ipv6Addr::new(0xfd00, 0xc0e, 0, 0, 0, 0, 0, n as u16)
}

/// The namespaces, bridge and servers of one run; dropping it stops the servers and deletes
/// the namespaces (which deletes their veths and the bridge).
struct Lab {
    prefix: String,
    /// Created namespaces, in creation order.
    namespaces: Vec<String>,
    servers: Vec<Server>,
}

struct Server {
    child: Child,
    log: std::path::PathBuf,
}

impl Lab {
    fn new(prefix: &str) -> Lab {
        Lab {
            prefix: prefix.to_string(),
            namespaces: Vec::new(),
            servers: Vec::new(),
        }
    }

    fn bridge(&self) -> String {
        format!("{}-br", self.prefix)
    }

    fn host(&self, n: usize) -> String {
        format!("{}-h{n}", self.prefix)
    }

    fn add_namespace(&mut self, name: &str) {
        ip(&["netns", "add", name]);
        self.namespaces.push(name.to_string());
        ip(&["-n", name, "link", "set", "lo", "up"]);
    }

    /// The bridge namespace with `br0` (multicast snooping off, so every group datagram is
    /// flooded), and hosts 1..=4 each with `eth0` on it: fe80::N and fd00:c0e::N, no DAD.
    fn build(&mut self) {
        let bridge = self.bridge();
        self.add_namespace(&bridge);
        ip(&[
            "-n",
            &bridge,
            "link",
            "add",
            "br0",
            "type",
            "bridge",
            "mcast_snooping",
            "0",
        ]);
        ip(&["-n", &bridge, "link", "set", "br0", "up"]);
        for n in 1..=SERVERS + 1 {
            let host = self.host(n);
            self.add_namespace(&host);
            let port = format!("v{n}");
            // Both ends are created inside their namespaces: nothing appears in the host's.
            ip(&[
                "link", "add", &port, "netns", &bridge, "type", "veth", "peer", "name", "eth0",
                "netns", &host,
            ]);
            ip(&["-n", &bridge, "link", "set", &port, "master", "br0", "up"]);
            sysctl_in(&host, "net.ipv6.conf.all.disable_ipv6=0");
            sysctl_in(&host, "net.ipv6.conf.eth0.disable_ipv6=0");
            // Fixed addresses instead of generated ones.
            ip(&["-n", &host, "link", "set", "eth0", "addrgenmode", "none"]);
            for addr in [link_local(n), ula(n)] {
                let cidr = format!("{addr}/64");
                ip(&["-n", &host, "addr", "add", &cidr, "dev", "eth0", "nodad"]);
            }
            ip(&["-n", &host, "link", "set", "eth0", "up"]);
        }
    }

    fn start_server(&mut self, n: usize) {
        let host = self.host(n);
        let log = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{}-server{n}.log", self.prefix));
        let file = std::fs::File::create(&log).expect("create a server log");
        let child = Command::new("ip")
            .args(["netns", "exec", &host, env!("CARGO_BIN_EXE_covey")])
            .args([
                "serve",
                "--bind",
                "[::]:5683",
                "--group",
                &format!("{GROUP}%eth0"),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start covey serve in a namespace");
        self.servers.push(Server { child, log });
    }

    /// Polls server `n` with a unicast GET from the client's namespace (at most about 10 s).
    fn wait_until_serving(&mut self, n: usize) {
        let client = self.host(SERVERS + 1);
        let uri = format!("coap://[{}]:5683/.well-known/core", ula(n));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.servers[n - 1].child.try_wait() {
                panic!("server {n} exited ({status}):\n{}", self.server_logs());
            }
            if self
                .covey_in(&client, &["get", "-B", "0.3", &uri])
                .status
                .success()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server {n} did not answer:\n{}", self.server_logs());
    }

    /// Runs `covey ARGS` in namespace `ns`, for at most 20 s.
    fn covey_in(&self, ns: &str, args: &[&str]) -> Output {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_covey")])
            .args(args);
        run_limited(cmd, Duration::from_secs(20))
    }

    fn server_logs(&self) -> String {
        self.servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let log = std::fs::read_to_string(&s.log).unwrap_or_default();
                format!("--- server {}:\n{log}", i + 1)
            })
            .collect()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for server in &mut self.servers {
            let _ = server.child.kill();
            let _ = server.child.wait();
            let _ = std::fs::remove_file(&server.log);
        }
        // Hosts first, then the bridge; deleting a namespace deletes its interfaces.
        for name in self.namespaces.iter().rev() {
            if let Err(e) = ip_quiet(&["netns", "del", name]) {
                eprintln!("cannot delete namespace {name}: {e}");
            }
        }
    }
}

/// Runs `ip ARGS` with a time limit; panics with its output if it fails.
fn ip(args: &[&str]) {
    if let Err(e) = ip_quiet(args) {
        panic!("{e}");
    }
}

/// Runs `ip ARGS` with a time limit, without panicking (for cleanup).
fn ip_quiet(args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new("ip");
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run ip (install iproute2): {e}"))?;
    let deadline = Instant::now() + IP_LIMIT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "ip {} took longer than {IP_LIMIT:?}",
                    args.join(" ")
                ));
            }
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(stdout(&out))
    } else {
        Err(format!(
            "ip {} failed: {}",
            args.join(" "),
            stderr(&out).trim()
        ))
    }
}

/// Sets a sysctl inside namespace `ns` only.
fn sysctl_in(ns: &str, setting: &str) {
    ip(&["netns", "exec", ns, "sysctl", "-qw", setting]);
}

/// The names `ip netns list` shows.
fn netns_list() -> Vec<String> {
    ip_quiet(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}
