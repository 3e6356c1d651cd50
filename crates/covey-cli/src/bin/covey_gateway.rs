//! `covey-gateway`: the Entity Manager of `covey gateway` (run by `covey gateway …`).

use std::process::ExitCode;

use clap::Parser;

use covey_cli::commands::gateway::{self, GatewayArgs};
use covey_cli::exit::EXIT_CODES_HELP;

/// Run an Entity Manager: clients create entities (groups of resources) under /e.
#[derive(Debug, Parser)]
#[command(name = "covey gateway", bin_name = "covey gateway", version, after_help = EXIT_CODES_HELP)]
struct Cli {
    #[command(flatten)]
    gateway: GatewayArgs,
}

fn main() -> ExitCode {
    covey_cli::finish(gateway::run(Cli::parse().gateway))
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
