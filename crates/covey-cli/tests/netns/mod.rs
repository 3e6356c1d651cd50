//! Network namespaces for multicast tests: hosts on one bridge (itself in a namespace, so the
//! host's own network is untouched), `covey` run in them, and everything removed on drop.
//! Needs root (CAP_NET_ADMIN) and iproute2; include it next to `mod support;`.

#![allow(dead_code)]

use std::net::Ipv6Addr;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{run_limited, stderr, stdout};

/// The longest any single `ip` command may take.
pub const IP_LIMIT: Duration = Duration::from_secs(10);

/// The unique local address fd00:SUBNET::N of host `n`.
pub fn ula(subnet: u16, n: usize) -> Ipv6Addr {
    Ipv6Addr::new(0xfd00, subnet, 0, 0, 0, 0, 0, n as u16)
}

/// Namespaces on one bridge and the processes in them, stopped and deleted on drop.
pub struct Lab {
    prefix: String,
    /// Created namespaces, in creation order.
    pub namespaces: Vec<String>,
    /// Started processes: host number, process, log of its standard error.
    processes: Vec<(usize, Child, PathBuf)>,
    /// The longest `covey_in` lets `covey` run.
    covey_limit: Duration,
}

impl Lab {
    /// An empty lab whose namespaces are named after `prefix`.
    pub fn new(prefix: &str, covey_limit: Duration) -> Lab {
        Lab {
            prefix: prefix.to_string(),
            namespaces: Vec::new(),
            processes: Vec::new(),
            covey_limit,
        }
    }

    /// The namespace of host `n`.
    pub fn host(&self, n: usize) -> String {
        format!("{}-h{n}", self.prefix)
    }

    fn add_namespace(&mut self, name: &str) {
        ip(&["netns", "add", name]);
        self.namespaces.push(name.to_string());
        ip(&["-n", name, "link", "set", "lo", "up"]);
    }

    /// A bridge `br0` (no snooping: groups flood) and hosts 1..=`hosts` on it; `configure` sets up their `eth0`.
    pub fn build(&mut self, hosts: usize, configure: impl Fn(&str, usize)) {
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
        for n in 1..=hosts {
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
            configure(&host, n);
        }
    }

    /// `build` with each host's `eth0` up at fd00:`subnet`::N/64 and fe80::N/64 (no duplicate
    /// address detection, no other addresses).
    pub fn build_ipv6(&mut self, hosts: usize, subnet: u16) {
        self.build(hosts, |host, n| {
            ip(&["-n", host, "link", "set", "eth0", "addrgenmode", "none"]);
            let cidr = format!("{}/64", ula(subnet, n));
            ip(&["-n", host, "addr", "add", &cidr, "dev", "eth0", "nodad"]);
            let link_local = format!("fe80::{n}/64");
            ip(&[
                "-n",
                host,
                "addr",
                "add",
                &link_local,
                "dev",
                "eth0",
                "nodad",
            ]);
            ip(&["-n", host, "link", "set", "eth0", "up"]);
        });
    }

    /// Starts `covey ARGS` in host `n`, its standard error in a log file of its own.
    pub fn start(&mut self, n: usize, args: &[&str]) {
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "{}-h{n}-{}.log",
            self.prefix,
            self.processes.len()
        ));
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
    pub fn kill(&mut self, n: usize) {
        for (m, child, _) in &mut self.processes {
            if *m == n {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    /// Waits (bounded) until the process started last says where it listens (`listening on`
    /// in its log): it has bound its sockets. Fails if it exits first.
    pub fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (n, child, log) = self.processes.last_mut().expect("a process started");
            if std::fs::read_to_string(&*log)
                .unwrap_or_default()
                .contains("listening on")
            {
                return;
            }
            if let Ok(Some(status)) = child.try_wait() {
                let n = *n;
                panic!("host {n} exited ({status}):\n{}", self.logs());
            }
            assert!(Instant::now() < deadline, "not listening:\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Polls host `n` at `addr` with a unicast GET from host `from` (at most about 10 s).
    pub fn wait_until_serving(&mut self, n: usize, addr: Ipv6Addr, from: usize) {
        let uri = format!("coap://[{addr}]:5683/.well-known/core");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            // The last process started on host `n` is the one expected to serve.
            if let Some((_, child, _)) = self.processes.iter_mut().rev().find(|p| p.0 == n) {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("host {n} exited ({status}):\n{}", self.logs());
                }
            }
            if self
                .covey_in(from, &["get", "-B", "0.3", &uri])
                .status
                .success()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("host {n} did not answer:\n{}", self.logs());
    }

    /// Runs `covey ARGS` in host `n`, for at most the lab's limit.
    pub fn covey_in(&self, n: usize, args: &[&str]) -> Output {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.host(n), env!("CARGO_BIN_EXE_covey")])
            .args(args);
        run_limited(cmd, self.covey_limit)
    }

    /// The standard error of every process started, host by host.
    pub fn logs(&self) -> String {
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
pub fn ip(args: &[&str]) {
    if let Err(e) = ip_quiet(args) {
        panic!("{e}");
    }
}

/// Runs `ip ARGS` with a time limit, without panicking (for cleanup).
pub fn ip_quiet(args: &[&str]) -> Result<String, String> {
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
pub fn sysctl_in(ns: &str, setting: &str) {
    ip(&["netns", "exec", ns, "sysctl", "-qw", setting]);
}

/// The names `ip netns list` shows.
pub fn netns_list() -> Vec<String> {
    ip_quiet(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Whether the test runs as root (effective user id 0).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}
