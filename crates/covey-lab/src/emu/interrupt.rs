//! Clean-up when the run is interrupted (Ctrl-C, SIGTERM): `Drop` does not run then, so
//! every live testbed registers what it created, and a signal handler kills those process
//! groups and deletes those namespaces before the program exits with 130.

use std::sync::{Mutex, MutexGuard, Once};

use nix::sys::signal::Signal;

use super::namespace::ip;
use super::supervisor::signal;

/// What one live testbed created.
#[derive(Debug, Default)]
struct Registration {
    id: u64,
    namespaces: Vec<String>,
    groups: Vec<i32>,
}

static LIVE: Mutex<Vec<Registration>> = Mutex::new(Vec::new());
static HANDLER: Once = Once::new();

fn live() -> MutexGuard<'static, Vec<Registration>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Installs the handler once per process. If the program already has a Ctrl-C handler,
/// it keeps it, and should call [`clean_up_after_interrupt`] from it.
pub fn install_handler() {
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            clean_up_after_interrupt();
            std::process::exit(130);
        });
    });
}

/// Kills every registered process group and deletes every registered namespace.
pub fn clean_up_after_interrupt() {
    let registrations = std::mem::take(&mut *live());
    for r in &registrations {
        for &g in &r.groups {
            signal(g, Signal::SIGKILL);
        }
    }
    for r in &registrations {
        for ns in &r.namespaces {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

/// Records a testbed's namespaces.
pub fn register(id: u64, namespaces: Vec<String>) {
    live().push(Registration {
        id,
        namespaces,
        groups: Vec::new(),
    });
}

/// Records a process group a testbed started.
pub fn add_group(id: u64, group: i32) {
    if let Some(r) = live().iter_mut().find(|r| r.id == id) {
        r.groups.push(group);
    }
}

/// Forgets a process group that was stopped.
pub fn remove_group(id: u64, group: i32) {
    if let Some(r) = live().iter_mut().find(|r| r.id == id) {
        r.groups.retain(|&g| g != group);
    }
}

/// Forgets a testbed that cleaned up after itself.
pub fn unregister(id: u64) {
    live().retain(|r| r.id != id);
}
