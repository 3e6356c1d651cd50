//! A confirmable message waiting for its ACK (RFC 7252 §4.2), and who waits for it.

use crate::message::peer::PeerKey;
use crate::storage::slab::SlabKey;
use crate::{Duration, Instant};
use core::net::SocketAddr;

/// Who is waiting for a transmission's ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransmissionOwner {
    /// A client request (the exchange key).
    #[cfg(feature = "client")]
    Request(SlabKey),
    /// A ping (empty CON) of a client exchange.
    #[cfg(feature = "client")]
    Ping(SlabKey),
    /// A separate CON response of the server.
    SeparateResponse,
    /// A CON notification to an observer, written from its round's representation.
    Notification(SlabKey),
    /// A ping (empty CON) checking an unverified client's address while the response to
    /// its request (the incoming key) waits.
    #[cfg(feature = "address-validation")]
    AddressCheck(SlabKey),
}

/// How a transmission ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransmissionEnd {
    Acknowledged,
    Reset,
    TimedOut,
}

/// A CON message waiting for its ACK.
#[derive(Debug)]
pub(crate) struct Transmission {
    pub peer: PeerKey,
    pub destination: SocketAddr,
    pub message_id: u16,
    pub owner: TransmissionOwner,
    /// Retransmissions sent so far.
    pub retransmissions: u8,
    pub base_rto: Duration,
    pub timeout: Duration,
    pub first_sent: Instant,
}
