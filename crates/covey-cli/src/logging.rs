//! Logging through `tracing` to standard error; `-v` raises the level. Colour only on a
//! terminal, and never when `NO_COLOR` is set (<https://no-color.org>).

use std::io::IsTerminal;

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
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR"),
        ))
        .with_target(false)
        .try_init();
}

/// Whether to colour: on a terminal, unless `NO_COLOR` is set to anything but "".
fn colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && !matches!(no_color, Some(v) if !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".into())));
        assert!(!colour(true, Some("1".into())));
        assert!(!colour(false, None));
    }
}
