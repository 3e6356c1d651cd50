//! Why an EDHOC session failed.

use thiserror::Error;

/// An EDHOC session failure, worded for the diagnostic payload of a CoAP error.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EdhocError {
    /// The peer's credential (by kid) is not among the trusted ones.
    #[error("EDHOC peer credential kid {kid} is not trusted")]
    UntrustedPeer {
        /// The kid the peer presented, hex.
        kid: String,
    },
    /// The peer presented its credential by value, which we do not accept (trust is by kid).
    #[error("EDHOC peer credential must be identified by kid")]
    CredentialNotByKid,
    /// A message was malformed or failed verification.
    #[error("EDHOC {step} failed: {reason}")]
    Protocol {
        /// Which step failed, e.g. "message_2".
        step: &'static str,
        /// lakers' error, e.g. MacVerificationFailed.
        reason: String,
    },
    /// All 48 one-byte connection identifiers are taken by contexts and sessions.
    #[error("no EDHOC connection identifier is free")]
    NoFreeConnectionId,
    /// A message does not fit EDHOC's buffers.
    #[error("EDHOC {0} is too long")]
    TooLong(&'static str),
    /// The CoAP payload does not follow RFC 9528 Appendix A.2's framing.
    #[error("EDHOC request payload is malformed: {0}")]
    Framing(&'static str),
    /// A credential file could not be used.
    #[error("EDHOC credential: {0}")]
    Credential(String),
}

impl EdhocError {
    pub(crate) fn protocol(step: &'static str, error: lakers_shared::EDHOCError) -> Self {
        EdhocError::Protocol {
            step,
            reason: format!("{error:?}"),
        }
    }
}
