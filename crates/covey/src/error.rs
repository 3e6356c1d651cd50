//! The one error type of the runtime.

use std::net::SocketAddr;

use covey_proto::{ConfigError, Failure};

/// Why a request, a response or the runtime failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URI could not be parsed or cannot be used for a request.
    #[error("bad URI {uri:?}: {reason}")]
    InvalidUri {
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The host name of a URI did not resolve.
    #[error("cannot resolve host {host:?}: {reason}")]
    Resolve {
        /// The host name.
        host: String,
        /// The resolver's answer.
        reason: String,
    },
    /// No response arrived in time.
    #[error("no response from {0} in time")]
    Timeout(SocketAddr),
    /// The peer rejected the request with a Reset message.
    #[error("{0} rejected the request with a reset")]
    Reset(SocketAddr),
    /// The network reported the destination unreachable.
    #[error("{addr} is unreachable: {reason}")]
    Unreachable {
        /// The destination.
        addr: SocketAddr,
        /// What the operating system said.
        reason: String,
    },
    /// The DTLS handshake with the peer failed (wrong key or certificate, no answer).
    #[error("DTLS handshake with {addr} failed: {reason}")]
    Handshake {
        /// The peer.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
    /// DTLS cannot be set up as configured.
    #[error("DTLS: {0}")]
    Dtls(String),
    /// An OSCORE security context cannot be added (too many, or a second one for a kid).
    #[error("OSCORE: {0}")]
    Oscore(#[from] covey_proto::AddOscoreContextError),
    /// The engine's [`Config`](crate::Config) breaks one of its rules
    /// ([`Config::validate`](crate::Config::validate)).
    #[error("bad configuration: {0}")]
    Config(#[from] ConfigError),
    /// The request was cancelled.
    #[error("request cancelled")]
    Cancelled,
    /// The endpoint's tables are full.
    #[error("too many outstanding requests")]
    Overload,
    /// Every message ID towards the peer was used within the reuse interval, so no request
    /// may go to it until one comes free (RFC 7252 §4.4).
    #[error(
        "no message ID free for {0}: 65 536 were used within the reuse interval \
         (Config::mid_reuse_interval, EXCHANGE_LIFETIME by default)"
    )]
    MessageIdsExhausted(SocketAddr),
    /// The request's body is over `Config::max_body_size`, or its options do not fit into a
    /// datagram.
    #[error(
        "request too large: a body over the block-wise limit (max_body_size) \
         or options that do not fit into one datagram"
    )]
    TooLarge,
    /// The response broke the protocol.
    #[error("protocol error in the response from {0}")]
    Protocol(SocketAddr),
    /// The answer broke a rule that ends the request at once: a code that is no response
    /// code, a Block2 block other than the one asked for, a body past its Size2 or past
    /// `Config::max_body_size`.
    #[error("bad response from {addr}: {reason}")]
    BadResponse {
        /// The server.
        addr: SocketAddr,
        /// The rule broken.
        reason: Failure,
    },
    /// The request cannot be sent as asked (e.g. a confirmable multicast request).
    #[error("{0}")]
    InvalidRequest(String),
    /// The driver is shutting down or has stopped.
    #[error("the CoAP driver has shut down")]
    Shutdown,
    /// No tokio runtime to run the driver on.
    #[error("no tokio runtime is running")]
    NoRuntime,
    /// A socket operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// An I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The error for an engine failure of a request to `remote`.
    pub(crate) fn from_failure(failure: Failure, remote: SocketAddr) -> Error {
        match failure {
            Failure::Timeout => Error::Timeout(remote),
            Failure::Reset => Error::Reset(remote),
            Failure::Cancelled => Error::Cancelled,
            Failure::Overload => Error::Overload,
            Failure::Unreachable => Error::Unreachable {
                addr: remote,
                reason: "the network reported it unreachable".into(),
            },
            Failure::ProtocolError => Error::Protocol(remote),
            Failure::MessageIdsExhausted => Error::MessageIdsExhausted(remote),
            reason @ (Failure::InvalidResponseCode
            | Failure::UnexpectedBlock { .. }
            | Failure::ShortBlock { .. }
            | Failure::Size2Exceeded { .. }
            | Failure::ResponseTooLarge
            | Failure::UnverifiedResponse) => Error::BadResponse {
                addr: remote,
                reason,
            },
            Failure::ProtectionFailed => Error::InvalidRequest(failure.to_string()),
            _ => Error::Protocol(remote),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_message_ids_names_the_peer_and_the_setting_to_change() {
        let peer: SocketAddr = "127.0.0.1:5683".parse().unwrap();
        let text = Error::from_failure(Failure::MessageIdsExhausted, peer).to_string();
        assert!(text.contains("127.0.0.1:5683"), "{text}");
        assert!(text.contains("mid_reuse_interval"), "{text}");
    }

    #[test]
    fn a_bad_response_says_which_rule_it_broke() {
        let peer: SocketAddr = "127.0.0.1:5683".parse().unwrap();
        let text = Error::from_failure(Failure::InvalidResponseCode, peer).to_string();
        assert!(
            text.contains("127.0.0.1:5683") && text.contains("no response code"),
            "{text}"
        );
        let failure = Failure::UnexpectedBlock {
            asked: 1024,
            got: 0,
        };
        let text = Error::from_failure(failure, peer).to_string();
        assert!(text.contains("byte 0 when byte 1024"), "{text}");
    }
}
