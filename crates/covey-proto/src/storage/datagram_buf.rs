//! One stored datagram in a buffer from the [`BufferPool`], and the per-slot buffers of a
//! table, created as the table's slots are.

use super::buffer_pool::BufferPool;
use alloc::boxed::Box;
use alloc::vec::Vec;
use covey_core::EncodeError;

/// A datagram held in a pooled buffer; empty ones hold no memory.
#[derive(Debug, Default)]
pub(crate) struct DatagramBuf {
    data: Box<[u8]>,
    len: usize,
}

impl DatagramBuf {
    /// The datagram held.
    pub fn as_slice(&self) -> &[u8] {
        &self.data[..self.len]
    }

    /// Makes room for `size` bytes, trading the buffer for a bigger class if needed.
    fn reserve(&mut self, size: usize, pool: &mut BufferPool) -> &mut [u8] {
        if self.data.len() < size {
            let bigger = pool.take(size);
            if bigger.len() > self.data.len() {
                pool.give(core::mem::replace(&mut self.data, bigger));
            } else {
                pool.give(bigger);
            }
        }
        &mut self.data
    }

    /// Replaces the content with what `write` puts into a buffer of at least `size_bound`
    /// bytes; on error the buffer is left empty.
    pub fn write_with(
        &mut self,
        size_bound: usize,
        pool: &mut BufferPool,
        write: impl FnOnce(&mut [u8]) -> Result<usize, EncodeError>,
    ) -> Result<(), EncodeError> {
        let result = write(self.reserve(size_bound, pool));
        self.len = *result.as_ref().unwrap_or(&0);
        result.map(|_| ())
    }

    /// Replaces the content with `bytes`; false (and empty) when they do not fit.
    pub fn copy_from(&mut self, bytes: &[u8], pool: &mut BufferPool) -> bool {
        match self.reserve(bytes.len(), pool).get_mut(..bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len = bytes.len();
                true
            }
            None => {
                self.len = 0;
                false
            }
        }
    }

    /// Overwrites the message ID of the datagram held (bytes 2–3).
    #[cfg(feature = "client")]
    pub fn set_message_id(&mut self, mid: u16) {
        if self.len >= 4 {
            self.data[2..4].copy_from_slice(&mid.to_be_bytes());
        }
    }

    /// Empties the buffer and gives its memory back to the pool.
    pub fn release(&mut self, pool: &mut BufferPool) {
        self.len = 0;
        pool.give(core::mem::take(&mut self.data));
    }
}

/// One buffer per slot of a table, created when the slot first holds a datagram.
#[derive(Debug, Default)]
pub(crate) struct SlotBufs(Vec<DatagramBuf>);

impl SlotBufs {
    /// The datagram of slot `index` (empty when it has none).
    pub fn get(&self, index: usize) -> &[u8] {
        self.0.get(index).map_or(&[], DatagramBuf::as_slice)
    }

    /// The buffer of slot `index`, created if needed.
    pub fn slot(&mut self, index: usize) -> &mut DatagramBuf {
        if index >= self.0.len() {
            self.0.resize_with(index + 1, DatagramBuf::default);
        }
        &mut self.0[index]
    }

    /// Empties slot `index` and gives its memory back to the pool.
    pub fn release(&mut self, index: usize, pool: &mut BufferPool) {
        if let Some(buf) = self.0.get_mut(index) {
            buf.release(pool);
        }
    }
}
