//! SCHED_FIFO for the emulator's own timing-critical threads (the forwarder, the probes),
//! so that other work on the machine does not delay them. Set with util-linux's `chrt` on
//! the thread's id: the system call itself would need `unsafe`, which covey-emu forbids.

use std::process::{Command, Stdio};

/// The forwarder's priority: above the probes and ordinary threads, below the kernel's own.
pub const FORWARDER_PRIORITY: u8 = 20;
/// The probes' priority: below the forwarder, so they never delay it.
pub const PROBE_PRIORITY: u8 = 10;

/// Puts the calling thread under SCHED_FIFO at `priority`; says whether it worked (it does
/// not when `chrt` is missing or the system refuses real-time scheduling).
pub fn make_current_thread_realtime(priority: u8) -> bool {
    let tid = nix::unistd::gettid().to_string();
    Command::new("chrt")
        .args(["-f", "-p", &priority.to_string(), &tid])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
