//! What `covey serve -v` and `covey gateway -v` write when their output goes to a file: no
//! colour codes, and one line per request with peer, method, path, code and time.

mod support;

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::{covey, listening_lines, run_limited, Listening, START_LIMIT};

/// A server whose standard output and error go to one file (`> f 2>&1`), killed on drop.
struct Logged {
    child: Child,
    log: PathBuf,
    port: u16,
}

impl Logged {
    /// Starts `covey ARGS --bind 127.0.0.1:0` and waits until it says where it listens (the
    /// `--bind` address and one per `--bind-plain`).
    fn start(args: &[&str], tag: &str) -> Logged {
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("server-log-{tag}-{}.log", std::process::id()));
        let file = std::fs::File::create(&log).expect("create the log");
        let child = covey()
            .args(args)
            .args(["--bind", "127.0.0.1:0"])
            .env_remove("NO_COLOR")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("clone the log file"))
            .stderr(file)
            .spawn()
            .expect("start the server");
        let mut logged = Logged {
            child,
            log,
            port: 0,
        };
        let count = 1 + args.iter().filter(|a| **a == "--bind-plain").count();
        logged.port = logged.listening(count)[0].port();
        logged
    }

    /// Waits (bounded) until the log has `count` `listening on` lines; returns them.
    fn listening(&mut self, count: usize) -> Vec<Listening> {
        let deadline = Instant::now() + START_LIMIT;
        loop {
            let found = listening_lines(&self.text());
            if found.len() >= count {
                return found;
            }
            assert!(
                matches!(self.child.try_wait(), Ok(None)),
                "the server exited:\n{}",
                self.text()
            );
            assert!(Instant::now() < deadline, "not listening:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `covey get URI` until the log has a line containing every one of `wanted`.
    fn request_until_logged(&self, path: &str, wanted: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let mut get = covey();
            get.args([
                "get",
                "-B",
                "1",
                &format!("coap://127.0.0.1:{}{path}", self.port),
            ]);
            let _ = run_limited(get, Duration::from_secs(10));
            let text = self.text();
            if let Some(line) = text.lines().find(|l| wanted.iter().all(|w| l.contains(w))) {
                return line.to_string();
            }
            assert!(
                Instant::now() < deadline,
                "no request line with {wanted:?} in the log:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Logged {
    /// Waits (bounded) until the log has a line containing `wanted`, and returns it.
    fn line_with(&self, wanted: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let text = self.text();
            if let Some(line) = text.lines().find(|l| l.contains(wanted)) {
                return line.to_string();
            }
            assert!(
                Instant::now() < deadline,
                "no {wanted:?} in the log:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// `peer METHOD /path -> CODE in N ms`, e.g. `127.0.0.1:4000 GET /time -> 2.05 Content in 0.1 ms`.
fn assert_request_line(line: &str, method: &str, path: &str, code: &str) {
    let expected_middle = format!(" {method} {path} -> {code} in ");
    assert!(line.contains("127.0.0.1:"), "no peer in {line:?}");
    assert!(line.contains(&expected_middle), "{line:?}");
    assert!(line.trim_end().ends_with(" ms"), "no time in {line:?}");
}

#[test]
fn serve_logs_each_request_without_colour_into_a_file() {
    let server = Logged::start(&["serve", "-v"], "serve");
    let line = server.request_until_logged("/sensors/temp", &["/sensors/temp"]);
    assert_request_line(&line, "GET", "/sensors/temp", "2.05 Content");
    let line = server.request_until_logged("/nope", &["/nope"]);
    assert_request_line(&line, "GET", "/nope", "4.04 Not Found");
    let text = server.text();
    assert!(
        !text.contains('\u{1b}'),
        "colour codes in a file:\n{text:?}"
    );
    assert!(text.contains("listening on 127.0.0.1:"), "{text}");
}

#[test]
fn serve_logs_the_block_of_each_request_of_a_transfer() {
    let server = Logged::start(&["serve", "-v"], "blocks");
    let large = format!("coap://127.0.0.1:{}/large", server.port);
    let mut get = covey();
    // Block2 0/64 in the first request: the server answers in 64-byte blocks.
    get.args(["get", "-b", "64", "-O", "block2,2", &large]);
    let out = run_limited(get, Duration::from_secs(30));
    assert!(out.status.success(), "{out:?}");
    // 2048 bytes in 64-byte blocks: 32 requests, each line naming its block.
    let last = server.line_with("GET /large [Block2 #31 of 64 B]");
    assert_request_line(&last, "GET", "/large [Block2 #31 of 64 B]", "2.05 Content");
    let text = server.text();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(" GET /large")).collect();
    for num in 0..32 {
        let tag = format!("GET /large [Block2 #{num} of 64 B] ->");
        assert_eq!(
            lines.iter().filter(|l| l.contains(&tag)).count(),
            1,
            "{tag} in:\n{text}"
        );
    }

    // An upload in 64-byte blocks: Block1 numbers, with "more" on all but the last.
    let echo = format!("coap://127.0.0.1:{}/echo", server.port);
    let mut put = covey();
    put.args(["put", "-b", "64", "-e", &"x".repeat(200), &echo]);
    let out = run_limited(put, Duration::from_secs(30));
    assert!(out.status.success(), "{out:?}");
    let line = server.line_with("PUT /echo [Block1 #3 of 64 B]");
    assert_request_line(&line, "PUT", "/echo [Block1 #3 of 64 B]", "2.04 Changed");
    let text = server.text();
    for num in 0..3 {
        let tag = format!("PUT /echo [Block1 #{num} of 64 B, more] -> 2.31 Continue");
        assert!(text.contains(&tag), "{tag} in:\n{text}");
    }
}

#[test]
fn serve_without_v_logs_no_requests() {
    let server = Logged::start(&["serve"], "quiet");
    // Two answered requests: the server handles them in turn, so whatever it would log for
    // the first is in the file once the second is answered.
    for _ in 0..2 {
        let mut get = covey();
        get.args(["get", &format!("coap://127.0.0.1:{}/time", server.port)]);
        let out = run_limited(get, Duration::from_secs(10));
        assert!(out.status.success(), "{out:?}");
    }
    let text = server.text();
    assert!(text.contains("listening on"), "{text}");
    assert!(!text.contains(" GET /time"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

#[test]
fn serve_with_keys_names_the_scheme_of_each_address() {
    let keys = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("server-log-keys-{}.txt", std::process::id()));
    std::fs::write(&keys, "ward-3:secret-key\n").unwrap();
    let keys_arg = keys.to_string_lossy().into_owned();
    let mut server = Logged::start(
        &[
            "serve",
            "--psk-file",
            &keys_arg,
            "--bind-plain",
            "127.0.0.1:0",
        ],
        "mixed",
    );
    let listening = server.listening(2);
    let text = server.text();
    let _ = std::fs::remove_file(&keys);
    // The --bind address first, as coaps, then the plain one, as coap.
    let coaps = format!("listening on 127.0.0.1:{} (coaps)", server.port);
    assert!(text.contains(&coaps), "{text}");
    let plain = &listening[1];
    assert_eq!(plain.scheme, "coap", "{text}");
    assert!(
        plain.addr.ip().is_loopback() && plain.port() != server.port,
        "{text}"
    );
    assert!(
        text.contains(&format!("listening on {} (coap)", plain.addr)),
        "{text}"
    );
    // ... and that one answers in the clear.
    let mut get = covey();
    get.args(["get", &format!("coap://{}/time", plain.addr)]);
    assert!(run_limited(get, Duration::from_secs(10)).status.success());
}

#[test]
fn gateway_logs_each_request_without_colour_into_a_file() {
    let db = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("server-log-gateway-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let db_arg = db.to_string_lossy().into_owned();
    let gateway = Logged::start(&["gateway", "-v", "--db", &db_arg], "gateway");
    let line = gateway.request_until_logged("/e", &[" /e "]);
    assert_request_line(&line, "GET", "/e", "2.05 Content");
    let text = gateway.text();
    assert!(
        !text.contains('\u{1b}'),
        "colour codes in a file:\n{text:?}"
    );
    drop(gateway);
    let _ = std::fs::remove_file(&db);
}
