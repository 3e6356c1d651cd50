//! `covey`: the command line of the Covey CoAP stack.

mod commands;
mod input;
mod output;
mod render;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Covey: CoAP (RFC 7252) tools.
#[derive(Debug, Parser)]
#[command(name = "covey", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Decode one CoAP message given as hex or on standard input.
    Decode(commands::decode::DecodeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Decode(args) => commands::decode::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, whatever the error chain; a closed stderr leaves nothing to tell.
            let _ = writeln!(std::io::stderr(), "covey: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
