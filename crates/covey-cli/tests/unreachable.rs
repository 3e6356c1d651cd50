//! `covey get` to a closed port: the network's ICMP port unreachable ends it at once with
//! exit code 6 (as `covey --help` promises) instead of a timeout, over IPv4 and IPv6; and
//! `covey serve` keeps serving while its notifications to vanished observers draw ICMP errors.

mod harness;
mod support;

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use harness::Plugtest;
use support::{covey, run_limited, stderr};

/// A port on `ip` that was bound a moment ago and is closed now.
fn closed_port(ip: &str) -> u16 {
    let socket = UdpSocket::bind(SocketAddr::new(ip.parse().unwrap(), 0)).unwrap();
    socket.local_addr().unwrap().port()
}

#[test]
fn a_closed_port_fails_at_once_with_exit_code_6() {
    for (ip, host) in [("127.0.0.1", "127.0.0.1"), ("::1", "[::1]")] {
        let port = closed_port(ip);
        let mut cmd = covey();
        cmd.args(["get", &format!("coap://{host}:{port}/x")]);
        // A timeout (90 s by default) would be exit code 5, not 6; the limit stops a hang.
        let out = run_limited(cmd, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(6), "{host}: {out:?}");
        let message = stderr(&out);
        assert_eq!(message.lines().count(), 1, "one line: {message}");
        assert!(
            message.contains("unreachable") || message.contains("refused"),
            "{message}"
        );
        assert!(message.contains(&format!("{host}:{port}")), "{message}");
    }
}

/// `covey observe URI` in the background, returned once it printed its first response.
fn registered_observer(uri: &str) -> Child {
    let mut child = covey()
        .args(["observe", uri])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start covey observe");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let first = rx.recv_timeout(Duration::from_secs(10));
    assert!(
        first.is_ok_and(|l| !l.is_empty()),
        "{uri}: never registered"
    );
    child
}

#[test]
fn the_server_keeps_serving_after_its_observers_vanished() {
    let server = Plugtest::start(&["--obs-period", "0.1"]);
    // Killed observers do not deregister: their ports are closed, and every notification
    // (confirmable or not) now draws an ICMP port unreachable at the server.
    for path in ["/obs", "/obs-non"] {
        let mut observer = registered_observer(&server.uri(path));
        observer.kill().expect("kill the observer");
        observer.wait().expect("reap the observer");
    }
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..3 {
        let mut get = covey();
        get.args(["get", "-B", "5", &server.uri("/test")]);
        let out = run_limited(get, Duration::from_secs(20));
        assert!(out.status.success(), "{out:?}");
    }
}
