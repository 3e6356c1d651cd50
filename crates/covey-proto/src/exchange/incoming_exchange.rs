//! A request received and not yet answered (RFC 7252 §5.2): where it came from and how
//! far its answer has got.

#[cfg(feature = "oscore")]
use crate::exchange::oscore_contexts::OscoreBinding;
use crate::message::dedup::DedupHandle;
#[cfg(feature = "address-validation")]
use crate::storage::slab::SlabKey;
use alloc::vec::Vec;
use core::net::{IpAddr, SocketAddr};
use covey_core::{Block, Token};

/// Where an incoming request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IncomingState {
    /// Waiting for the application's response.
    Waiting,
    /// Answered; the response waits for its leisure delay (multicast).
    #[cfg(feature = "multicast")]
    DelayedResponse,
}

/// A request the application has not answered yet.
#[derive(Debug)]
pub(crate) struct IncomingExchange {
    pub remote: SocketAddr,
    pub message_id: u16,
    pub token: Token,
    pub confirmable: bool,
    /// The group address it was sent to, when it came by multicast.
    #[cfg(feature = "multicast")]
    pub group: Option<IpAddr>,
    /// The local socket address it arrived on, if known.
    pub local: Option<SocketAddr>,
    /// Whether it came in on the loopback interface, if known.
    pub on_loopback: Option<bool>,
    /// The unicast address it was sent to, if known.
    pub destination: Option<IpAddr>,
    /// Its deduplication entry.
    pub dedup: DedupHandle,
    /// Answered by the engine from a cached block-wise body.
    #[cfg(feature = "block2-cache")]
    pub from_cache: bool,
    /// An empty ACK was sent: the response must be separate.
    pub acked: bool,
    pub state: IncomingState,
    /// The whole body of a Block1 upload.
    pub body: Option<Vec<u8>>,
    /// The last Block1 block of an upload, echoed in the response.
    pub block1: Option<Block>,
    /// The Block2 block the client asked for.
    pub block2: Option<Block>,
    /// The request's Observe option.
    pub observe: ObserveRequest,
    /// Whether its sender's address was checked with a ping before a large response.
    #[cfg(feature = "address-validation")]
    pub address_check: AddressCheck,
    /// The security context and Partial IV of a request that came OSCORE-protected.
    #[cfg(feature = "oscore")]
    pub oscore: Option<OscoreBinding>,
}

/// Where the check of an unverified sender's address stands (see `address_check`).
#[cfg(feature = "address-validation")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddressCheck {
    /// Not tried.
    None,
    /// A ping (this transmission) is out; the response waits in the body cache.
    Pending(SlabKey),
    /// Answered or timed out: the response went (whole or cut), never held again.
    Done,
}

impl IncomingExchange {
    /// Whether a response sliced into blocks keeps its body for the later blocks: unless
    /// it came from a kept body, and never without the body cache.
    pub fn keeps_body(&self) -> bool {
        #[cfg(feature = "block2-cache")]
        return !self.from_cache;
        #[cfg(not(feature = "block2-cache"))]
        false
    }

    /// The group address it was sent to, when it came by multicast (never without the
    /// `multicast` feature).
    pub fn group(&self) -> Option<IpAddr> {
        #[cfg(feature = "multicast")]
        return self.group;
        #[cfg(not(feature = "multicast"))]
        None
    }

    /// Where its response goes.
    pub fn target(&self) -> ResponseTarget {
        ResponseTarget {
            remote: self.remote,
            message_id: self.message_id,
            token: self.token,
            confirmable: self.confirmable,
            acked: self.acked,
            dedup: self.dedup,
            #[cfg(feature = "oscore")]
            oscore: self.oscore,
        }
    }
}

/// What the client asked for with an Observe option in a GET/FETCH (RFC 7641 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObserveRequest {
    Register,
    Deregister,
    None,
}

impl ResponseTarget {
    /// The OSCORE context (index) the request was verified with, if it came protected.
    #[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
    pub fn oscore_context(&self) -> Option<usize> {
        #[cfg(feature = "oscore")]
        return self.oscore.map(|b| b.context);
        #[cfg(not(feature = "oscore"))]
        None
    }
}

/// Everything needed to address a response to a request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResponseTarget {
    pub remote: SocketAddr,
    pub message_id: u16,
    pub token: Token,
    pub confirmable: bool,
    pub acked: bool,
    /// The request's deduplication entry, which records the reply.
    pub dedup: DedupHandle,
    /// Set when the response must be OSCORE-protected.
    #[cfg(feature = "oscore")]
    pub oscore: Option<OscoreBinding>,
}
