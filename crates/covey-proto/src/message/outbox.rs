//! Datagrams waiting for `poll_transmit`: encoded once into reusable buffers, or referring
//! to a retransmission copy or a cached reply so nothing is copied twice.

use crate::message::reply_cache::ReplyRef;
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::{DatagramBuf, SlotBufs};
use crate::storage::fifo::Fifo;
use crate::storage::slab::SlabKey;
use alloc::vec::Vec;
use core::net::SocketAddr;

/// One of the endpoint's local socket addresses, interned (0: unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LocalId(pub u16);

/// Where the bytes of a queued datagram are.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OutSource {
    /// An outbox buffer of its own.
    Slot(usize),
    /// The current copy of a CON awaiting its ACK.
    Transmission(SlabKey),
    /// A cached reply to a duplicate.
    Reply(ReplyRef),
    /// A response held by an incoming exchange (multicast leisure).
    #[cfg(feature = "multicast")]
    Incoming(SlabKey),
}

/// Slots and the queue grow on demand up to their bounds.
#[derive(Debug)]
pub(crate) struct Outbox {
    bufs: SlotBufs,
    free: Vec<usize>,
    slots_created: usize,
    max_slots: usize,
    queue: Fifo<(SocketAddr, OutSource, LocalId)>,
    queue_capacity: usize,
}

impl Outbox {
    pub fn new(slots: usize, queue_capacity: usize) -> Outbox {
        Outbox {
            bufs: SlotBufs::default(),
            free: Vec::new(),
            slots_created: 0,
            max_slots: slots,
            queue: Fifo::new(),
            queue_capacity,
        }
    }

    /// A free buffer to encode into; give it back with `push_slot` or `release`.
    pub fn take_slot(&mut self) -> Option<usize> {
        if self.queue.len() >= self.queue_capacity {
            return None;
        }
        if let Some(slot) = self.free.pop() {
            return Some(slot);
        }
        if self.slots_created < self.max_slots {
            self.slots_created += 1;
            // Room to take every slot back without growing later.
            self.free.reserve(self.slots_created);
            return Some(self.slots_created - 1);
        }
        None
    }

    pub fn buf_mut(&mut self, slot: usize) -> &mut DatagramBuf {
        self.bufs.slot(slot)
    }

    pub fn buf(&self, slot: usize) -> &[u8] {
        self.bufs.get(slot)
    }

    pub fn release(&mut self, slot: usize, pool: &mut BufferPool) {
        self.bufs.release(slot, pool);
        self.free.push(slot);
    }

    /// Queues a datagram; false when the queue is full.
    pub fn push(
        &mut self,
        destination: SocketAddr,
        source: OutSource,
        local: LocalId,
        pool: &mut BufferPool,
    ) -> bool {
        if self.queue.len() >= self.queue_capacity {
            if let OutSource::Slot(s) = source {
                self.release(s, pool);
            }
            return false;
        }
        self.queue.push_back((destination, source, local));
        true
    }

    /// True when no datagram is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn pop(&mut self) -> Option<(SocketAddr, OutSource, LocalId)> {
        self.queue.pop_front()
    }
}
