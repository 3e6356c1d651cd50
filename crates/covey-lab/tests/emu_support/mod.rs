//! Shared by the emulator tests: the root check that skips them with a reason.

use covey_lab::emu;

/// True when the emulator can run here; otherwise prints why the test is skipped.
pub fn can_emulate() -> bool {
    match emu::require_root() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }
}
