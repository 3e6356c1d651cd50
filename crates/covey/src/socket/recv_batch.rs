//! Receive buffers for one recvmmsg batch, allocated once.

use std::io::IoSliceMut;
use std::net::SocketAddr;

use quinn_udp::RecvMeta;

/// Upper bound on the memory of one batch.
const MAX_BATCH_BYTES: usize = 2 << 20;

/// Buffers and metadata for one batched receive (recvmmsg) of up to 32 datagrams.
#[derive(Debug)]
pub struct RecvBatch {
    data: Vec<u8>,
    slot: usize,
    slots: usize,
    meta: Vec<RecvMeta>,
}

impl Default for RecvBatch {
    /// An empty placeholder (no slots).
    fn default() -> RecvBatch {
        RecvBatch {
            data: Vec::new(),
            slot: 1,
            slots: 0,
            meta: Vec::new(),
        }
    }
}

impl RecvBatch {
    /// Buffers for datagrams of up to `max_datagram` bytes, with room for `gro_segments`
    /// coalesced datagrams per slot. A slot is larger than `max_datagram`, so a truncated
    /// datagram is always longer than the engine accepts and is dropped there.
    pub(crate) fn new(max_datagram: usize, gro_segments: usize) -> RecvBatch {
        let slot = (max_datagram + 1).max(1500) * gro_segments.max(1);
        let slots = (MAX_BATCH_BYTES / slot).clamp(1, quinn_udp::BATCH_SIZE);
        RecvBatch {
            data: vec![0; slot * slots],
            slot,
            slots,
            meta: vec![RecvMeta::default(); slots],
        }
    }

    /// The datagrams of a receive that filled `count` slots, each with its sender (IPv4
    /// senders on a dual-stack socket as plain IPv4).
    pub fn received(&self, count: usize) -> impl Iterator<Item = (SocketAddr, &[u8])> + '_ {
        (0..count.min(self.slots))
            .flat_map(move |i| self.datagrams(i))
            .map(|(meta, d)| (super::canonical_socket_addr(meta.addr), d))
    }

    /// The slices and metadata to receive into.
    pub(crate) fn parts(
        &mut self,
    ) -> (
        [IoSliceMut<'_>; quinn_udp::BATCH_SIZE],
        &mut [RecvMeta],
        usize,
    ) {
        let mut chunks = self.data.chunks_mut(self.slot);
        let slices = std::array::from_fn(|_| IoSliceMut::new(chunks.next().unwrap_or_default()));
        (slices, &mut self.meta, self.slots)
    }

    /// Each datagram of slot `i` (several when the kernel coalesced them), with its metadata.
    pub(crate) fn datagrams(&self, i: usize) -> impl Iterator<Item = (&RecvMeta, &[u8])> + '_ {
        let meta = &self.meta[i];
        let start = i * self.slot;
        let len = meta.len.min(self.slot);
        let stride = if meta.stride == 0 {
            len.max(1)
        } else {
            meta.stride
        };
        self.data[start..start + len]
            .chunks(stride)
            .map(move |d| (meta, d))
    }
}
