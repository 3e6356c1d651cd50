//! Deadlines by timer id: each id has at most one deadline, which can be moved or cancelled
//! without allocating. Timers due at the same instant fire in id order, so the order never
//! hangs on what else was set before. With the `hash-tables` feature an indexed min-heap
//! (O(log n) for each change); without it (a node's score of timers) a vector of deadlines
//! scanned for the earliest, half a kilobyte of flash smaller.

use crate::Instant;
use alloc::vec::Vec;

/// The queue the engine's timers use.
#[cfg(feature = "hash-tables")]
pub type TimerQueue = HeapTimers;
/// The queue the engine's timers use.
#[cfg(not(feature = "hash-tables"))]
pub type TimerQueue = ScannedTimers;

#[cfg(any(test, feature = "hash-tables"))]
const ABSENT: u32 = u32::MAX;

/// Deadlines for the dense timer ids `0..capacity` in an indexed min-heap.
#[cfg(any(test, feature = "hash-tables"))]
#[derive(Debug)]
pub struct HeapTimers {
    heap: Vec<(Instant, u32)>,
    position: Vec<u32>,
    capacity: usize,
}

#[cfg(any(test, feature = "hash-tables"))]
impl HeapTimers {
    /// A queue for ids `0..capacity`; its tables grow as higher ids are first set.
    pub fn with_capacity(capacity: usize) -> HeapTimers {
        HeapTimers {
            heap: Vec::new(),
            position: Vec::new(),
            capacity,
        }
    }

    /// Sets (or moves) timer `id` to fire at `at`.
    pub fn set(&mut self, id: usize, at: Instant) {
        if id >= self.position.len() {
            if id >= self.capacity {
                return;
            }
            self.position.resize(id + 1, ABSENT);
            // One heap entry per id at most: reserve alongside so pushes never reallocate.
            self.heap
                .reserve(self.position.len().saturating_sub(self.heap.len()));
        }
        let pos = self.position[id];
        if pos == ABSENT {
            self.heap.push((at, id as u32));
            let last = self.heap.len() - 1;
            self.position[id] = last as u32;
            self.sift_up(last);
        } else {
            let pos = pos as usize;
            let old = self.heap[pos];
            self.heap[pos].0 = at;
            if self.heap[pos] < old {
                self.sift_up(pos);
            } else {
                self.sift_down(pos);
            }
        }
    }

    /// Cancels timer `id` if it is set.
    pub fn cancel(&mut self, id: usize) {
        let Some(&pos) = self.position.get(id) else {
            return;
        };
        if pos == ABSENT {
            return;
        }
        self.remove_at(pos as usize);
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.heap.first().map(|e| e.0)
    }

    /// Removes and returns the id of a timer whose deadline is at or before `now`.
    pub fn pop_expired(&mut self, now: Instant) -> Option<usize> {
        let &(at, id) = self.heap.first()?;
        if at > now {
            return None;
        }
        self.remove_at(0);
        Some(id as usize)
    }

    fn remove_at(&mut self, pos: usize) {
        let last = self.heap.len() - 1;
        self.swap(pos, last);
        let (_, id) = self.heap.pop().unwrap_or((Instant::ZERO, 0));
        self.position[id as usize] = ABSENT;
        if pos < self.heap.len() {
            self.sift_down(pos);
            self.sift_up(pos);
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.position[self.heap[a].1 as usize] = a as u32;
        self.position[self.heap[b].1 as usize] = b as u32;
    }

    fn sift_up(&mut self, mut pos: usize) {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.heap[pos] >= self.heap[parent] {
                break;
            }
            self.swap(pos, parent);
            pos = parent;
        }
    }

    fn sift_down(&mut self, mut pos: usize) {
        let n = self.heap.len();
        loop {
            let left = 2 * pos + 1;
            let right = left + 1;
            let mut smallest = pos;
            if left < n && self.heap[left] < self.heap[smallest] {
                smallest = left;
            }
            if right < n && self.heap[right] < self.heap[smallest] {
                smallest = right;
            }
            if smallest == pos {
                break;
            }
            self.swap(pos, smallest);
            pos = smallest;
        }
    }
}

/// Deadlines for the dense timer ids `0..capacity`, scanned in id order.
#[cfg(any(test, not(feature = "hash-tables")))]
#[derive(Debug)]
pub struct ScannedTimers {
    deadlines: Vec<Option<Instant>>,
    capacity: usize,
}

#[cfg(any(test, not(feature = "hash-tables")))]
impl ScannedTimers {
    /// A queue for ids `0..capacity`; its table grows as higher ids are first set.
    pub fn with_capacity(capacity: usize) -> ScannedTimers {
        ScannedTimers {
            deadlines: Vec::new(),
            capacity,
        }
    }

    /// Sets (or moves) timer `id` to fire at `at`.
    pub fn set(&mut self, id: usize, at: Instant) {
        if id >= self.capacity {
            return;
        }
        if id >= self.deadlines.len() {
            self.deadlines.resize(id + 1, None);
        }
        self.deadlines[id] = Some(at);
    }

    /// Cancels timer `id` if it is set.
    pub fn cancel(&mut self, id: usize) {
        if let Some(d) = self.deadlines.get_mut(id) {
            *d = None;
        }
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.earliest().map(|(_, at)| at)
    }

    /// Removes and returns the id of a timer whose deadline is at or before `now`.
    pub fn pop_expired(&mut self, now: Instant) -> Option<usize> {
        let (id, at) = self.earliest()?;
        if at > now {
            return None;
        }
        self.deadlines[id] = None;
        Some(id)
    }

    /// The id and deadline of the earliest timer, the lowest id of those due together.
    fn earliest(&self) -> Option<(usize, Instant)> {
        let mut earliest: Option<(usize, Instant)> = None;
        for (id, d) in self.deadlines.iter().enumerate() {
            if let Some(at) = *d {
                if earliest.is_none_or(|(_, e)| at < e) {
                    earliest = Some((id, at));
                }
            }
        }
        earliest
    }
}

#[cfg(test)]
mod tests {
    /// The same tests for each queue.
    macro_rules! timer_queue_tests {
        ($name:ident, $queue:ident) => {
            mod $name {
                use super::super::*;
                use proptest::prelude::*;
                use std::collections::BTreeMap;

                #[test]
                fn fires_in_deadline_order_and_supports_moves() {
                    let mut q = $queue::with_capacity(4);
                    q.set(0, Instant::from_secs(5));
                    q.set(1, Instant::from_secs(2));
                    q.set(2, Instant::from_secs(9));
                    q.set(0, Instant::from_secs(1));
                    q.cancel(2);
                    assert_eq!(q.next_deadline(), Some(Instant::from_secs(1)));
                    assert_eq!(q.pop_expired(Instant::from_secs(3)), Some(0));
                    assert_eq!(q.pop_expired(Instant::from_secs(3)), Some(1));
                    assert_eq!(q.pop_expired(Instant::from_secs(100)), None);
                    q.set(7, Instant::ZERO); // out of range: ignored
                    assert_eq!(q.next_deadline(), None);
                }

                proptest! {
                    #[test]
                    fn behaves_like_a_map_of_deadlines(ops in proptest::collection::vec((0usize..8, 0u64..50, any::<bool>()), 0..200)) {
                        let mut q = $queue::with_capacity(8);
                        let mut model: BTreeMap<usize, u64> = BTreeMap::new();
                        for (id, at, cancel) in ops {
                            if cancel { q.cancel(id); model.remove(&id); }
                            else { q.set(id, Instant::from_nanos(at)); model.insert(id, at); }
                            let min = model.values().min().copied();
                            prop_assert_eq!(q.next_deadline().map(|i| i.as_nanos()), min);
                        }
                        // Earliest first, and at equal deadlines the lower id first.
                        let mut expected: Vec<(u64, usize)> = model.iter().map(|(&id, &at)| (at, id)).collect();
                        expected.sort();
                        let fired: Vec<usize> =
                            core::iter::from_fn(|| q.pop_expired(Instant::from_nanos(100))).collect();
                        prop_assert_eq!(fired, expected.into_iter().map(|(_, id)| id).collect::<Vec<_>>());
                    }
                }
            }
        };
    }

    timer_queue_tests!(heap, HeapTimers);
    timer_queue_tests!(scanned, ScannedTimers);
}
