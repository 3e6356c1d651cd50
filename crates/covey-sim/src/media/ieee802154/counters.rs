//! Every event counter of a node's MAC in one place: the [`NodeStats`] scenarios read, plus
//! busy CCAs, frames received and drops by cause, for one node or summed over the medium.

use super::drops::DropCounts;
use super::node::NodeStats;

/// All counters of one node's MAC, or their sum over nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MacCounters {
    /// Frames and ACKs sent, retries, channel access failures, receive failures.
    pub stats: NodeStats,
    /// CCAs that found the channel busy.
    pub cca_busy: u64,
    /// Intact data frames received, broadcasts and duplicates included.
    pub frames_received: u64,
    /// Datagrams this node gave up on, by cause.
    pub drops: DropCounts,
}

impl MacCounters {
    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &MacCounters) {
        // Destructured so that a new counter cannot be left out of the sum.
        let NodeStats {
            frames_sent,
            acks_sent,
            retries,
            channel_access_failures,
            retries_exhausted,
            queue_drops,
            rx_collisions,
            rx_channel_errors,
            forwarded,
            duplicates,
        } = other.stats;
        let s = &mut self.stats;
        s.frames_sent += frames_sent;
        s.acks_sent += acks_sent;
        s.retries += retries;
        s.channel_access_failures += channel_access_failures;
        s.retries_exhausted += retries_exhausted;
        s.queue_drops += queue_drops;
        s.rx_collisions += rx_collisions;
        s.rx_channel_errors += rx_channel_errors;
        s.forwarded += forwarded;
        s.duplicates += duplicates;
        self.cca_busy += other.cca_busy;
        self.frames_received += other.frames_received;
        self.drops.merge(&other.drops);
    }
}
