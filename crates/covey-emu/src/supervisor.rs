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

/// Whether any process of the groups `groups` is still running (zombies, which have exited
/// and only wait to be reaped, do not count).
pub fn any_running(groups: &[i32]) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| running_group(&stat))
            .is_some_and(|group| groups.contains(&group))
    })
}

/// The process group of a `/proc/PID/stat` line, if the process has not exited.
fn running_group(stat: &str) -> Option<i32> {
    // The command name may hold spaces and parentheses: the fields follow the last ')'.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    (state != "Z" && state != "X").then_some(group)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn reads_the_group_of_a_running_process_and_skips_zombies() {
        let stat = "4242 (covey lab (x)) S 1 4240 4240 0 -1 4194560 120 0";
        assert_eq!(running_group(stat), Some(4240));
        let zombie = "4243 (sleep) Z 1 4240 4240 0 -1";
        assert_eq!(running_group(zombie), None);
        assert_eq!(running_group("garbage"), None);
    }

    #[test]
    fn a_group_is_running_while_its_process_lives() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let group = i32::try_from(child.id()).unwrap();
        assert!(any_running(&[group]));
        signal(group, Signal::SIGKILL);
        child.wait().unwrap();
        assert!(!any_running(&[group]));
    }
}
