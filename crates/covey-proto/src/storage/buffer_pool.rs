//! Datagram buffers by size class: taken when a message is stored, given back when it is
//! done with, and kept for reuse up to a byte budget, so steady state allocates nothing and
//! an idle endpoint holds almost nothing.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

/// Buffer sizes below the largest datagram; the largest class is `max_message_size`.
const CLASS_SIZES: [usize; 4] = [64, 128, 256, 512];
const CLASSES: usize = CLASS_SIZES.len() + 1;

/// Free buffers by size class.
#[derive(Debug)]
pub(crate) struct BufferPool {
    free: [Vec<Box<[u8]>>; CLASSES],
    max_message_size: usize,
    /// Bytes kept in free lists at most; buffers beyond go back to the allocator.
    retain_bytes: usize,
    retained: usize,
}

impl BufferPool {
    pub fn new(max_message_size: usize, retain_bytes: usize) -> BufferPool {
        BufferPool {
            free: Default::default(),
            max_message_size,
            retain_bytes,
            retained: 0,
        }
    }

    /// The class whose buffers hold `size` bytes (the largest class for anything bigger).
    fn class_of(&self, size: usize) -> usize {
        CLASS_SIZES
            .iter()
            .position(|&c| size <= c && c < self.max_message_size)
            .unwrap_or(CLASSES - 1)
    }

    fn class_size(&self, class: usize) -> usize {
        CLASS_SIZES
            .get(class)
            .copied()
            .unwrap_or(self.max_message_size)
            .min(self.max_message_size)
    }

    /// A buffer of at least `size` bytes (at most `max_message_size`).
    pub fn take(&mut self, size: usize) -> Box<[u8]> {
        let class = self.class_of(size);
        match self.free[class].pop() {
            Some(buf) => {
                self.retained -= buf.len();
                buf
            }
            None => vec![0; self.class_size(class)].into_boxed_slice(),
        }
    }

    /// Takes back a buffer; kept for reuse while the budget allows.
    pub fn give(&mut self, buf: Box<[u8]>) {
        if buf.is_empty() || self.retained + buf.len() > self.retain_bytes {
            return;
        }
        let class = self.class_of(buf.len());
        if self.class_size(class) != buf.len() {
            return;
        }
        self.retained += buf.len();
        self.free[class].push(buf);
    }

    /// Bytes held in free lists.
    #[cfg(test)]
    pub fn retained(&self) -> usize {
        self.retained
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_in_classes_and_are_reused_within_budget() {
        let mut pool = BufferPool::new(1280, 2048);
        let small = pool.take(20);
        assert_eq!(small.len(), 64);
        let big = pool.take(700);
        assert_eq!(big.len(), 1280);
        let huge = pool.take(5000);
        assert_eq!(huge.len(), 1280, "never more than the largest datagram");
        let ptr = big.as_ptr();
        pool.give(big);
        assert_eq!(pool.retained(), 1280);
        let reused = pool.take(1000);
        assert_eq!(reused.as_ptr(), ptr, "a freed buffer is reused");
        pool.give(huge);
        let again = pool.take(1280);
        pool.give(again);
        pool.give(small);
        assert!(pool.retained() <= 2048, "the budget bounds what is kept");
    }
}
