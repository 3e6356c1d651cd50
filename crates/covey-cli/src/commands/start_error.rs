//! Why a server did not start, in one line: a busy port says so and how to share it.

use covey::Error;

use crate::exit::{ExitKind, Failure};

/// The failure for a server (`covey serve`, `covey gateway`) that could not start.
pub fn start_failure(e: Error) -> Failure {
    match &e {
        Error::Io { context, source } if source.kind() == std::io::ErrorKind::AddrInUse => {
            Failure::new(
                ExitKind::Other,
                format!(
                    "{context}: the port is already in use (is another server running?); \
                     servers started with --reuse-port can share it"
                ),
            )
        }
        _ => Failure::from(e),
    }
}
