//! `covey`: the command line of the Covey CoAP stack.

mod no_libm;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use covey_cli::commands;
use covey_cli::commands::client::discover_args::{DiscoverArgs, DISCOVER_EXAMPLES};
use covey_cli::commands::client::{ClientArgs, Verb};
use covey_cli::exit::EXIT_CODES_HELP;
use covey_cli::sibling::{self, PassThrough};

/// Covey: CoAP (RFC 7252) tools.
#[derive(Debug, Parser)]
#[command(name = "covey", version, propagate_version = true, after_help = EXIT_CODES_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// GET a resource.
    Get(ClientArgs),
    /// PUT a payload (-e) to a resource.
    Put(ClientArgs),
    /// POST a payload (-e) to a resource.
    Post(ClientArgs),
    /// DELETE a resource.
    Delete(ClientArgs),
    /// FETCH a resource with a request payload (-e).
    Fetch(ClientArgs),
    /// Observe a resource: print every notification (for -s SECS, or until Ctrl-C).
    Observe(ClientArgs),
    /// List a server's resources (/.well-known/core, filtered by the URI's query).
    #[command(after_help = DISCOVER_EXAMPLES)]
    Discover(DiscoverArgs),
    /// Run a CoAP server with demo resources (and the plugtest set with --plugtest).
    Serve(commands::serve::ServeArgs),
    /// Decode one CoAP message given as hex or on standard input.
    Decode(commands::decode::DecodeArgs),
    /// Load a CoAP server (closed loop) and print requests/s and latency; --against libcoap
    /// compares covey serve with libcoap's server.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Bench(PassThrough),
    /// Measure the gateway's HTTP-CoAP proxy against direct CoAP on loopback: added p50
    /// latency and requests/s, in one run.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    BenchProxy(PassThrough),
    /// Run an Entity Manager: clients create entities (groups of resources) under /e.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Gateway(PassThrough),
    /// Create, list, show, delete and query entities on a gateway.
    Entity(commands::entity::EntityArgs),
    /// Bridge a mote's SLIP serial line to a TUN device, as Contiki's tunslip6 does, so any
    /// CoAP client on this host reaches the mote by its IPv6 address.
    #[cfg(target_os = "linux")]
    Tunslip(commands::tunslip::TunslipArgs),
    /// Run the lab's scenarios: the seed papers' experiments on the simulator.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Lab(PassThrough),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Get(a) => commands::client::run(Verb::Get, a),
        Command::Put(a) => commands::client::run(Verb::Put, a),
        Command::Post(a) => commands::client::run(Verb::Post, a),
        Command::Delete(a) => commands::client::run(Verb::Delete, a),
        Command::Fetch(a) => commands::client::run(Verb::Fetch, a),
        Command::Observe(a) => commands::client::run(Verb::Observe, a),
        Command::Discover(a) => commands::client::run(Verb::Discover, a.into()),
        Command::Serve(a) => commands::serve::run(a),
        Command::Decode(a) => commands::decode::run(&a),
        Command::Bench(a) => sibling::run("covey-bench", &["coap"], a.args),
        Command::BenchProxy(a) => sibling::run("covey-bench", &["proxy"], a.args),
        Command::Gateway(a) => sibling::run("covey-gateway", &[], a.args),
        Command::Entity(a) => commands::entity::run(a),
        #[cfg(target_os = "linux")]
        Command::Tunslip(a) => commands::tunslip::run(a),
        Command::Lab(a) => sibling::run("covey-lab", &[], a.args),
    };
    covey_cli::finish(result)
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
