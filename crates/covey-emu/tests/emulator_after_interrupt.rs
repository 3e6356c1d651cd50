//! Once an interrupt's clean-up has run, the program is about to exit and nothing it starts
//! afterwards would be removed: the testbed then refuses to start processes or create
//! namespaces, rather than leave them behind. Runs in its own test binary because the
//! clean-up is process-wide. Needs root: `#[ignore]`d, run with `--include-ignored`.

mod emu_support;

use std::process::Command;

use covey_emu::{self as emu, EmuError, Testbed};
use emu_support::{alive, require_emulator, testbed_with_a_sleeper};

#[test]
#[ignore = "needs root"]
fn nothing_starts_after_an_interrupt_cleaned_up() {
    require_emulator();
    let (mut testbed, sleeper) = testbed_with_a_sleeper();
    let netns = testbed.netns("a").expect("a").to_owned();

    // What the Ctrl-C handler does before it exits.
    emu::clean_up_after_interrupt();
    assert!(
        !emu::namespace::namespaces_with_prefix(&netns).contains(&netns),
        "{netns} is removed"
    );
    // SIGKILL is delivered at once, but the reaper may take a moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(sleeper) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!alive(sleeper), "the started process is gone");

    let late = testbed.exec("b", Command::new("sleep").arg("600"));
    assert!(matches!(late, Err(EmuError::Interrupted)), "{late:?}");
    let another = Testbed::builder().node("c").node("d").build();
    assert!(matches!(another, Err(EmuError::Interrupted)), "{another:?}");
}
