//! A multicast entity for real: network namespaces on one bridge (itself in a namespace, so
//! the host's network is untouched) — a gateway, three members running `covey serve --mc`,
//! one member without `/mc`, and a client. The gateway assigns a group from its pool
//! (ff1e::89:N, global scope, so every host has a route for ff00::/8 on eth0), the members
//! join it through `/mc`, the client queries the entity through the EM and directly at the
//! profile's `mcastURI`, and deletion makes the members leave. A creation that one member
//! refuses is rolled back. Everything the test creates is removed when it ends, also on
//! failure. Needs root (CAP_NET_ADMIN) and iproute2.

mod gateway_support;
mod support;

use std::collections::BTreeSet;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use gateway_support::senml_json;
use support::{run_limited, stderr, stdout};

/// Host numbers: the gateway, the members with /mc, the one without, the client.
const GATEWAY: usize = 1;
const MEMBERS: [usize; 3] = [2, 3, 4];
const NO_MC: usize = 5;
const CLIENT: usize = 6;
const HOSTS: usize = 6;
/// The longest any single `ip` command may take.
const IP_LIMIT: Duration = Duration::from_secs(10);

#[test]
fn multicast_entity_life_cycle_in_namespaces() {
    assert!(
        is_root(),
        "this test creates network namespaces and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("covey-em-{}", std::process::id());
    let mut lab = Lab::new(&prefix);
    lab.build();
    let db = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}.db"));
    let _ = std::fs::remove_file(&db);
    let gateway_args = [
        "gateway",
        "--bind",
        "[::]:5683",
        "--db",
        db.to_str().unwrap(),
        "--validation-timeout",
        "5",
    ];
    lab.start(GATEWAY, &gateway_args);
    for n in MEMBERS {
        lab.start(n, &["serve", "--bind", "[::]:5683", "--mc"]);
    }
    lab.start(NO_MC, &["serve", "--bind", "[::]:5683"]);
    for n in [GATEWAY, MEMBERS[0], MEMBERS[1], MEMBERS[2], NO_MC] {
        lab.wait_until_serving(n);
    }
    let gw = format!("coap://[{}]", ula(GATEWAY));
    let member = |n: usize| format!("coap://[{}]/sensors/temp", ula(n));
    let members: Vec<String> = MEMBERS.iter().map(|n| member(*n)).collect();
    let entity_uri = format!("coap://[{}]/e/cold", ula(GATEWAY));

    // Create: a group from the pool, every member joined.
    let mut args = vec![
        "entity",
        "create",
        gw.as_str(),
        "cold",
        "--ect",
        "multicast",
    ];
    for m in &members {
        args.extend(["--member", m.as_str()]);
    }
    args.extend(["--eo", "avg,lst"]);
    let out = lab.covey_ok(CLIENT, &args);
    let group = "ff1e::89:1";
    assert!(
        out.starts_with(&format!("created {entity_uri} (3 members, multicast)\n")),
        "{out}"
    );
    let mcast_uri = format!("coap://[{group}]/sensors/temp");
    assert!(out.contains(&format!("mcastURI: {mcast_uri}")), "{out}");
    for m in &members {
        assert!(out.contains(&format!("{m} joined (2.04")), "{out}");
    }
    let profile: serde_json::Value =
        serde_json::from_str(&lab.covey_ok(CLIENT, &["entity", "show", &gw, "cold"])).unwrap();
    assert_eq!(profile["ect"], "multicast");
    assert_eq!(profile["emt"], "non");
    assert_eq!(profile["mcastURI"], mcast_uri);
    for n in MEMBERS {
        assert_eq!(lab.groups(n), [group], "member {n}'s /mc");
    }

    // Query through the EM: one NON multicast request, every member's reply.
    let started = Instant::now();
    let doc: serde_json::Value = serde_json::from_str(&lab.covey_ok(
        CLIENT,
        &["entity", "query", &gw, "cold", "--eo", "lst", "--json"],
    ))
    .unwrap();
    assert_eq!(doc["answered"], 3, "{doc}");
    let answered: BTreeSet<String> = doc["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["member"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(answered, members.iter().cloned().collect());
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "replies come within the members' leisure"
    );
    let out = lab.covey_in(
        CLIENT,
        &[
            "entity",
            "query",
            &gw,
            "cold",
            "--eo",
            "avg",
            "--accept",
            "senml+json",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let records = senml_json(&out.stdout);
    assert_eq!(records[0].name, entity_uri);
    let values: Vec<f64> = records[2..].iter().map(|r| r.value.unwrap()).collect();
    assert_eq!(values.len(), 3, "{records:?}");
    let avg = values.iter().sum::<f64>() / 3.0;
    assert!(
        (records[0].value.unwrap() - avg).abs() < 1e-9,
        "{records:?}"
    );

    // Directly at mcastURI, without the EM: one response per member.
    let out = lab.covey_in(CLIENT, &["get", "--json", "-B", "10", &mcast_uri]);
    assert!(out.status.success(), "{out:?}");
    let sources: BTreeSet<String> = stdout(&out)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["code"], "2.05", "{l}");
            v["source"].as_str().unwrap().to_string()
        })
        .collect();
    let expected: BTreeSet<String> = MEMBERS
        .iter()
        .map(|n| format!("[{}]:5683", ula(*n)))
        .collect();
    assert_eq!(sources, expected, "{}", stdout(&out));

    // Delete: every member leaves, and says so.
    let out = lab.covey_ok(CLIENT, &["entity", "delete", &gw, "cold"]);
    assert!(
        out.starts_with(&format!(
            "deleted {entity_uri}; 3 of 3 members left {group}\n"
        )),
        "{out}"
    );
    for m in &members {
        assert!(out.contains(&format!("{m} left (2.02")), "{out}");
    }
    for n in MEMBERS {
        assert!(lab.groups(n).is_empty(), "member {n} still in a group");
    }

    // A member without /mc: the creation fails (5.02), the others are made to leave again,
    // and the next entity gets the next group address (none is reused).
    let out = lab.covey_in(
        CLIENT,
        &[
            "entity",
            "create",
            &gw,
            "partial",
            "--ect",
            "multicast",
            "--member",
            &member(MEMBERS[0]),
            "--member",
            &member(NO_MC),
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let line = stderr(&out);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("5.02"), "{line}");
    assert!(
        line.contains("not every member joined ff1e::89:2"),
        "{line}"
    );
    assert!(
        line.contains(&format!("rolled back: {} left", member(MEMBERS[0]))),
        "{line}"
    );
    assert!(lab.groups(MEMBERS[0]).is_empty());
    let out = lab.covey_ok(
        CLIENT,
        &[
            "entity",
            "create",
            &gw,
            "again",
            "--ect",
            "multicast",
            "--member",
            &members[0],
            "--member",
            &members[1],
        ],
    );
    assert!(
        out.contains("mcastURI: coap://[ff1e::89:3]/sensors/temp"),
        "{out}"
    );

    // The gateway killed (SIGKILL) and restarted on its database: the entity is back, its
    // members were asked to join again (re-verification), and it answers.
    lab.kill(GATEWAY);
    lab.start(GATEWAY, &gateway_args);
    lab.wait_until_serving(GATEWAY);
    let profile: serde_json::Value =
        serde_json::from_str(&lab.covey_ok(CLIENT, &["entity", "show", &gw, "again"])).unwrap();
    assert_eq!(profile["mcastURI"], "coap://[ff1e::89:3]/sensors/temp");
    assert!(profile.get("unjoined").is_none(), "{profile}");
    assert_eq!(lab.groups(MEMBERS[0]), ["ff1e::89:3"]);
    let out = lab.covey_ok(CLIENT, &["entity", "query", &gw, "again", "--eo", "count"]);
    assert_eq!(out, "2\nanswered: 2 of 2\n");
    lab.covey_ok(CLIENT, &["entity", "delete", &gw, "again"]);
    assert!(lab.groups(MEMBERS[0]).is_empty());

    let names = lab.namespaces.clone();
    drop(lab);
    let _ = std::fs::remove_file(&db);
    let left = netns_list();
    for name in names {
        assert!(!left.contains(&name), "namespace {name} was left behind");
    }
}

/// The unique local address of host `n`.
fn ula(n: usize) -> String {
    format!("fd00:c0f::{n:x}")
}

/// Namespaces, bridge and processes of one run; dropping it stops the processes and
/// deletes the namespaces (which deletes their veths and the bridge).
struct Lab {
    prefix: String,
    namespaces: Vec<String>,
    processes: Vec<(usize, Child, std::path::PathBuf)>,
}

impl Lab {
    fn new(prefix: &str) -> Lab {
        Lab {
            prefix: prefix.to_string(),
            namespaces: Vec::new(),
            processes: Vec::new(),
        }
    }

    fn host(&self, n: usize) -> String {
        format!("{}-h{n}", self.prefix)
    }

    fn add_namespace(&mut self, name: &str) {
        ip(&["netns", "add", name]);
        self.namespaces.push(name.to_string());
        ip(&["-n", name, "link", "set", "lo", "up"]);
    }

    /// The bridge namespace with `br0` (multicast snooping off: every group datagram is
    /// flooded), and hosts 1..=HOSTS each with `eth0` on it: fd00:c0f::N/64 without DAD and
    /// a route for ff00::/8 (global-scope groups) on eth0.
    fn build(&mut self) {
        let bridge = format!("{}-br", self.prefix);
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
        for n in 1..=HOSTS {
            let host = self.host(n);
            self.add_namespace(&host);
            let port = format!("v{n}");
            ip(&[
                "link", "add", &port, "netns", &bridge, "type", "veth", "peer", "name", "eth0",
                "netns", &host,
            ]);
            ip(&["-n", &bridge, "link", "set", &port, "master", "br0", "up"]);
            sysctl_in(&host, "net.ipv6.conf.all.disable_ipv6=0");
            sysctl_in(&host, "net.ipv6.conf.eth0.disable_ipv6=0");
            let cidr = format!("{}/64", ula(n));
            ip(&["-n", &host, "addr", "add", &cidr, "dev", "eth0", "nodad"]);
            ip(&["-n", &host, "link", "set", "eth0", "up"]);
            // The kernel adds `multicast ff00::/8 dev eth0 table local` when eth0 comes up;
            // make sure, since the group is not link-local and there is no default route.
            let _ = ip_quiet(&[
                "-n",
                &host,
                "-6",
                "route",
                "add",
                "multicast",
                "ff00::/8",
                "dev",
                "eth0",
                "table",
                "local",
            ]);
        }
    }

    /// Starts `covey ARGS` in host `n`, its standard error in a log file.
    fn start(&mut self, n: usize, args: &[&str]) {
        let log = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{}-h{n}.log", self.prefix));
        let file = std::fs::File::create(&log).expect("create a log");
        let child = Command::new("ip")
            .args(["netns", "exec", &self.host(n), env!("CARGO_BIN_EXE_covey")])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start covey in a namespace");
        self.processes.push((n, child, log));
    }

    /// Kills (SIGKILL) the processes of host `n`.
    fn kill(&mut self, n: usize) {
        for (m, child, _) in &mut self.processes {
            if *m == n {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    /// Polls host `n` with a unicast GET from the client (at most about 10 s).
    fn wait_until_serving(&mut self, n: usize) {
        let uri = format!("coap://[{}]:5683/.well-known/core", ula(n));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            // The last process started on host `n` is the one expected to serve.
            if let Some((_, child, _)) = self.processes.iter_mut().rev().find(|p| p.0 == n) {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("host {n} exited ({status}):\n{}", self.logs());
                }
            }
            if self
                .covey_in(CLIENT, &["get", "-B", "0.3", &uri])
                .status
                .success()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("host {n} did not answer:\n{}", self.logs());
    }

    /// Runs `covey ARGS` in host `n`, for at most 30 s.
    fn covey_in(&self, n: usize, args: &[&str]) -> Output {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.host(n), env!("CARGO_BIN_EXE_covey")])
            .args(args);
        run_limited(cmd, Duration::from_secs(30))
    }

    /// Standard output of `covey ARGS` in host `n`, which must succeed.
    #[track_caller]
    fn covey_ok(&self, n: usize, args: &[&str]) -> String {
        let out = self.covey_in(n, args);
        assert!(
            out.status.success(),
            "covey {args:?}: {:?}\n{}\n{}\n{}",
            out.status.code(),
            stdout(&out),
            stderr(&out),
            self.logs()
        );
        stdout(&out)
    }

    /// The groups member `n` lists at `/mc`.
    fn groups(&self, n: usize) -> Vec<String> {
        let uri = format!("coap://[{}]:5683/mc", ula(n));
        self.covey_ok(CLIENT, &["get", &uri])
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn logs(&self) -> String {
        self.processes
            .iter()
            .map(|(n, _, log)| {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                format!("--- host {n}:\n{text}")
            })
            .collect()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for (_, child, log) in &mut self.processes {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(log);
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
    let mut child = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
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
