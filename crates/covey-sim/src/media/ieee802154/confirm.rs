//! The sender's confirm of each datagram offered (MCPS-DATA.confirm): how the origin's MAC
//! fared with it on its first hop, when that was decided, and at what cost in transmissions.

use covey_proto::Instant;

use super::super::{LossCause, NodeId};

/// How a datagram fared at its origin's MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfirmStatus {
    /// The next hop got the whole datagram (a broadcast: it went on the air).
    Delivered,
    /// The origin gave up on it; the cause is the one its drop trace and counters carry.
    /// `Collision`, `Channel` and `RetriesExhausted` all mean the retries ran out without an
    /// ACK (NO_ACK), and name why the last attempt failed.
    Lost(LossCause),
}

/// The outcome of one datagram offered with `send`, at its origin.
///
/// The status is the medium's truth, as its counters keep it: a datagram whose every fragment
/// arrived but whose last ACKs were all lost is `Delivered` with `acked` false, where a real
/// MAC would report NO_ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirm {
    /// The packet handle given to `send`.
    pub packet: u64,
    /// The origin.
    pub node: NodeId,
    /// When the outcome was decided: the end of the last ACK, the give-up, or the offer itself
    /// if the queue refused it.
    pub at: Instant,
    /// Delivered or lost, and why.
    pub status: ConfirmStatus,
    /// Data frames the origin put on the air for it, fragments and retries included.
    pub transmissions: u32,
    /// Whether the origin received the ACK of its last frame.
    pub acked: bool,
}

impl Confirm {
    /// Whether the next hop got the datagram.
    pub fn delivered(&self) -> bool {
        self.status == ConfirmStatus::Delivered
    }
}
