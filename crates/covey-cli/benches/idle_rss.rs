//! The resident memory of `covey serve` and `covey gateway` when idle, against their
//! targets (4 MiB and 6 MiB) and libcoap's server measured in the same run. The targets are
//! for the release artifacts `scripts/dist.sh` writes (run it first); the programs as cargo
//! links them are measured beside. Fails when a target is missed.
//! `scripts/dist.sh && cargo bench -p covey-cli --bench idle_rss --profile release`.

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The target for `covey serve`'s idle RSS (KiB).
const SERVE_TARGET_KIB: u64 = 4 * 1024;
/// The target for `covey gateway`'s idle RSS (KiB).
const GATEWAY_TARGET_KIB: u64 = 6 * 1024;

/// A server process, killed on drop.
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `program args` with `-v` and waits for its "listening on ADDR (coap)" line; the
/// server and the UDP address it bound.
fn start(name: &'static str, program: &str, args: &[&str]) -> (Server, String) {
    let mut child = Command::new(program)
        .args(args)
        .arg("-v")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let stderr = child.stderr.take().expect("stderr");
    let server = Server { child };
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = match lines.next() {
            Some(Ok(line)) => line,
            _ => panic!("{name} ended before listening"),
        };
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().expect("address").to_string();
        }
    };
    // Keep draining stderr so that logging never blocks the server.
    std::thread::spawn(move || lines.for_each(drop));
    (server, addr)
}

/// One CON GET `path` to `addr`; an error without a 2.05 within `wait`.
fn get(addr: &str, path: &str, wait: Duration) -> Result<(), String> {
    let socket = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    socket
        .set_read_timeout(Some(wait))
        .map_err(|e| e.to_string())?;
    let mut request = vec![0x40, 0x01, 0x12, 0x34];
    let mut delta_base = 0;
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        assert!(segment.len() < 13, "short segments only");
        request.push(((11 - delta_base) << 4) as u8 | segment.len() as u8);
        request.extend_from_slice(segment.as_bytes());
        delta_base = 11;
    }
    socket.send_to(&request, addr).map_err(|e| e.to_string())?;
    let mut reply = [0u8; 1500];
    let n = socket
        .recv(&mut reply)
        .map_err(|e| format!("{path}: {e}"))?;
    if n >= 4 && reply[1] == 0x45 {
        Ok(())
    } else {
        Err(format!("{path}: expected 2.05, got {:?}", &reply[..n]))
    }
}

/// `VmRSS` of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The idle RSS of a started server: after one request and a second of rest.
fn idle_rss(server: &Server, addr: &str, path: &str) -> u64 {
    get(addr, path, Duration::from_secs(5)).unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_secs(1));
    rss_kib(server.child.id())
}

/// libcoap's server on a loopback port, if installed: its idle RSS.
fn libcoap_rss() -> Option<u64> {
    let port = UdpSocket::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = Command::new("coap-server-notls")
        .args(["-A", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server { child };
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(5);
    // libcoap prints nothing when ready: ask until it answers.
    while get(&addr, "/", Duration::from_millis(200)).is_err() {
        if Instant::now() > deadline {
            return None;
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    Some(rss_kib(server.child.id()))
}

/// The idle RSS (KiB) of `covey serve` and `covey gateway`, run from the program `covey`.
fn measure(covey: &str) -> (u64, u64) {
    let db = std::env::temp_dir().join(format!("covey-idle-rss-{}.db", std::process::id()));
    let db_arg = db.to_string_lossy().into_owned();

    let (serve, serve_addr) = start("covey serve", covey, &["serve", "--bind", "127.0.0.1:0"]);
    let serve_kib = idle_rss(&serve, &serve_addr, "/time");
    drop(serve);

    let (gateway, gateway_addr) = start(
        "covey gateway",
        covey,
        &[
            "gateway",
            "--bind",
            "127.0.0.1:0",
            "--db",
            &db_arg,
            "--http",
            "127.0.0.1:0",
        ],
    );
    let gateway_kib = idle_rss(&gateway, &gateway_addr, "/e");
    drop(gateway);
    let _ = std::fs::remove_file(&db);
    (serve_kib, gateway_kib)
}

/// The release artifacts `scripts/dist.sh` wrote (static, start-up code first, stripped):
/// `COVEY_DIST` or the workspace's target/dist.
fn dist_covey() -> std::path::PathBuf {
    let dir = std::env::var_os("COVEY_DIST").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/dist"),
        std::path::PathBuf::from,
    );
    let covey = dir.join("covey");
    if !covey.is_file() {
        eprintln!(
            "no release artifacts in {}: run scripts/dist.sh first (the targets are the \
             programs it ships)",
            dir.display()
        );
        std::process::exit(2);
    }
    covey
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument is a filter this bench ignores.
    let dist = dist_covey();
    let (serve_kib, gateway_kib) = measure(&dist.to_string_lossy());
    // The programs as `cargo build --release` links them (dynamic, default layout), for
    // comparison: what `cargo run --release` gives.
    let (cargo_serve_kib, cargo_gateway_kib) = measure(env!("CARGO_BIN_EXE_covey"));

    let libcoap = libcoap_rss();
    let ratio = |kib: u64| {
        libcoap.map_or(String::new(), |l| {
            format!(" ({:.1}x libcoap)", kib as f64 / l as f64)
        })
    };
    println!(
        "idle RSS (VmRSS after one request and 1 s of rest) of the release artifacts in {}:",
        dist.parent()
            .map_or(String::new(), |d| d.display().to_string())
    );
    println!(
        "  covey serve    {serve_kib:6} KiB{}  target <= {SERVE_TARGET_KIB} KiB",
        ratio(serve_kib)
    );
    println!(
        "  covey gateway  {gateway_kib:6} KiB{}  target <= {GATEWAY_TARGET_KIB} KiB",
        ratio(gateway_kib)
    );
    println!(
        "  as cargo links them: serve {cargo_serve_kib} KiB{}, gateway {cargo_gateway_kib} KiB{}",
        ratio(cargo_serve_kib),
        ratio(cargo_gateway_kib)
    );
    match libcoap {
        Some(l) => println!("  libcoap server {l:6} KiB (coap-server-notls)"),
        None => println!("  libcoap server not measured (coap-server-notls not installed)"),
    }
    let mut missed = Vec::new();
    for (name, kib, target) in [
        ("covey serve", serve_kib, SERVE_TARGET_KIB),
        ("covey gateway", gateway_kib, GATEWAY_TARGET_KIB),
    ] {
        if kib > target {
            missed.push(format!("{name}: {kib} KiB > {target} KiB"));
        }
    }
    if !missed.is_empty() {
        eprintln!("idle RSS target missed: {}", missed.join("; "));
        std::process::exit(1);
    }
}
