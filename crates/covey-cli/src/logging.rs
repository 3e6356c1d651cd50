//! Logging through `tracing` to standard error; `-v` raises the level.

use tracing_subscriber::EnvFilter;

/// Installs the subscriber: warnings by default, info with `-v`, debug with `-vv`, trace
/// beyond. `RUST_LOG` overrides.
pub fn init(verbosity: u8) {
    let level = match verbosity {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
