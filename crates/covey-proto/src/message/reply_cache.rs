//! Replies kept to answer duplicate CONs: a ring of buffers, oldest overwritten first.

use crate::message::wire::Outgoing;
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::DatagramBuf;
use alloc::vec::Vec;
use covey_core::EncodeError;

/// Where a cached reply lives; stale once its slot is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyRef {
    slot: u32,
    generation: u32,
}

/// The ring grows slot by slot up to its capacity, then overwrites.
#[derive(Debug)]
pub(crate) struct ReplyCache {
    slots: Vec<(DatagramBuf, u32)>,
    capacity: usize,
    next: usize,
}

impl ReplyCache {
    pub fn new(capacity: usize) -> ReplyCache {
        ReplyCache {
            slots: Vec::new(),
            capacity: capacity.max(1),
            next: 0,
        }
    }

    /// Encodes `m` straight into the oldest slot.
    pub fn encode(
        &mut self,
        m: &Outgoing<'_>,
        pool: &mut BufferPool,
    ) -> Result<ReplyRef, EncodeError> {
        let slot = self.next;
        if slot == self.slots.len() {
            self.slots.push((DatagramBuf::default(), 0));
        }
        let (buf, generation) = &mut self.slots[slot];
        // Whatever referred to this slot is stale from here on, even if encoding fails.
        *generation = generation.wrapping_add(1);
        buf.encode(m, pool)?;
        let generation = *generation;
        self.next = (self.next + 1) % self.capacity;
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
