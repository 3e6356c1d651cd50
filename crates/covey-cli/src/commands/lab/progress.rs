//! The progress bar of a scenario run: drawn on a terminal only.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use covey_lab::scenarios::{Progress, ProgressFn};
use indicatif::{ProgressBar, ProgressStyle};

/// A bar labelled `label`, hidden when standard error is not a terminal (pipes, CI, tests).
/// It spins until the first run finishes, when the sweep's size is known.
pub fn bar(label: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_message(label.to_string());
    bar.set_style(style(
        "{spinner} {msg} [{elapsed_precise}] first runs under way",
    ));
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The lab callback that moves `bar`. Runs finish on worker threads in any order, so the
/// bar only moves forward.
pub fn callback(bar: &ProgressBar) -> ProgressFn {
    let bar = bar.clone();
    Arc::new(move |p: Progress| {
        let total = p.total as u64;
        if bar.length() != Some(total) {
            bar.set_length(total);
            bar.set_style(style(
                "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} runs (eta {eta})",
            ));
        }
        if p.done as u64 > bar.position() {
            bar.set_position(p.done as u64);
        }
    })
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).expect("a valid progress template")
}
