//! Running `covey` and peer binaries in tests: servers started on port 0 that say where they
//! listen, background processes killed on drop, and bounded waits.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The longest a server may take to say where it listens.
pub const START_LIMIT: Duration = Duration::from_secs(15);

/// The binary under test.
pub fn covey() -> Command {
    Command::new(env!("CARGO_BIN_EXE_covey"))
}

/// A peer binary, or a failure naming the Debian package that provides it.
pub fn peer(binary: &str, package: &str) -> Command {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join(binary).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "{binary} not found: install the Debian package {package} (apt-get install {package})"
    );
    Command::new(binary)
}

/// A background process killed when dropped.
pub struct Background {
    child: Child,
    /// Where its standard error goes, when kept ([`Background::start_logged`]).
    log: Option<PathBuf>,
}

impl Background {
    /// Starts `command` with its output discarded.
    pub fn start(mut command: Command) -> Background {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start background process");
        Background { child, log: None }
    }

    /// Starts `command` with its standard error in a file of its own (read with
    /// [`Background::log`], removed on drop) and its standard output discarded.
    pub fn start_logged(mut command: Command) -> Background {
        static SERIAL: AtomicUsize = AtomicUsize::new(0);
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "background-{}-{}.log",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        ));
        let file = std::fs::File::create(&log).expect("create the log");
        let child = command
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start background process");
        Background {
            child,
            log: Some(log),
        }
    }

    /// True while it runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// What it wrote to standard error so far (empty unless started logged).
    pub fn log(&self) -> String {
        self.log
            .as_ref()
            .and_then(|l| std::fs::read_to_string(l).ok())
            .unwrap_or_default()
    }

    /// Waits (bounded) until a `covey serve` or `covey gateway` started logged has said where
    /// it listens, `count` addresses, and returns them in the order printed. Fails if it exits
    /// first.
    pub fn listening(&mut self, count: usize) -> Vec<Listening> {
        assert!(self.log.is_some(), "start the server with start_logged");
        let deadline = Instant::now() + START_LIMIT;
        loop {
            let found = listening_lines(&self.log());
            if found.len() >= count {
                return found;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the server exited ({status}) before listening:\n{}",
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "the server did not say where it listens within {START_LIMIT:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (bounded) until its log has a line containing `needle`, and returns that line.
    pub fn logged(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + START_LIMIT;
        loop {
            if let Some(line) = self.log().lines().find(|l| l.contains(needle)) {
                return line.to_string();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "exited ({status}) before logging {needle:?}:\n{}",
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "no {needle:?} in the log within {START_LIMIT:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(log) = &self.log {
            let _ = std::fs::remove_file(log);
        }
    }
}

/// An address a server listens on, from its start-up line `listening on ADDR (SCHEME)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listening {
    pub addr: SocketAddr,
    /// `coap` or `coaps`.
    pub scheme: String,
}

impl Listening {
    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
}

/// The `listening on ADDR (SCHEME)` lines of a server's log, in order.
pub fn listening_lines(log: &str) -> Vec<Listening> {
    log.lines()
        .filter_map(|line| {
            let rest = line.split_once("listening on ")?.1;
            let (addr, scheme) = rest.split_once(' ')?;
            Some(Listening {
                addr: addr.parse().ok()?,
                scheme: scheme.trim().trim_matches(['(', ')']).to_string(),
            })
        })
        .collect()
}

/// Starts `covey serve --bind 127.0.0.1:0` with `extra` flags and waits until it says where
/// it listens: the address `--bind` gave first, then one per `--bind-plain`.
pub fn covey_serve(extra: &[&str]) -> (Background, Vec<Listening>) {
    let mut cmd = covey();
    cmd.args(["serve", "--bind", "127.0.0.1:0"]).args(extra);
    let mut server = Background::start_logged(cmd);
    let count = 1 + extra.iter().filter(|a| **a == "--bind-plain").count();
    let listening = server.listening(count);
    (server, listening)
}

/// [`covey_serve`] when only the `--bind` address matters: its port.
pub fn covey_server(extra: &[&str]) -> (Background, u16) {
    let (server, listening) = covey_serve(extra);
    (server, listening[0].port())
}

/// The ports of the UDP sockets process `pid` holds, read from /proc (its socket inodes
/// against /proc/net/udp and udp6): how a test learns where a peer it started on port 0
/// (libcoap, aiocoap) listens when the peer does not print it.
pub fn udp_ports_of(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|t| {
                    let t = t.to_string_lossy().into_owned();
                    Some(t.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    let mut ports = Vec::new();
    for table in ["/proc/net/udp", "/proc/net/udp6"] {
        for line in std::fs::read_to_string(table)
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(inode)) = (fields.get(1), fields.get(9)) else {
                continue;
            };
            if inodes.iter().any(|i| i == inode) {
                let port = local
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok());
                // A socket made but not yet bound shows port 0.
                ports.extend(port.filter(|p| *p != 0));
            }
        }
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// Waits (bounded) until `process` holds a UDP socket, and returns its port; fails if the
/// process exits first or holds more than one.
pub fn udp_port_of(process: &mut Background) -> u16 {
    let deadline = Instant::now() + START_LIMIT;
    loop {
        let ports = udp_ports_of(process.id());
        match ports[..] {
            [port] => return port,
            [] => {}
            _ => panic!(
                "process {} holds several UDP ports: {ports:?}",
                process.id()
            ),
        }
        assert!(process.running(), "the process exited before binding");
        assert!(
            Instant::now() < deadline,
            "the process bound no UDP port within {START_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Bytes waiting in the receive queue of the UDP socket bound to 127.0.0.1:`port`, from
/// /proc/net/udp; `None` when there is no such socket.
pub fn udp_queued_bytes(port: u16) -> Option<u64> {
    let local = format!("0100007F:{port:04X}");
    std::fs::read_to_string("/proc/net/udp")
        .ok()?
        .lines()
        .skip(1)
        .find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(1) != Some(&local.as_str()) {
                return None;
            }
            let rx = fields.get(4)?.split_once(':')?.1;
            u64::from_str_radix(rx, 16).ok()
        })
}

/// Waits (bounded) until the server on 127.0.0.1:`port` has read every datagram sent to it
/// so far (its socket's receive queue is empty): what was sent before has been taken in
/// before anything sent after.
pub fn wait_until_read(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match udp_queued_bytes(port) {
            Some(0) => return,
            Some(queued) => assert!(
                Instant::now() < deadline,
                "{queued} bytes still queued at port {port}"
            ),
            None => panic!("no socket on 127.0.0.1:{port}"),
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `command` with a hard time limit, returning its output.
pub fn run_limited(mut command: Command, limit: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().expect("collect output");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collect output");
            panic!("{command:?} ran longer than {limit:?}: {out:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
