//! `covey`: the command line of the Covey CoAP stack.

mod commands;
mod exit;
mod input;
mod logging;
mod output;
mod render;
mod resources;
mod web;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::client::discover_args::{DiscoverArgs, DISCOVER_EXAMPLES};
use commands::client::{ClientArgs, Verb};
use exit::EXIT_CODES_HELP;

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
    Bench(commands::bench::BenchArgs),
    /// Measure the gateway's HTTP-CoAP proxy against direct CoAP on loopback: added p50
    /// latency and requests/s, in one run.
    BenchProxy(commands::bench_proxy::BenchProxyArgs),
    /// Run an Entity Manager: clients create entities (groups of resources) under /e.
    Gateway(commands::gateway::GatewayArgs),
    /// Create, list, show, delete and query entities on a gateway.
    Entity(commands::entity::EntityArgs),
    /// Run the lab's scenarios: the seed papers' experiments on the simulator.
    Lab(commands::lab::LabArgs),
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
        Command::Bench(a) => commands::bench::run(a),
        Command::BenchProxy(a) => commands::bench_proxy::run(a),
        Command::Gateway(a) => commands::gateway::run(a),
        Command::Entity(a) => commands::entity::run(a),
        Command::Lab(a) => commands::lab::run(a),
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
