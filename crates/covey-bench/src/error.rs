//! Why a benchmark failed. The programs that run the benchmarks choose the exit code: the
//! errors of the stack underneath are kept whole, so they exit as in the other commands.

use covey::dtls::CredentialsError;
use covey_group::gateway::GatewayError;

/// Why a benchmark failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A bad command line: options out of range or that do not go together.
    #[error("{0}")]
    Usage(String),
    /// Anything else the benchmark found wrong: I/O, a server that did not start or answer.
    #[error("{0}")]
    Other(String),
    /// The CoAP client failed: a bad URI, an unknown host, no answer in time, ...
    #[error(transparent)]
    Coap(#[from] covey::Error),
    /// The DTLS flags give no credentials (bad, or an unreadable file).
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    /// The gateway under `covey entity bench` did not start.
    #[error(transparent)]
    Gateway(#[from] GatewayError),
}

impl From<anyhow::Error> for BenchError {
    fn from(e: anyhow::Error) -> BenchError {
        BenchError::Other(format!("{e:#}"))
    }
}
