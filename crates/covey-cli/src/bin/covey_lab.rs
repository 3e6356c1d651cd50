//! `covey-lab`: the lab of `covey lab` (run by `covey lab …`).

use std::process::ExitCode;

use clap::Parser;

use covey_cli::commands::lab::{self, LabArgs};

/// Run the lab's scenarios: the seed papers' experiments on the simulator.
#[derive(Debug, Parser)]
#[command(
    name = "covey lab",
    bin_name = "covey lab",
    version,
    propagate_version = true
)]
struct Cli {
    #[command(flatten)]
    lab: LabArgs,
}

fn main() -> ExitCode {
    covey_cli::finish(lab::run(Cli::parse().lab))
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
