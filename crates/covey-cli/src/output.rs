//! Writing results to standard output.

use std::io::IsTerminal;

pub use covey_cli_base::output::print;

/// True when standard output is a terminal, so untrusted text must be made safe for it.
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}
