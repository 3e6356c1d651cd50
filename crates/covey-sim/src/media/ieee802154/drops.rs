//! Datagrams the medium gives up on: the record its drop trace hook receives for each, and
//! counts by cause.
//!
//! A drop is what the `losses` of [`MediumStats`](super::super::MediumStats) count: one per datagram,
//! at the node that gave up on it (a full queue, a channel access failure, retries run out,
//! an unacknowledged frame lost at its receiver). A frame lost at a receiver and then retried
//! successfully is no drop; it shows in the receiver's `rx_collisions` or `rx_channel_errors`.

use covey_proto::Instant;

use super::super::{LossCause, NodeId};

/// One datagram dropped, as the drop trace hook sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropTrace {
    /// When the medium gave up on it.
    pub at: Instant,
    /// The node that gave up on it (its origin, or a forwarder).
    pub node: NodeId,
    /// The packet handle given to `send`.
    pub packet: u64,
    /// Why; after exhausted retries, the cause of the last failed attempt.
    pub cause: LossCause,
}

/// The hook a medium calls for every dropped datagram.
pub type DropTraceHook = Box<dyn FnMut(&DropTrace) + Send>;

/// Dropped datagrams by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Refused by a full MAC queue.
    pub queue_full: u64,
    /// Given up after macMaxCSMABackoffs + 1 busy CCAs.
    pub channel_access_failure: u64,
    /// Last attempt lost to an overlapping transmission at the receiver.
    pub collision: u64,
    /// Last attempt corrupted by the channel (fading, interference).
    pub channel: u64,
    /// Retries ran out with the receiver hearing nothing (or no such receiver).
    pub retries_exhausted: u64,
    /// Too large to carry, even fragmented.
    pub too_large: u64,
}

impl DropCounts {
    /// Every cause, in the order [`DropCounts::iter`] lists them.
    pub const CAUSES: [LossCause; 6] = [
        LossCause::QueueFull,
        LossCause::ChannelAccessFailure,
        LossCause::Collision,
        LossCause::Channel,
        LossCause::RetriesExhausted,
        LossCause::TooLarge,
    ];

    /// Counts one drop of `cause`.
    pub fn add(&mut self, cause: LossCause) {
        *self.slot(cause) += 1;
    }

    /// Drops counted for `cause`.
    pub fn of(&self, cause: LossCause) -> u64 {
        match cause {
            LossCause::QueueFull => self.queue_full,
            LossCause::ChannelAccessFailure => self.channel_access_failure,
            LossCause::Collision => self.collision,
            LossCause::Channel => self.channel,
            LossCause::RetriesExhausted => self.retries_exhausted,
            LossCause::TooLarge => self.too_large,
        }
    }

    /// Drops of every cause.
    pub fn total(&self) -> u64 {
        Self::CAUSES.iter().map(|&c| self.of(c)).sum()
    }

    /// Each cause with its count.
    pub fn iter(&self) -> impl Iterator<Item = (LossCause, u64)> + '_ {
        Self::CAUSES.iter().map(|&c| (c, self.of(c)))
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &DropCounts) {
        for (cause, n) in other.iter() {
            *self.slot(cause) += n;
        }
    }

    fn slot(&mut self, cause: LossCause) -> &mut u64 {
        match cause {
            LossCause::QueueFull => &mut self.queue_full,
            LossCause::ChannelAccessFailure => &mut self.channel_access_failure,
            LossCause::Collision => &mut self.collision,
            LossCause::Channel => &mut self.channel,
            LossCause::RetriesExhausted => &mut self.retries_exhausted,
            LossCause::TooLarge => &mut self.too_large,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_cause_apart() {
        let mut counts = DropCounts::default();
        for (i, cause) in DropCounts::CAUSES.into_iter().enumerate() {
            for _ in 0..=i {
                counts.add(cause);
            }
        }
        let listed: Vec<u64> = counts.iter().map(|(_, n)| n).collect();
        assert_eq!(listed, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(counts.total(), 21);
        let mut twice = counts;
        twice.merge(&counts);
        assert_eq!(twice.of(LossCause::TooLarge), 12);
    }
}
