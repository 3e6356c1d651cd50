//! What the gateway tests share: `covey gateway` in the background (its log kept, killed
//! on drop), scratch folders for its database, running `covey` with a time limit, and
//! SenML packs read back with serde_json and ciborium.

#![allow(dead_code)]

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{covey, free_port, run_limited, stderr, stdout};

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
    /// Starts a gateway on a free port with database `db` and waits until it answers.
    pub fn start(db: &Path, extra: &[&str]) -> GatewayProcess {
        let mut last = String::new();
        for _ in 0..5 {
            match GatewayProcess::start_on(free_port(), db, extra) {
                Ok(g) => return g,
                Err(e) => last = e,
            }
        }
        panic!("covey gateway did not come up: {last}");
    }

    /// Starts a gateway on `port` and waits (at most about 10 s) until `GET /e` answers.
    pub fn start_on(port: u16, db: &Path, extra: &[&str]) -> Result<GatewayProcess, String> {
        let log = db.with_extension(format!("gateway-{port}.log"));
        let file = std::fs::File::create(&log).expect("create the gateway log");
        let child = covey()
            .args(["gateway", "--bind", &format!("127.0.0.1:{port}"), "--db"])
            .arg(db)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start covey gateway");
        let mut g = GatewayProcess { child, port, log };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = g.child.try_wait() {
                return Err(format!("exited ({status}): {}", g.log()));
            }
            let out = covey_run(&["get", "-B", "0.3", &format!("{}/e", g.base())]);
            if out.status.success() {
                return Ok(g);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!("no answer: {}", g.log()))
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
    _socket: UdpSocket,
    /// Its port.
    pub port: u16,
}

impl SilentMember {
    /// Binds one on 127.0.0.1.
    pub fn new() -> SilentMember {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let port = socket.local_addr().expect("address").port();
        SilentMember {
            _socket: socket,
            port,
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

/// A TCP port that was free a moment ago on 127.0.0.1.
pub fn free_tcp_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral TCP port");
    l.local_addr().expect("local address").port()
}

/// A gateway with its web console and HTTP proxy on a free loopback port; the HTTP base URL.
pub fn gateway_with_http(db: &Path) -> (GatewayProcess, String) {
    gateway_with_http_and(db, &[])
}

/// The same, with `extra` arguments for the gateway.
pub fn gateway_with_http_and(db: &Path, extra: &[&str]) -> (GatewayProcess, String) {
    let mut last = String::new();
    for _ in 0..5 {
        let http = free_tcp_port();
        let addr = format!("127.0.0.1:{http}");
        let args: Vec<&str> = ["--http", addr.as_str()]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        match GatewayProcess::start_on(free_port(), db, &args) {
            Ok(g) if g.log().contains(&format!("http://{addr}/")) => {
                return (g, format!("http://{addr}"))
            }
            Ok(g) => last = g.log(),
            Err(e) => last = e,
        }
    }
    panic!("covey gateway did not come up with --http: {last}");
}
