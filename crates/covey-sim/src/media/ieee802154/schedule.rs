//! The medium's own timeline: MAC and PHY events ordered by time, ties in scheduling order so
//! a run is deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use covey_proto::Instant;

use super::super::NodeId;

/// Something the medium must do at a given instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacEvent {
    /// A node's random backoff ends: start the CCA.
    BackoffEnd(NodeId),
    /// A node's CCA ends: judge the channel.
    CcaEnd(NodeId),
    /// A node's RX-to-TX turnaround ends: the head frame goes on the air.
    TxStart(NodeId),
    /// A node's data frame leaves the air.
    TxEnd(NodeId),
    /// The receiver starts its ACK after the turnaround.
    AckStart {
        /// The node acknowledging.
        acker: NodeId,
        /// The data frame's sender.
        sender: NodeId,
        /// The sender's attempt being acknowledged.
        attempt: u64,
    },
    /// An ACK leaves the air.
    AckEnd {
        /// The node acknowledging.
        acker: NodeId,
        /// The data frame's sender.
        sender: NodeId,
        /// When the ACK started.
        start: Instant,
        /// The sender's attempt being acknowledged.
        attempt: u64,
    },
    /// macAckWaitDuration has passed for a sender's attempt.
    AckTimeout {
        /// The data frame's sender.
        sender: NodeId,
        /// The attempt waited for.
        attempt: u64,
    },
    /// A node's interframe space ends.
    IfsEnd(NodeId),
    /// A Contiki csma.c neighbour-queue timer (`transmit_packet_list`) fires.
    ContikiTimer {
        /// The node.
        node: NodeId,
        /// The timer armed.
        token: u64,
    },
    /// SMRF's forwarding timer (`mcast_fwd`) fires.
    SmrfForward {
        /// The node.
        node: NodeId,
        /// The timer armed.
        token: u64,
    },
    /// A packet's last byte reaches the border router over SLIP.
    SlipArrived,
    /// The border router's CPU is free to run `slip_process`.
    SlipDrain,
    /// A packet written up the SLIP line reaches the host.
    SlipUp {
        /// The packet.
        packet: u64,
        /// The gateway node it is delivered to.
        to: NodeId,
    },
}

/// Pending events, earliest first.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Instant, u64, EventSlot)>>,
    next_seq: u64,
}

/// Wraps an event so the heap orders by (time, sequence) only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EventSlot(MacEvent);

impl PartialOrd for EventSlot {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for EventSlot {
    fn cmp(&self, _other: &Self) -> std::cmp::Ordering {
        // Sequence numbers are unique, so the slot itself never decides the order.
        std::cmp::Ordering::Equal
    }
}

impl EventQueue {
    /// Schedules `event` at `at`.
    pub fn schedule(&mut self, at: Instant, event: MacEvent) {
        self.heap
            .push(Reverse((at, self.next_seq, EventSlot(event))));
        self.next_seq += 1;
    }

    /// When the earliest event is due.
    pub fn next_time(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Removes and returns the earliest event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, MacEvent)> {
        if self.next_time()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse((at, _, slot))| (at, slot.0))
    }
}
