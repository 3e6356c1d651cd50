//! What the endpoint tells the application, and the handles it hands out.

use crate::storage::slab::SlabKey;

/// An outgoing request (client exchange) started with `send_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub(crate) SlabKey);

/// An incoming request waiting for the application's response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IncomingId(pub(crate) SlabKey);

/// A received response held for the application until its next `poll_event` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResponseKey(pub(crate) SlabKey);

/// An application timer set with `set_timer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerId(pub(crate) SlabKey);

/// Why an outgoing request ended without a (further) response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// No ACK after MAX_RETRANSMIT retransmissions, or no response in time.
    Timeout,
    /// The peer answered with RST.
    Reset,
    /// The application cancelled it.
    Cancelled,
    /// A table was full or the request could not be encoded.
    Overload,
    /// The network reported the peer unreachable (e.g. an ICMP error).
    Unreachable,
    /// The response violated the protocol (e.g. a changed ETag during a block-wise transfer).
    ProtocolError,
    /// No message ID towards the peer is free for reuse yet: 65 536 were used within
    /// `Config::mid_reuse_interval` (RFC 7252 §4.4).
    MessageIdsExhausted,
}

impl core::fmt::Display for Failure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Failure::Timeout => "timed out",
            Failure::Reset => "reset by peer",
            Failure::Cancelled => "cancelled",
            Failure::Overload => "local resources exhausted",
            Failure::Unreachable => "peer unreachable",
            Failure::ProtocolError => "protocol error in the response",
            Failure::MessageIdsExhausted => "no message ID free for reuse towards the peer",
        })
    }
}

impl core::error::Error for Failure {}

/// Something the application must look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A request arrived; read it with `Endpoint::request` and answer with `respond`.
    Request(IncomingId),
    /// A response to request `id`; read it with `Endpoint::response(key)` before the next
    /// `poll_event`. `last` is false while more may follow (observe, multicast).
    Response {
        /// The request answered.
        id: RequestId,
        /// Where the response is held.
        key: ResponseKey,
        /// True when the exchange is over with this response.
        last: bool,
    },
    /// Request `id` ended without a (further) response.
    Failed {
        /// The request.
        id: RequestId,
        /// Why.
        failure: Failure,
    },
    /// No further responses will come for request `id` (its multicast window closed).
    Finished(RequestId),
    /// A ping (empty CON) was answered with RST: the peer is alive.
    Pong(RequestId),
    /// An application timer fired, with the value it was set with.
    Timer(u64),
}

/// Which App of a node owns an exchange or a timer, so an [`AppSet`](crate::AppSet) can
/// route the engine's events back to it. A lone App is `AppId(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct AppId(pub u16);
