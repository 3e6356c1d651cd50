//! Writing results to standard output.

use std::io::{ErrorKind, IsTerminal, Write};

use anyhow::Context;

/// True when standard output is a terminal, so untrusted text must be made safe for it.
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Writes `text` to standard output in one go; a closed pipe (`| head`) is not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}
