//! What the gateway tests share: `covey gateway` in the background (its log kept, killed
//! on drop), scratch folders for its database, running `covey` with a time limit, and
//! SenML packs read back with serde_json and ciborium.

#![allow(dead_code)]

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::{covey, listening_lines, run_limited, stderr, stdout, START_LIMIT};

/// Longest any single `covey` command may take.
pub const LIMIT: Duration = Duration::from_secs(60);

/// A folder under the test target directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh, empty folder for test `tag`.
    pub fn new(tag: &str) -> Scratch {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("gateway-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a scratch folder");
        Scratch(path)
    }

    /// A path inside it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `covey gateway` on 127.0.0.1, killed (SIGKILL) when dropped.
pub struct GatewayProcess {
    child: Child,
    /// Its port.
    pub port: u16,
    log: PathBuf,
}

impl GatewayProcess {
    /// Starts a gateway on port 0 with database `db` and waits until it says where it
    /// listens and answers `GET /e`.
    pub fn start(db: &Path, extra: &[&str]) -> GatewayProcess {
        GatewayProcess::start_on(0, db, extra).unwrap_or_else(|e| panic!("covey gateway: {e}"))
    }

    /// Starts a gateway on `port` (0 for any) and waits until it says where it listens, then
    /// checks that `GET /e` answers.
    pub fn start_on(port: u16, db: &Path, extra: &[&str]) -> Result<GatewayProcess, String> {
        static SERIAL: AtomicUsize = AtomicUsize::new(0);
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let log = db.with_extension(format!("gateway-{serial}.log"));
        let file = std::fs::File::create(&log).expect("create the gateway log");
        let child = covey()
            .args(["gateway", "--bind", &format!("127.0.0.1:{port}"), "--db"])
            .arg(db)
            .args(extra)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start covey gateway");
        let mut g = GatewayProcess {
            child,
            port: 0,
            log,
        };
        g.port = g.wait_logged(|log| listening_lines(log).first().map(|l| l.port()))?;
        let out = covey_run(&["get", "-B", "2", &format!("{}/e", g.base())]);
        if !out.status.success() {
            return Err(format!("GET /e: {out:?}\n{}", g.log()));
        }
        Ok(g)
    }

    /// Waits (bounded) until `found` finds something in the log; an error if the gateway
    /// exits first or the time runs out.
    fn wait_logged<T>(&mut self, found: impl Fn(&str) -> Option<T>) -> Result<T, String> {
        let deadline = Instant::now() + START_LIMIT;
        loop {
            let log = self.log();
            if let Some(t) = found(&log) {
                return Ok(t);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited ({status}): {log}"));
            }
            if Instant::now() > deadline {
                return Err(format!("not started within {START_LIMIT:?}: {log}"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `coap://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("coap://127.0.0.1:{}", self.port)
    }

    /// The URI of entity `name`.
    pub fn entity_uri(&self, name: &str) -> String {
        format!("{}/e/{name}", self.base())
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills it with SIGKILL (no chance to clean up) and waits for it.
    pub fn kill_hard(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A UDP port that swallows every datagram: a member that never answers (and, unlike a
/// closed port, draws no ICMP error).
pub struct SilentMember {
    socket: UdpSocket,
    /// Its port.
    pub port: u16,
}

impl SilentMember {
    /// Binds one on 127.0.0.1.
    pub fn new() -> SilentMember {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let port = socket.local_addr().expect("address").port();
        SilentMember { socket, port }
    }

    /// Waits (bounded) until something asks it (a datagram arrives), which it leaves
    /// unanswered.
    pub fn wait_until_asked(&self) {
        self.socket
            .set_read_timeout(Some(START_LIMIT))
            .expect("a read timeout");
        let mut buf = [0u8; 1500];
        if let Err(e) = self.socket.recv_from(&mut buf) {
            panic!("nothing asked the silent member within {START_LIMIT:?}: {e}");
        }
    }
}

/// Runs `covey ARGS` (at most [`LIMIT`]).
pub fn covey_run(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

/// Runs `covey entity ARGS`.
pub fn entity(args: &[&str]) -> Output {
    let mut all = vec!["entity"];
    all.extend_from_slice(args);
    covey_run(&all)
}

/// Runs a command given as a prepared `Command` (at most [`LIMIT`]).
pub fn run(cmd: Command) -> Output {
    run_limited(cmd, LIMIT)
}

/// Standard output of a command that must have succeeded.
#[track_caller]
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        stdout(out),
        stderr(out)
    );
    stdout(out)
}

/// Checks that a command failed with exit code `code` and one line on standard error
/// containing every one of `needles`; returns that line.
#[track_caller]
pub fn fails(out: &Output, code: i32, needles: &[&str]) -> String {
    let err = stderr(out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}\nstderr: {err}",
        stdout(out)
    );
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in: {err}");
    }
    err
}

/// One SenML record after base-name resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `bn` + `n`.
    pub name: String,
    /// `v`.
    pub value: Option<f64>,
    /// `vs`.
    pub text: Option<String>,
    /// `bt` of this record, if it has one.
    pub base_time: Option<f64>,
    /// `t`.
    pub time: Option<f64>,
}

/// A SenML JSON pack (RFC 8428), read with serde_json.
pub fn senml_json(bytes: &[u8]) -> Vec<Record> {
    let pack: serde_json::Value = serde_json::from_slice(bytes).expect("SenML JSON");
    let records = pack.as_array().expect("a SenML pack is an array");
    resolve(records.iter().map(|r| {
        let r = r.as_object().expect("a SenML record is an object");
        Fields {
            bn: r.get("bn").and_then(|v| v.as_str()).map(str::to_string),
            bt: r.get("bt").and_then(|v| v.as_f64()),
            n: r.get("n").and_then(|v| v.as_str()).map(str::to_string),
            v: r.get("v").and_then(|v| v.as_f64()),
            vs: r.get("vs").and_then(|v| v.as_str()).map(str::to_string),
            t: r.get("t").and_then(|v| v.as_f64()),
        }
    }))
}

/// A SenML CBOR pack (RFC 8428 §6: labels bn -2, bt -3, n 0, v 2, vs 3, t 6), read with
/// ciborium.
pub fn senml_cbor(bytes: &[u8]) -> Vec<Record> {
    use ciborium::value::Value;
    let pack: Value = ciborium::de::from_reader(bytes).expect("SenML CBOR");
    let Value::Array(records) = pack else {
        panic!("a SenML pack is an array: {pack:?}");
    };
    let label = |k: &Value| match k {
        Value::Integer(i) => i64::try_from(i128::from(*i)).ok(),
        _ => None,
    };
    let number = |v: &Value| match v {
        Value::Integer(i) => Some(i128::from(*i) as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    let text = |v: &Value| match v {
        Value::Text(s) => Some(s.clone()),
        _ => None,
    };
    resolve(records.iter().map(|r| {
        let Value::Map(entries) = r else {
            panic!("a SenML record is a map: {r:?}");
        };
        let get = |l: i64| {
            entries
                .iter()
                .find(|(k, _)| label(k) == Some(l))
                .map(|e| &e.1)
        };
        Fields {
            bn: get(-2).and_then(text),
            bt: get(-3).and_then(number),
            n: get(0).and_then(text),
            v: get(2).and_then(number),
            vs: get(3).and_then(text),
            t: get(6).and_then(number),
        }
    }))
}

struct Fields {
    bn: Option<String>,
    bt: Option<f64>,
    n: Option<String>,
    v: Option<f64>,
    vs: Option<String>,
    t: Option<f64>,
}

fn resolve(records: impl Iterator<Item = Fields>) -> Vec<Record> {
    let mut base = String::new();
    records
        .map(|f| {
            if let Some(bn) = f.bn {
                base = bn;
            }
            Record {
                name: format!("{base}{}", f.n.unwrap_or_default()),
                value: f.v,
                text: f.vs,
                base_time: f.bt,
                time: f.t,
            }
        })
        .collect()
}

/// The operation `op` over `values`, as the EM computes it.
pub fn apply(op: &str, values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).expect("numbers"));
    match op {
        "avg" => values.iter().sum::<f64>() / values.len() as f64,
        "min" => sorted[0],
        "max" => sorted[sorted.len() - 1],
        "sum" => values.iter().sum(),
        "count" => values.len() as f64,
        "median" => {
            let n = sorted.len();
            if n % 2 == 1 {
                sorted[n / 2]
            } else {
                (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
            }
        }
        other => panic!("no operation {other}"),
    }
}

/// True when `a` and `b` agree to 1e-6.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * (1.0 + a.abs().max(b.abs()))
}

/// A gateway with its web console and HTTP proxy on a loopback port of its choosing (it says
/// which); the HTTP base URL.
pub fn gateway_with_http(db: &Path) -> (GatewayProcess, String) {
    gateway_with_http_and(db, &[])
}

/// [`gateway_with_http`] with `extra` flags.
pub fn gateway_with_http_and(db: &Path, extra: &[&str]) -> (GatewayProcess, String) {
    let args = [&["--http", "127.0.0.1:0"], extra].concat();
    let mut g = GatewayProcess::start(db, &args);
    // `web console and HTTP-CoAP proxy (/hc/) on http://ADDR/ (...)`
    let base = g
        .wait_logged(|log| {
            let rest = log.split_once("(/hc/) on http://")?.1;
            Some(format!("http://{}", rest.split_once('/')?.0))
        })
        .unwrap_or_else(|e| panic!("covey gateway with --http: {e}"));
    (g, base)
}
