//! A MAC data frame: one whole datagram or one 6LoWPAN fragment of it, on one hop.

use super::super::{Destination, NodeId};

/// A data frame waiting in a MAC queue or on the air.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacFrame {
    /// The simulator's packet handle.
    pub packet: u64,
    /// The node that sent the datagram.
    pub origin: NodeId,
    /// The datagram's final receiver(s).
    pub destination: Destination,
    /// UDP payload bytes of the whole datagram.
    pub payload_bytes: usize,
    /// This hop's MAC receiver; `None` for a broadcast frame.
    pub hop_to: Option<NodeId>,
    /// Index of this fragment.
    pub fragment: usize,
    /// Fragments of the datagram on this hop.
    pub fragments: usize,
    /// MPDU bytes: MAC framing, 6LoWPAN headers and payload.
    pub mpdu_bytes: usize,
}
