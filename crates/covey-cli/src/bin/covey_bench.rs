//! `covey-bench`: the benchmarks of `covey bench`, `covey bench-proxy` and `covey entity
//! bench`, which run `covey-bench coap|proxy|entity …`; the benchmarks themselves are the
//! `covey_bench` crate.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use covey_bench::{coap, entity, proxy};
use covey_cli::exit::{ExitKind, Failure, EXIT_CODES_HELP};

/// Load a CoAP server (closed loop) and print requests/s and latency; --against libcoap
/// compares covey serve with libcoap's server.
#[derive(Debug, Parser)]
#[command(name = "covey bench", bin_name = "covey bench", version, after_help = EXIT_CODES_HELP)]
struct Coap {
    #[command(flatten)]
    args: coap::BenchArgs,
}

/// Measure the gateway's HTTP-CoAP proxy against direct CoAP on loopback: added p50 latency
/// and requests/s, in one run.
#[derive(Debug, Parser)]
#[command(name = "covey bench-proxy", bin_name = "covey bench-proxy", version, after_help = EXIT_CODES_HELP)]
struct Proxy {
    #[command(flatten)]
    args: proxy::BenchProxyArgs,
}

/// Measure the EM's fan-out on loopback: queries/s and latency for groups of members.
#[derive(Debug, Parser)]
#[command(name = "covey entity bench", bin_name = "covey entity bench", version, after_help = EXIT_CODES_HELP)]
struct Entity {
    #[command(flatten)]
    args: entity::BenchArgs,
}

fn main() -> ExitCode {
    let mut argv = std::env::args_os();
    let _program = argv.next();
    let which = argv.next();
    // Each benchmark parses the rest as its own command line, so usage lines and errors
    // name the command the user typed.
    let rest = |name: &str| std::iter::once(OsString::from(name)).chain(argv);
    let result = match which.as_ref().and_then(|w| w.to_str()) {
        Some("coap") => coap::run(Coap::parse_from(rest("covey bench")).args),
        Some("proxy") => proxy::run(Proxy::parse_from(rest("covey bench-proxy")).args),
        Some("entity") => {
            let args = Entity::parse_from(rest("covey entity bench")).args;
            // Warnings of the gateway and its client on stderr.
            covey_cli::logging::init(0);
            entity::run(args)
        }
        _ => {
            return covey_cli::finish(Err(Failure::new(
                ExitKind::Usage,
                "covey-bench runs `covey bench` (coap), `covey bench-proxy` (proxy) and \
                 `covey entity bench` (entity): give one of coap, proxy or entity first",
            )))
        }
    };
    covey_cli::finish(result.map_err(Failure::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definitions_are_consistent() {
        Coap::command().debug_assert();
        Proxy::command().debug_assert();
        Entity::command().debug_assert();
    }
}
