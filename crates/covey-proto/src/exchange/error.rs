//! Why the application's calls on the engine can fail.

/// Why a request could not be started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// A table is full (exchanges, peers, the peer's queue).
    Overload,
    /// Multicast requests must be NON (RFC 7252 §8.1).
    ConfirmableMulticast,
    /// The token is already used by another outstanding request.
    TokenInUse,
    /// The request does not fit into a datagram.
    TooLarge,
    /// The request has already ended.
    UnknownRequest,
    /// OSCORE cannot protect this request: no such context, or it goes to a group (a
    /// pairwise context protects unicast only).
    #[cfg(feature = "oscore")]
    Oscore,
}

impl core::fmt::Display for RequestError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RequestError::Overload => "too many outstanding requests",
            RequestError::ConfirmableMulticast => "a multicast request must be non-confirmable",
            RequestError::TokenInUse => "token already in use by an outstanding request",
            RequestError::TooLarge => "request too large",
            RequestError::UnknownRequest => "request already ended",
            #[cfg(feature = "oscore")]
            RequestError::Oscore => {
                "OSCORE cannot protect this request (no such context, or a multicast one)"
            }
        })
    }
}

impl core::error::Error for RequestError {}

/// Why a response could not be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RespondError {
    /// The request was already answered or has expired.
    UnknownRequest,
    /// The response does not fit into a datagram.
    TooLarge,
    /// No buffer or peer slot was free.
    Overload,
}

impl core::fmt::Display for RespondError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RespondError::UnknownRequest => "request already answered or expired",
            RespondError::TooLarge => "response does not fit into one datagram",
            RespondError::Overload => "no buffer free for the response",
        })
    }
}

impl core::error::Error for RespondError {}
