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
    /// The answer's code is no response code (classes 2, 4 and 5 only): a format error.
    InvalidResponseCode,
    /// A Block2 answer is not the block asked for (RFC 7959 §2.4).
    UnexpectedBlock {
        /// The byte offset asked for.
        asked: u32,
        /// The byte offset of the block that came.
        got: u32,
    },
    /// A Block2 block with more to come is shorter than its size (RFC 7959 §2.2).
    ShortBlock {
        /// The byte offset of that block.
        offset: u32,
    },
    /// A block-wise body grew past the Size2 its server announced by more than one block.
    Size2Exceeded {
        /// The announced size, in bytes.
        size2: u32,
    },
    /// A block-wise body grew past `Config::max_body_size`.
    ResponseTooLarge,
    /// The response to an OSCORE-protected request did not verify with its context (or was
    /// a success answered unprotected).
    #[cfg(feature = "oscore")]
    UnverifiedResponse,
    /// A message of an OSCORE-protected request could not be protected: its context's
    /// sequence numbers are used up (or reserved ones are), or it is too large.
    #[cfg(feature = "oscore")]
    ProtectionFailed,
}

impl core::fmt::Display for Failure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let text = match self {
            Failure::Timeout => "timed out",
            Failure::Reset => "reset by peer",
            Failure::Cancelled => "cancelled",
            Failure::Overload => "local resources exhausted",
            Failure::Unreachable => "peer unreachable",
            Failure::ProtocolError => "protocol error in the response",
            Failure::MessageIdsExhausted => "no message ID free for reuse towards the peer",
            Failure::InvalidResponseCode => {
                "the answer's code is no response code (2.xx, 4.xx or 5.xx)"
            }
            Failure::ResponseTooLarge => {
                "the block-wise body grew past the largest this client takes (max_body_size)"
            }
            #[cfg(feature = "oscore")]
            Failure::UnverifiedResponse => "the response failed OSCORE verification",
            #[cfg(feature = "oscore")]
            Failure::ProtectionFailed => {
                "the request could not be OSCORE-protected (sequence numbers used up?)"
            }
            Failure::UnexpectedBlock { asked, got } => {
                return write!(
                    f,
                    "the server sent the Block2 block at byte {got} when byte {asked} was asked for"
                )
            }
            Failure::ShortBlock { offset } => {
                return write!(
                    f,
                    "the server sent a short Block2 block at byte {offset} with more to come"
                )
            }
            Failure::Size2Exceeded { size2 } => {
                return write!(
                    f,
                    "the block-wise body grew past the {size2} bytes its server announced (Size2)"
                )
            }
        };
        f.write_str(text)
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
