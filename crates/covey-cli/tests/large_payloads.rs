//! Bodies beyond the block-wise limit: the client says which limit and which flag raises
//! it, a server's 4.13 names the server's limit, and with both limits raised the body makes
//! the round trip.

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr};

const LIMIT: Duration = Duration::from_secs(120);

/// 1 100 000 bytes: just over the default limit of 1 MiB.
const SIZE: usize = 1_100_000;

fn run(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

/// A file of `SIZE` printable bytes, removed on drop.
struct Body(PathBuf);

impl Body {
    fn new(tag: &str) -> Body {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("large-{tag}-{}.txt", std::process::id()));
        let text: String = (0..SIZE).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        std::fs::write(&path, text).expect("write the body");
        Body(path)
    }

    fn arg(&self) -> String {
        format!("@{}", self.0.display())
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn the_client_names_its_limit_and_the_flag_that_raises_it() {
    let body = Body::new("client");
    let out = run(&["put", "-e", &body.arg(), "coap://127.0.0.1:9/echo"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("1100000 bytes"), "{err}");
    assert!(err.contains("1048576-byte limit"), "{err}");
    assert!(err.contains("--max-body-size"), "{err}");
}

#[test]
fn a_server_limit_is_reported_with_its_size() {
    let body = Body::new("server");
    let (_server, port) = covey_server(&[]);
    let out = run(&[
        "put",
        "--max-body-size",
        "2000000",
        "-e",
        &body.arg(),
        &format!("coap://127.0.0.1:{port}/echo"),
    ]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("4.13"), "{err}");
    assert!(err.contains("at most 1048576 bytes"), "{err}");
}

#[test]
fn raised_limits_let_the_body_round_trip() {
    let body = Body::new("round-trip");
    let (_server, port) = covey_server(&["--max-body-size", "2000000"]);
    // The echoed megabyte goes to a file: a pipe nobody reads before exit would fill up.
    let echoed = body.0.with_extension("echoed");
    let mut cmd = covey();
    cmd.args([
        "put",
        "--max-body-size",
        "2000000",
        "-e",
        &body.arg(),
        &format!("coap://127.0.0.1:{port}/echo"),
    ])
    .stdout(std::fs::File::create(&echoed).expect("create the output file"));
    let mut child = cmd.spawn().expect("start covey put");
    let deadline = std::time::Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for covey put") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("covey put of {SIZE} bytes took longer than {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let got = std::fs::read(&echoed).expect("read the echo");
    let _ = std::fs::remove_file(&echoed);
    assert!(status.success(), "{status}");
    assert_eq!(got.len(), SIZE);
    assert!(
        got == std::fs::read(&body.0).expect("read the body"),
        "the echo differs"
    );
}

/// `-b SIZE` asks the server for blocks of that size from the first request (RFC 7959
/// §2.4), as libcoap's `coap-client -b` does: `covey serve`'s 2 KiB `/large` comes in 64-byte
/// blocks and whole.
#[test]
fn the_block_size_flag_asks_the_server_for_smaller_blocks() {
    let (_server, port) = covey_server(&[]);
    let uri = format!("coap://127.0.0.1:{port}/large");
    let out = run(&["get", "-v", "-b", "64", &uri]);
    assert!(out.status.success(), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("Block2: 0/0/64"),
        "asked for 64-byte blocks:\n{err}"
    );
    assert!(
        err.contains("Block2: 31/0/64"),
        "the last of 32 blocks:\n{err}"
    );
    let body = String::from_utf8_lossy(&out.stdout);
    assert_eq!(body.trim_end().len(), 2048, "{body}");
}
