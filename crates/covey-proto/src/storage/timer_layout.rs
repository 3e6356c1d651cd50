//! The engine's timers in one queue: each kind of timer has a dense range of ids.

use crate::config::Config;
use crate::storage::slab::SlabKey;

/// Kinds of timers, each with a dense range of ids in the timer queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimerKind {
    Transmission,
    Exchange,
    Incoming,
    /// The one timer of block-wise state expiry (idle uploads, cached bodies).
    BlockExpiry,
}

/// Where each kind's ids start in the timer queue, and how many ids there are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimerLayout {
    exchange_base: usize,
    incoming_base: usize,
    block_expiry: usize,
    pub total: usize,
}

impl TimerLayout {
    pub fn new(config: &Config) -> TimerLayout {
        let transmissions = config.max_exchanges + config.max_incoming;
        let exchange_base = transmissions;
        let incoming_base = exchange_base + config.max_exchanges;
        let block_expiry = incoming_base + config.max_incoming;
        TimerLayout {
            exchange_base,
            incoming_base,
            block_expiry,
            total: block_expiry + 1,
        }
    }

    pub fn id(&self, kind: TimerKind, key: SlabKey) -> usize {
        key.index()
            + match kind {
                TimerKind::Transmission => 0,
                TimerKind::Exchange => self.exchange_base,
                TimerKind::Incoming => self.incoming_base,
                TimerKind::BlockExpiry => self.block_expiry,
            }
    }

    /// The id of the one block-expiry timer.
    #[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
    pub fn block_expiry_id(&self) -> usize {
        self.block_expiry
    }

    pub fn decode(&self, id: usize) -> (TimerKind, usize) {
        if id >= self.block_expiry {
            (TimerKind::BlockExpiry, 0)
        } else if id >= self.incoming_base {
            (TimerKind::Incoming, id - self.incoming_base)
        } else if id >= self.exchange_base {
            (TimerKind::Exchange, id - self.exchange_base)
        } else {
            (TimerKind::Transmission, id)
        }
    }
}
