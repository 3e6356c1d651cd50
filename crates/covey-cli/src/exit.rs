//! Exit codes: every failure of a command maps to one documented code and a one-line
//! explanation on standard error.

use std::process::ExitCode;

use covey::dtls::CredentialsError;
use covey_bench::BenchError;
use covey_core::Code;

/// The exit codes, as documented in `covey --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// 1: anything else (I/O, an unreadable payload file, a server that cannot start).
    Other = 1,
    /// 2: bad command line, bad URI or an engine configuration the flags made invalid.
    Usage = 2,
    /// 3: the server answered 4.xx.
    ClientError = 3,
    /// 4: the server answered 5.xx.
    ServerError = 4,
    /// 5: no response in time.
    Timeout = 5,
    /// 6: the host is unknown or unreachable, or reset the request.
    Unreachable = 6,
}

/// Text for `--help`.
pub const EXIT_CODES_HELP: &str = "\
Exit codes: 0 success (2.xx), 1 other error, 2 bad usage or URI, 3 4.xx response,
4 5.xx response, 5 timeout, 6 host unknown, unreachable or reset.";

/// A failed command: how to exit and what to say.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub kind: ExitKind,
    /// One line for standard error.
    pub message: String,
}

impl Failure {
    /// A failure of `kind`.
    pub fn new(kind: ExitKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
        }
    }

    /// The process exit code.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.kind as u8)
    }

    /// The exit kind for a response code, `None` for success.
    pub fn for_code(code: Code) -> Option<ExitKind> {
        match code.class() {
            2 => None,
            4 => Some(ExitKind::ClientError),
            5 => Some(ExitKind::ServerError),
            _ => Some(ExitKind::Other),
        }
    }
}

impl Failure {
    /// The failure of a request to `uri`: as from its [`covey::Error`], with a hint when a
    /// `coaps://` host is unreachable, as a handshake that gets no answer gives.
    pub fn of_request(uri: &str, e: covey::Error) -> Failure {
        let coaps = uri
            .get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("coaps://"));
        let unreachable = matches!(e, covey::Error::Unreachable { .. });
        let mut failure = Failure::from(e);
        if coaps && unreachable {
            failure.message.push_str(" (no coaps server there)");
        }
        failure
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::new(ExitKind::Other, format!("{e:#}"))
    }
}

impl From<covey::Error> for Failure {
    fn from(e: covey::Error) -> Failure {
        use covey::Error as E;
        let kind = match &e {
            E::InvalidUri { .. } | E::InvalidRequest(_) | E::Config(_) | E::Oscore(_) => {
                ExitKind::Usage
            }
            E::Timeout(_) => ExitKind::Timeout,
            E::Resolve { .. } | E::Unreachable { .. } | E::Reset(_) => ExitKind::Unreachable,
            _ => ExitKind::Other,
        };
        Failure::new(kind, e.to_string())
    }
}

/// Bad DTLS credentials: a usage error, or an unreadable file.
impl From<CredentialsError> for Failure {
    fn from(e: CredentialsError) -> Failure {
        let kind = match e {
            CredentialsError::Read { .. } => ExitKind::Other,
            _ => ExitKind::Usage,
        };
        Failure::new(kind, e.to_string())
    }
}

/// A failed benchmark (`covey-bench`), with the exit codes of the other commands.
impl From<BenchError> for Failure {
    fn from(e: BenchError) -> Failure {
        match e {
            BenchError::Usage(message) => Failure::new(ExitKind::Usage, message),
            BenchError::Other(message) => Failure::new(ExitKind::Other, message),
            BenchError::Coap(e) => Failure::from(e),
            BenchError::Credentials(e) => Failure::from(e),
            BenchError::Gateway(e) => crate::commands::gateway::start_failure(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_configuration_is_a_one_line_usage_error() {
        let config = covey::Config {
            max_buffers: 1,
            ..covey::Config::default()
        };
        let error = covey::Error::from(config.validate().unwrap_err());
        let failure = Failure::from(error);
        assert_eq!(failure.kind, ExitKind::Usage);
        assert_eq!(
            failure.message,
            "bad configuration: max_buffers is 1, but must be at least 2"
        );
        assert!(!failure.message.contains('\n'));
    }
}
