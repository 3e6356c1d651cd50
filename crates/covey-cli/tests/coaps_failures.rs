//! What a coaps:// client says when it gets no session, and soon: a wrong key is refused by
//! the server's alert at once, a port with nothing there or a silent one gives the hint "no
//! coaps server there", never the request's overall timeout; and a certificate with a key
//! that is not its own is refused at start, by servers and clients alike.

mod support;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr};

const LIMIT: Duration = Duration::from_secs(60);

fn run(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

/// The certificates and keys of covey's own DTLS tests.
fn testdata(name: &str) -> String {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../covey/src/dtls/testdata");
    dir.join(name).display().to_string()
}

/// Asserts a one-line failure that is not the request's own timeout.
fn fails_without_timing_out(out: &Output) -> String {
    let err = stderr(out);
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("no response"), "the overall timeout: {err}");
    assert!(
        err.contains("DTLS handshake") || err.contains("unreachable"),
        "{err}"
    );
    err
}

#[test]
fn a_wrong_key_is_refused_by_the_server_at_once() {
    let keys = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("coaps-failures-{}.txt", std::process::id()));
    std::fs::write(&keys, "ward-3:secret-key\n").unwrap();
    let (_server, port) = covey_server(&["--psk-file", &keys.display().to_string()]);
    let uri = format!("coaps://127.0.0.1:{port}/time");
    let out = run(&["get", "-u", "ward-3", "-k", "wrong-key", &uri]);
    let err = fails_without_timing_out(&out);
    assert!(
        err.contains("the server refused the handshake (decrypt_error, 51): a wrong key"),
        "{err}"
    );
    // The server still serves the right key.
    let out = run(&["get", "-u", "ward-3", "-k", "secret-key", &uri]);
    assert!(out.status.success(), "{out:?}");
    let _ = std::fs::remove_file(&keys);
}

#[test]
fn nothing_listening_gives_the_hint() {
    let port = UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .unwrap()
        .port();
    let uri = format!("coaps://127.0.0.1:{port}/time");
    let out = run(&["get", "-u", "ward-3", "-k", "secret-key", &uri]);
    let err = fails_without_timing_out(&out);
    assert!(err.contains("no coaps server there"), "{err}");
}

#[test]
fn a_silent_port_gives_the_hint_after_the_handshake_retransmissions() {
    // Holds the port and never answers.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let uri = format!("coaps://127.0.0.1:{port}/time");
    let out = run(&["get", "-u", "ward-3", "-k", "secret-key", &uri]);
    let err = fails_without_timing_out(&out);
    assert!(
        err.contains("no answer in time (no coaps server there, or a wrong key or certificate)"),
        "{err}"
    );
}

#[test]
fn a_certificate_with_another_key_is_refused_at_start() {
    let (cert, key) = (testdata("server.crt"), testdata("client.key"));
    let out = run(&[
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--cert",
        &cert,
        "--key",
        &key,
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("does not belong to the certificate"), "{err}");

    let uri = "coaps://127.0.0.1:9/time";
    let out = run(&["get", "--cert", &cert, "--key", &key, uri]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("does not belong to the certificate"),
        "{out:?}"
    );

    // The right pair starts.
    let key = testdata("server.key");
    let (_server, _port) = covey_server(&["--cert", &cert, "--key", &key]);
}
