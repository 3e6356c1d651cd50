//! Logging through `tracing` to standard error; `-v` raises the level. Colour only on a
//! terminal, and never when `NO_COLOR` is set (<https://no-color.org>).

use std::io::IsTerminal;

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the subscriber: warnings by default, info with `-v`, debug with `-vv`, trace
/// beyond. `RUST_LOG` (`level` or `target=level`, comma-separated) overrides.
pub fn init(verbosity: u8) {
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(LevelFilter::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR"),
        ))
        .with_target(false)
        .finish();
    let _ = subscriber
        .with(filter(verbosity, std::env::var("RUST_LOG").ok()))
        .try_init();
}

/// The levels by target: `RUST_LOG`'s directives if it parses, else `-v`'s level.
fn filter(verbosity: u8, rust_log: Option<String>) -> Targets {
    let level = match verbosity {
        0 => LevelFilter::WARN,
        1 => LevelFilter::INFO,
        2 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    rust_log
        .filter(|s| !s.trim().is_empty())
        .and_then(|s| s.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(level))
}

/// Whether to colour: on a terminal, unless `NO_COLOR` is set to anything but "".
fn colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && !matches!(no_color, Some(v) if !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_sets_the_level_and_rust_log_overrides_it() {
        use tracing::Level;
        let quiet = filter(0, None);
        assert!(quiet.would_enable("covey", &Level::WARN));
        assert!(!quiet.would_enable("covey", &Level::INFO));
        assert!(filter(2, None).would_enable("covey", &Level::DEBUG));
        assert!(!filter(2, None).would_enable("covey", &Level::TRACE));
        let directed = filter(0, Some("covey_group=debug,info".into()));
        assert!(directed.would_enable("covey_group::fanout", &Level::DEBUG));
        assert!(!directed.would_enable("covey_proto", &Level::DEBUG));
        assert!(directed.would_enable("covey_proto", &Level::INFO));
        // A malformed RUST_LOG falls back to -v's level.
        assert!(filter(1, Some("=:=".into())).would_enable("x", &Level::INFO));
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".into())));
        assert!(!colour(true, Some("1".into())));
        assert!(!colour(false, None));
    }
}
