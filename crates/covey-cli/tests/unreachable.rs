//! `covey get` to a closed port: the network's ICMP port unreachable ends it at once with
//! exit code 6 (as `covey --help` promises) instead of a timeout, over IPv4 and IPv6.

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use support::{covey, run_limited, stderr};

/// Far below the request timeout (90 s by default), far above a process start.
const PROMPTLY: Duration = Duration::from_secs(2);

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
        let started = Instant::now();
        let out = run_limited(cmd, Duration::from_secs(20));
        let elapsed = started.elapsed();
        assert_eq!(out.status.code(), Some(6), "{host}: {out:?}");
        assert!(elapsed < PROMPTLY, "{host}: took {elapsed:?}");
        let message = stderr(&out);
        assert_eq!(message.lines().count(), 1, "one line: {message}");
        assert!(
            message.contains("unreachable") || message.contains("refused"),
            "{message}"
        );
        assert!(message.contains(&format!("{host}:{port}")), "{message}");
    }
}
