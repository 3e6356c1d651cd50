//! The commands of the `covey` programs. `covey` itself runs the clients, `serve`, `decode`
//! and `entity`; `covey-gateway`, `covey-lab` and `covey-bench` run the rest, each linking
//! only what it needs (`covey gateway …` runs `covey-gateway …`, see [`sibling`]).

pub mod commands;
pub mod exit;
mod input;
pub mod logging;
mod output;
pub mod sibling;

// The commands print messages and payloads as `covey_render` renders them.
use covey_render as render;

use std::io::Write;
use std::process::ExitCode;

use exit::Failure;

/// The process's exit: success, or the failure's one-line message on stderr and its code.
pub fn finish(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            // One line, whatever the error chain; a closed stderr leaves nothing to tell.
            let message = failure.message.replace('\n', " ");
            let _ = writeln!(std::io::stderr(), "covey: {message}");
            failure.exit_code()
        }
    }
}
