//! Running `covey` and peer binaries in tests: free ports, background servers killed on
//! drop, and bounded waits.

#![allow(dead_code)]

use std::net::UdpSocket;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn covey() -> Command {
    Command::new(env!("CARGO_BIN_EXE_covey"))
}

/// A UDP port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind an ephemeral port");
    s.local_addr().expect("local address").port()
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
        Background { child }
    }

    /// True while it runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `covey serve --bind 127.0.0.1:PORT` with `extra` flags and waits until it answers.
pub fn covey_server(extra: &[&str]) -> (Background, u16) {
    covey_server_probed(extra, "coap", &[])
}

/// [`covey_server`] for a server reached at `scheme` with the client flags `probe` (e.g. DTLS
/// credentials).
pub fn covey_server_probed(extra: &[&str], scheme: &str, probe: &[&str]) -> (Background, u16) {
    for _ in 0..5 {
        let port = free_port();
        let mut cmd = covey();
        cmd.args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .args(extra);
        let mut server = Background::start(cmd);
        if wait_until_serving(&mut server, port, scheme, probe) {
            return (server, port);
        }
    }
    panic!("covey serve did not come up");
}

/// Polls with `covey get` until the server on `port` answers (at most about 5 s).
fn wait_until_serving(server: &mut Background, port: u16, scheme: &str, probe: &[&str]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !server.running() {
            return false; // e.g. the port was taken meanwhile
        }
        let out = covey()
            .args(["get", "-B", "0.4"])
            .args(probe)
            .arg(format!("{scheme}://127.0.0.1:{port}/.well-known/core"))
            .output()
            .expect("run covey get");
        if out.status.success() {
            return true;
        }
    }
    false
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
