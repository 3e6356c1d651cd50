//! Writing results to standard output.

use std::io::{ErrorKind, Write};

use anyhow::Context;

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
