//! The MAC state of one node: its queue, its random stream, where it is in CSMA/CA and
//! retries, and its counters.

use covey_proto::Instant;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::LossCause;
use super::csma::CsmaBackoff;
use super::drops::DropCounts;
use super::mac_queue::MacQueue;

/// Where a node's MAC is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacState {
    /// Nothing to send.
    Idle,
    /// Backing off or sensing before a transmission attempt.
    Contending,
    /// Turning around to transmit or transmitting.
    Transmitting,
    /// Waiting for the ACK of the head frame.
    AwaitingAck,
    /// In the interframe space after a frame.
    Spacing,
}

/// Per-node counters scenarios read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Data frames (fragments included) put on the air, retries included.
    pub frames_sent: u64,
    /// ACK frames put on the air.
    pub acks_sent: u64,
    /// Retransmissions of data frames after a missing ACK.
    pub retries: u64,
    /// Frames dropped after macMaxCSMABackoffs + 1 busy CCAs.
    pub channel_access_failures: u64,
    /// Frames dropped after macMaxFrameRetries retransmissions.
    pub retries_exhausted: u64,
    /// Datagrams refused by the full MAC queue.
    pub queue_drops: u64,
    /// Frames for this node lost to an overlapping transmission it heard.
    pub rx_collisions: u64,
    /// Frames for this node lost to the channel (fading, interference).
    pub rx_channel_errors: u64,
    /// Datagrams this node forwarded for others.
    pub forwarded: u64,
    /// Duplicate frames received (the ACK was lost) and acknowledged again.
    pub duplicates: u64,
}

/// One node's MAC.
#[derive(Debug, Clone)]
pub struct NodeMac {
    /// Frames waiting; the head is the frame being sent.
    pub queue: MacQueue,
    /// The node's own random stream (backoffs).
    pub rng: Xoshiro256PlusPlus,
    /// Where the MAC is.
    pub state: MacState,
    /// CSMA/CA state of the current attempt.
    pub csma: Option<CsmaBackoff>,
    /// Retransmissions of the head frame so far.
    pub retries: u8,
    /// Identifies the current attempt, so stale ACKs and timeouts are ignored.
    pub attempt: u64,
    /// When the head frame's current transmission started.
    pub tx_start: Instant,
    /// The radio sends an ACK until then and cannot start a data frame.
    pub ack_busy_until: Instant,
    /// Why the last attempt of the head frame failed at its receiver, if known.
    pub last_failure: Option<LossCause>,
    /// Counters.
    pub stats: NodeStats,
    /// Data frames put on the air for the head datagram so far, for its confirm.
    pub datagram_transmissions: u32,
    /// CCAs that found the channel busy.
    pub cca_busy: u64,
    /// Intact data frames received.
    pub frames_received: u64,
    /// Datagrams given up on, by cause.
    pub drops: DropCounts,
}

impl NodeMac {
    /// An idle node with an empty queue of `capacity` frames.
    pub fn new(capacity: usize, rng: Xoshiro256PlusPlus) -> Self {
        NodeMac {
            queue: MacQueue::new(capacity),
            rng,
            state: MacState::Idle,
            csma: None,
            retries: 0,
            attempt: 0,
            tx_start: Instant::ZERO,
            ack_busy_until: Instant::ZERO,
            last_failure: None,
            stats: NodeStats::default(),
            datagram_transmissions: 0,
            cca_busy: 0,
            frames_received: 0,
            drops: DropCounts::default(),
        }
    }
}
