//! Responses held for the application until its next `poll_event`: each with its datagram
//! in a pooled slot, bounded by `Config::max_events`. The response an `Event::Response`
//! announced is released when the application polls again, so it reads it in place.

use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::SlotBufs;
use crate::storage::slab::{Slab, SlabKey};
use alloc::vec::Vec;
use core::net::SocketAddr;

/// A response held until the application's next `poll_event`.
#[derive(Debug)]
pub(crate) struct HeldResponse {
    pub source: SocketAddr,
    /// The whole body of a block-wise transfer.
    pub body: Option<Vec<u8>>,
}

/// The responses held for the application.
#[derive(Debug)]
pub(crate) struct HeldResponses {
    table: Slab<HeldResponse>,
    bufs: SlotBufs,
    /// The response the last polled event announced, released at the next poll.
    announced: Option<SlabKey>,
}

impl HeldResponses {
    /// Room for `capacity` responses.
    pub fn new(capacity: usize) -> HeldResponses {
        HeldResponses {
            table: Slab::with_capacity(capacity),
            bufs: SlotBufs::default(),
            announced: None,
        }
    }

    /// Holds the response `datagram` from `source` (with the whole `body` of a block-wise
    /// transfer); `None` when the table is full.
    pub fn hold(
        &mut self,
        source: SocketAddr,
        body: Option<Vec<u8>>,
        datagram: &[u8],
        pool: &mut BufferPool,
    ) -> Option<SlabKey> {
        let key = self.table.insert(HeldResponse { source, body }).ok()?;
        self.bufs.slot(key.index()).copy_from(datagram, pool);
        Some(key)
    }

    /// Held response `key` with its datagram.
    pub fn get(&self, key: SlabKey) -> Option<(&HeldResponse, &[u8])> {
        let held = self.table.get(key)?;
        Some((held, self.bufs.get(key.index())))
    }

    /// Forgets held response `key` and gives its buffer back.
    pub fn release(&mut self, key: SlabKey, pool: &mut BufferPool) {
        if self.table.remove(key).is_some() {
            self.bufs.release(key.index(), pool);
        }
    }

    /// The application polls again: the response announced last is released, and `next`
    /// (the one the event now handed out announces, if any) is released at the poll after.
    pub fn on_poll(&mut self, next: Option<SlabKey>, pool: &mut BufferPool) {
        if let Some(key) = self.announced.take() {
            self.release(key, pool);
        }
        self.announced = next;
    }
}
