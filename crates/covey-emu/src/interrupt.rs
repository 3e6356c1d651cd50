//! Clean-up when the run is interrupted (Ctrl-C, SIGTERM): `Drop` does not run then, so
//! every live testbed registers what it created, and a signal handler kills those process
//! groups and deletes those namespaces before the program exits with 130.

use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::namespace::ip;
use super::supervisor::{any_running, signal, GRACE};

/// What one live testbed created.
#[derive(Debug, Default)]
struct Registration {
    id: u64,
    namespaces: Vec<String>,
    groups: Vec<i32>,
}

/// Every live testbed's registration, and whether the handler has already cleaned up.
#[derive(Debug, Default)]
struct Live {
    registrations: Vec<Registration>,
    interrupted: bool,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    registrations: Vec::new(),
    interrupted: false,
});
static HANDLER: Once = Once::new();

fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Holds off the interrupt handler while a process is started and recorded, so that an
/// interrupt cannot fall between the two and leave the process running unrecorded.
pub struct StartGuard(MutexGuard<'static, Live>);

impl StartGuard {
    /// Records a process group a testbed started.
    pub fn add_group(&mut self, id: u64, group: i32) {
        if let Some(r) = self.0.registrations.iter_mut().find(|r| r.id == id) {
            r.groups.push(group);
        }
    }
}

/// A guard to start a process under, or `None` once the run has been interrupted (the
/// handler has cleaned up and is about to exit, so nothing more may be started).
pub fn hold_for_start() -> Option<StartGuard> {
    let live = live();
    (!live.interrupted).then_some(StartGuard(live))
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

/// Kills every registered process group, waits for them to be gone, and deletes every
/// registered namespace.
pub fn clean_up_after_interrupt() {
    let mut live = live();
    live.interrupted = true;
    let registrations = std::mem::take(&mut live.registrations);
    let groups: Vec<i32> = registrations
        .iter()
        .flat_map(|r| r.groups.clone())
        .collect();
    for &g in &groups {
        signal(g, Signal::SIGKILL);
    }
    // SIGKILL is not instant: the program exits only once its processes are gone (bounded).
    let deadline = Instant::now() + GRACE;
    while any_running(&groups) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for r in &registrations {
        for ns in &r.namespaces {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

/// Records a testbed's namespaces.
pub fn register(id: u64, namespaces: Vec<String>) {
    live().registrations.push(Registration {
        id,
        namespaces,
        groups: Vec::new(),
    });
}

/// Records a process group a testbed started (the caller started it some other way; see
/// [`hold_for_start`] to leave no gap).
pub fn add_group(id: u64, group: i32) {
    if let Some(r) = live().registrations.iter_mut().find(|r| r.id == id) {
        r.groups.push(group);
    }
}

/// Forgets a process group that was stopped.
pub fn remove_group(id: u64, group: i32) {
    if let Some(r) = live().registrations.iter_mut().find(|r| r.id == id) {
        r.groups.retain(|&g| g != group);
    }
}

/// Forgets a testbed that cleaned up after itself.
pub fn unregister(id: u64) {
    live().registrations.retain(|r| r.id != id);
}
