//! First-in first-out queues: a ring (`VecDeque`) with the `hash-tables` feature, a vector
//! shifted on removal without it. A node's queues hold a handful of entries, and every
//! element type of a ring carries its own growth code (0.1 KiB of flash each).

/// The queue the engine's FIFOs use.
#[cfg(feature = "hash-tables")]
pub(crate) type Fifo<T> = alloc::collections::VecDeque<T>;
/// The queue the engine's FIFOs use.
#[cfg(not(feature = "hash-tables"))]
pub(crate) type Fifo<T> = ShiftedFifo<T>;

#[cfg(any(test, not(feature = "hash-tables")))]
use alloc::vec::Vec;

/// A queue in a vector, oldest first; taking the front shifts the rest down.
#[cfg(any(test, not(feature = "hash-tables")))]
#[derive(Debug, Clone)]
pub(crate) struct ShiftedFifo<T>(Vec<T>);

#[cfg(any(test, not(feature = "hash-tables")))]
impl<T> Default for ShiftedFifo<T> {
    fn default() -> Self {
        ShiftedFifo(Vec::new())
    }
}

// The subset of `VecDeque`'s API the engine uses, with its meaning.
#[cfg(any(test, not(feature = "hash-tables")))]
impl<T> ShiftedFifo<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries queued.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Queues `value` last.
    pub fn push_back(&mut self, value: T) {
        self.0.push(value);
    }

    /// Takes the oldest entry.
    pub fn pop_front(&mut self) -> Option<T> {
        if self.0.is_empty() {
            None
        } else {
            Some(self.0.remove(0))
        }
    }

    /// The oldest entry.
    pub fn front(&self) -> Option<&T> {
        self.0.first()
    }

    /// The newest entry.
    #[cfg_attr(not(feature = "reply-cache"), allow(dead_code))]
    pub fn back(&self) -> Option<&T> {
        self.0.last()
    }

    /// Entry `i`, counted from the oldest.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.0.get(i)
    }

    /// Entry `i`, counted from the oldest, to change.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.0.get_mut(i)
    }

    /// Keeps only the entries `keep` accepts, in their order.
    #[cfg_attr(not(feature = "address-validation"), allow(dead_code))]
    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.0.retain(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::VecDeque;

    /// Both queues agree on every operation of a mixed sequence.
    #[test]
    fn a_shifted_fifo_behaves_as_a_ring() {
        let mut ring = VecDeque::new();
        let mut shifted = ShiftedFifo::new();
        for step in 0u32..200 {
            if step % 3 == 2 {
                assert_eq!(shifted.pop_front(), ring.pop_front());
            } else {
                shifted.push_back(step);
                ring.push_back(step);
            }
            if step % 7 == 0 {
                if let (Some(a), Some(b)) = (shifted.get_mut(1), ring.get_mut(1)) {
                    *a += 1000;
                    *b += 1000;
                }
            }
            assert_eq!(shifted.len(), ring.len());
            assert_eq!(shifted.is_empty(), ring.is_empty());
            assert_eq!(shifted.front(), ring.front());
            assert_eq!(shifted.back(), ring.back());
            assert_eq!(shifted.get(2), ring.get(2));
            if step % 50 == 49 {
                shifted.retain(|v| v % 2 == 0);
                ring.retain(|v| v % 2 == 0);
            }
        }
        while let Some(v) = ring.pop_front() {
            assert_eq!(shifted.pop_front(), Some(v));
        }
        assert_eq!(shifted.pop_front(), None);
    }
}
