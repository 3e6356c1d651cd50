//! Replies kept to answer duplicate CONs: a ring of buffers, oldest overwritten first.

use crate::wire::{DatagramBuf, Outgoing};
use alloc::vec::Vec;
use covey_core::EncodeError;

/// Where a cached reply lives; stale once its slot is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyRef {
    slot: u32,
    generation: u32,
}

#[derive(Debug)]
pub(crate) struct ReplyCache {
    slots: Vec<(DatagramBuf, u32)>,
    next: usize,
}

impl ReplyCache {
    pub fn new(capacity: usize, max_message_size: usize) -> ReplyCache {
        ReplyCache {
            slots: (0..capacity.max(1))
                .map(|_| (DatagramBuf::new(max_message_size), 0))
                .collect(),
            next: 0,
        }
    }

    /// Encodes `m` straight into the oldest slot.
    pub fn encode(&mut self, m: &Outgoing<'_>) -> Result<ReplyRef, EncodeError> {
        let slot = self.next;
        let count = self.slots.len();
        let (buf, generation) = &mut self.slots[slot];
        // Whatever referred to this slot is stale from here on, even if encoding fails.
        *generation = generation.wrapping_add(1);
        buf.encode(m)?;
        let generation = *generation;
        self.next = (self.next + 1) % count;
        Ok(ReplyRef {
            slot: slot as u32,
            generation,
        })
    }

    /// The reply, unless it was overwritten since.
    pub fn get(&self, r: ReplyRef) -> Option<&[u8]> {
        self.slots
            .get(r.slot as usize)
            .filter(|(_, g)| *g == r.generation)
            .map(|(b, _)| b.as_slice())
    }
}
