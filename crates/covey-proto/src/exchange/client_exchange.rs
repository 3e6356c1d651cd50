//! A request this endpoint sent (RFC 7252 §5.3): its peer, token and state, and what
//! Observe and block-wise transfers keep for it.

use crate::event::AppId;
use crate::message::peer::PeerKey;
use crate::storage::slab::SlabKey;
use crate::Instant;
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::net::SocketAddr;
use covey_core::{Block, Token};

/// Where a client exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExchangeState {
    /// Waiting for an NSTART slot or a reusable message ID.
    Queued,
    /// A CON sent, waiting for its ACK (the transmission key).
    AwaitingAck(SlabKey),
    /// ACKed (a separate response will follow) or sent as NON.
    AwaitingResponse,
    /// An established observation waiting for notifications.
    Observing,
}

/// What a client exchange is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ExchangeKind {
    #[default]
    Request,
    Ping,
}

/// An outgoing request and its progress.
#[derive(Debug)]
pub(crate) struct ClientExchange {
    pub remote: SocketAddr,
    pub peer: PeerKey,
    pub token: Token,
    pub confirmable: bool,
    pub kind: ExchangeKind,
    pub state: ExchangeState,
    /// Next exchange in the peer's NSTART queue.
    pub next_queued: Option<SlabKey>,
    /// Whether this exchange holds one of the peer's NSTART slots.
    pub counted: bool,
    /// Retransmissions its CON needed (for stats).
    pub retransmissions: u8,
    /// Sent to a group: every response is delivered until the window closes.
    pub multicast: bool,
    /// An Observe registration: notifications keep the exchange alive.
    pub observe: Option<ObserveState>,
    /// Block-wise transfer state, allocated only for transfers that need it.
    pub transfer: Option<Box<BlockTransfer>>,
    /// Times it was sent again with a server's Echo value (RFC 9175).
    pub echo_retries: u8,
    /// The App that started it.
    pub owner: AppId,
    /// What protects an OSCORE request and binds its responses.
    #[cfg(feature = "oscore")]
    pub oscore: Option<ProtectedExchange>,
}

/// An exchange whose requests are OSCORE-protected (RFC 8613 §8.1): each message it sends
/// (the first, each block, one repeated with Echo) is protected anew under `context`, and
/// the answer is verified against the last one.
#[cfg(feature = "oscore")]
#[derive(Debug, Clone)]
pub(crate) struct ProtectedExchange {
    /// Index of the security context in the endpoint's OSCORE contexts.
    pub context: usize,
    /// The request last protected, which its response (or notifications) is bound to.
    pub request: Option<covey_oscore::RequestId>,
    /// The freshest notification's Partial IV (§7.4.1).
    pub notifications: covey_oscore::NotificationNumber,
    /// A response coming in outer Block2 blocks (§4.1.3.4.2, a proxy split it): the
    /// ciphertext so far and the block asked for next, with the request protected again
    /// under its own Partial IV.
    pub outer: Option<Box<OuterDownload>>,
    /// EDHOC message_3, which its first message carries (RFC 9668 §3.2); gone once sent.
    pub edhoc_message_3: Option<Vec<u8>>,
}

/// The outer blocks of a protected response so far.
#[cfg(feature = "oscore")]
#[derive(Debug, Clone)]
pub(crate) struct OuterDownload {
    /// The outer Block2 to ask for next.
    pub next: covey_core::Block,
    /// The protected message's payload so far.
    pub body: Vec<u8>,
}

/// Client side of an observation (RFC 7641 §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ObserveState {
    /// Observe value and arrival time of the freshest notification so far.
    pub freshest: Option<(u32, Instant)>,
}

/// A block-wise transfer in progress (RFC 7959): the body being uploaded with Block1 and
/// the body being downloaded with Block2.
#[derive(Debug, Default)]
pub(crate) struct BlockTransfer {
    /// Request body sent in Block1 blocks; empty when the request fits one datagram.
    pub upload: Vec<u8>,
    /// The Block1 block to send next.
    pub upload_block: Option<Block>,
    /// Response body assembled from Block2 blocks.
    pub download: Vec<u8>,
    /// The Block2 block to request next (None: the first request carries no Block2
    /// unless the application put one in for early negotiation).
    pub download_block: Option<Block>,
    /// ETag of the first block, which every later block must repeat.
    pub etag: Option<Token>,
    /// The body size the server announced (Size2), which bounds the download.
    pub size2: Option<u32>,
}

/// A queued confirmable exchange for `peer`, for the exchange layer's unit tests.
#[cfg(test)]
pub(crate) fn queued_for_test(peer: PeerKey, token: Token, kind: ExchangeKind) -> ClientExchange {
    ClientExchange {
        remote: "192.0.2.1:5683".parse().unwrap(),
        peer,
        token,
        confirmable: true,
        kind,
        state: ExchangeState::Queued,
        next_queued: None,
        counted: false,
        retransmissions: 0,
        multicast: false,
        observe: None,
        transfer: None,
        echo_retries: 0,
        owner: AppId(0),
        #[cfg(feature = "oscore")]
        oscore: None,
    }
}
