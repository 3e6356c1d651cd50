//! Shared by the emulator tests: the root check that fails them with a reason, whether a
//! process still lives, and a testbed with a process in it.

#![allow(dead_code)]

use covey_emu as emu;

/// Fails the test, saying why, unless the emulator can run here. The tests that call it are
/// `#[ignore = "needs root"]`: a plain `cargo test` lists them as ignored, and
/// `--include-ignored` (scripts/test.sh as root) runs them.
pub fn require_emulator() {
    if let Err(why) = emu::require_root() {
        panic!("the emulator cannot run here: {why}");
    }
}

/// Whether `pid` is a live process (a zombie is not).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start())
            .unwrap_or("");
        !state.starts_with('Z')
    })
}

/// A testbed of nodes `a` and `b` with `sleep 600` running in `a`, and the sleeper's pid.
pub fn testbed_with_a_sleeper() -> (emu::Testbed, u32) {
    let mut testbed = emu::Testbed::builder()
        .node("a")
        .node("b")
        .build()
        .expect("testbed");
    let id = testbed
        .exec("a", std::process::Command::new("sleep").arg("600"))
        .expect("start sleep");
    let sleeper = testbed.process(id).expect("process").id();
    (testbed, sleeper)
}
