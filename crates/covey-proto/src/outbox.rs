//! Datagrams waiting for `poll_transmit`: encoded once into reusable buffers, or referring
//! to a retransmission copy or a cached reply so nothing is copied twice.

use crate::reply_cache::ReplyRef;
use crate::storage::slab::SlabKey;
use crate::wire::DatagramBuf;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::net::SocketAddr;

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
    Incoming(SlabKey),
}

#[derive(Debug)]
pub(crate) struct Outbox {
    bufs: Vec<DatagramBuf>,
    free: Vec<usize>,
    queue: VecDeque<(SocketAddr, OutSource)>,
    queue_capacity: usize,
}

impl Outbox {
    pub fn new(slots: usize, queue_capacity: usize, max_message_size: usize) -> Outbox {
        Outbox {
            bufs: (0..slots)
                .map(|_| DatagramBuf::new(max_message_size))
                .collect(),
            free: (0..slots).rev().collect(),
            queue: VecDeque::with_capacity(queue_capacity),
            queue_capacity,
        }
    }

    /// A free buffer to encode into; give it back with `push_slot` or `release`.
    pub fn take_slot(&mut self) -> Option<usize> {
        if self.queue.len() >= self.queue_capacity {
            return None;
        }
        self.free.pop()
    }

    pub fn buf_mut(&mut self, slot: usize) -> &mut DatagramBuf {
        &mut self.bufs[slot]
    }

    pub fn buf(&self, slot: usize) -> &[u8] {
        self.bufs[slot].as_slice()
    }

    pub fn release(&mut self, slot: usize) {
        self.bufs[slot].clear();
        self.free.push(slot);
    }

    /// Queues a datagram; false when the queue is full.
    pub fn push(&mut self, destination: SocketAddr, source: OutSource) -> bool {
        if self.queue.len() >= self.queue_capacity {
            if let OutSource::Slot(s) = source {
                self.release(s);
            }
            return false;
        }
        self.queue.push_back((destination, source));
        true
    }

    pub fn pop(&mut self) -> Option<(SocketAddr, OutSource)> {
        self.queue.pop_front()
    }
}
