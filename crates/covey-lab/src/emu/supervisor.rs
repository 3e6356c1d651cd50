//! Processes the testbed starts inside its namespaces. Each gets its own process group so
//! that stopping it also stops whatever it started (a shell, a broker's workers); stopping
//! asks politely (SIGTERM), then insists (SIGKILL) after a grace period.

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

/// How long a process has to exit after SIGTERM before it gets SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// A started process.
#[derive(Debug)]
pub struct Supervised {
    /// The process.
    pub child: Child,
}

impl Supervised {
    /// Its process group (its own pid: it leads the group).
    pub fn group(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap_or(i32::MAX)
    }

    /// Stops the process and its group: SIGTERM, up to `GRACE` to exit, then SIGKILL.
    /// Returns the exit status (None if it could not be collected).
    pub fn stop(&mut self) -> Option<ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            // The leader is gone; its group may live on.
            signal(self.group(), Signal::SIGKILL);
            return Some(status);
        }
        signal(self.group(), Signal::SIGTERM);
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                signal(self.group(), Signal::SIGKILL);
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        signal(self.group(), Signal::SIGKILL);
        self.child.wait().ok()
    }
}

/// Sends `sig` to the process group led by `pid` and to `pid` itself (an adopted process
/// may lead no group).
pub fn signal(pid: i32, sig: Signal) {
    let _ = killpg(Pid::from_raw(pid), sig);
    let _ = kill(Pid::from_raw(pid), sig);
}
