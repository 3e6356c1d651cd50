//! A second server on a busy UDP port refuses to start, with one line and a non-zero exit,
//! unless both were asked to share the port.

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr, Background};

const LIMIT: Duration = Duration::from_secs(20);

fn second(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

fn assert_refused(out: &Output, port: u16) {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "covey: cannot bind 127.0.0.1:{port}: the port is already in use"
        )),
        "{err}"
    );
    assert!(err.contains("--reuse-port"), "{err}");
}

#[test]
fn second_serve_on_a_busy_port_refuses() {
    let (_first, port) = covey_server(&[]);
    let out = second(&["serve", "--bind", &format!("127.0.0.1:{port}")]);
    assert_refused(&out, port);
    // Asking to share is not enough when the first server did not.
    let out = second(&[
        "serve",
        "--reuse-port",
        "--bind",
        &format!("127.0.0.1:{port}"),
    ]);
    assert_refused(&out, port);
}

#[test]
fn gateway_on_a_busy_port_refuses() {
    let (_server, port) = covey_server(&[]);
    let db = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("port-in-use-{}.db", std::process::id()));
    let out = second(&[
        "gateway",
        "--bind",
        &format!("127.0.0.1:{port}"),
        "--db",
        &db.to_string_lossy(),
    ]);
    let _ = std::fs::remove_file(&db);
    assert_refused(&out, port);
}

#[test]
fn servers_that_all_share_the_port_start() {
    let (mut first, port) = covey_server(&["--reuse-port"]);
    let mut cmd = covey();
    cmd.args([
        "serve",
        "--reuse-port",
        "--bind",
        &format!("127.0.0.1:{port}"),
    ]);
    let mut second = Background::start_logged(cmd);
    // Saying where it listens means it bound the shared port (a refusal exits instead).
    let shared = second.listening(1);
    assert_eq!(shared[0].port(), port);
    assert!(second.running(), "the sharing server exited");
    assert!(first.running());
}

#[test]
fn a_free_port_can_be_bound_again_at_once() {
    // No SO_REUSEADDR needed for a quick restart: UDP ports are free as soon as closed.
    let (first, port) = covey_server(&[]);
    drop(first); // killed and waited for
    let mut cmd = covey();
    cmd.args(["serve", "--bind", &format!("127.0.0.1:{port}")]);
    let mut again = Background::start_logged(cmd);
    // It says where it listens once bound; a busy port would make it exit with an error.
    let listening = again.listening(1);
    assert_eq!(listening[0].port(), port, "restart on {port} failed");
    assert!(again.running(), "restart on {port} failed");
}
