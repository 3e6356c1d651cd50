//! The simulator's event queue: an indexed binary min-heap of wake-ups on virtual time.
//!
//! Why our own heap rather than a discrete-event crate: the lab needs (1) determinism we
//! control — ties at the same instant are broken by a sequence number given when a wake-up
//! is scheduled, so a run depends only on its seed; (2) exactly one pending wake-up per
//! node and per medium, re-armed in place after every step (an indexed heap updates a
//! slot's key in O(log n) instead of piling up stale entries), which keeps the heap's size
//! equal to the number of slots and the steady state free of allocation; (3) a tiny API
//! (`schedule`, `cancel`, `pop`). General DES crates bring processes, channels or boxed
//! closures per event that we would not use and that would allocate per event.

use covey_proto::Instant;

const NOT_QUEUED: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Entry {
    at: Instant,
    seq: u64,
    slot: u32,
}

impl Entry {
    fn key(&self) -> (Instant, u64) {
        (self.at, self.seq)
    }
}

/// Wake-ups keyed by (time, sequence number), at most one per slot.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    position: Vec<u32>,
    next_seq: u64,
}

impl EventQueue {
    /// A queue for `slots` slots (more can be added).
    pub fn with_slots(slots: usize) -> EventQueue {
        EventQueue {
            heap: Vec::with_capacity(slots),
            position: vec![NOT_QUEUED; slots],
            next_seq: 0,
        }
    }

    /// Adds a slot and returns its index.
    pub fn add_slot(&mut self) -> usize {
        self.position.push(NOT_QUEUED);
        self.heap.reserve(1);
        self.position.len() - 1
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.position.len()
    }

    /// Number of pending wake-ups.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no wake-up is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The pending wake-up of `slot`.
    pub fn deadline(&self, slot: usize) -> Option<Instant> {
        let p = *self.position.get(slot)?;
        (p != NOT_QUEUED).then(|| self.heap[p as usize].at)
    }

    /// Sets `slot`'s wake-up to `at` (`None` cancels it). An unchanged deadline keeps its
    /// place among ties; a changed one goes behind wake-ups already scheduled for that time.
    pub fn schedule(&mut self, slot: usize, at: Option<Instant>) {
        let Some(at) = at else {
            self.cancel(slot);
            return;
        };
        let Some(&p) = self.position.get(slot) else {
            return;
        };
        let seq = self.next_seq;
        if p == NOT_QUEUED {
            self.next_seq += 1;
            let i = self.heap.len();
            self.heap.push(Entry {
                at,
                seq,
                slot: slot as u32,
            });
            self.position[slot] = i as u32;
            self.sift_up(i);
            return;
        }
        let i = p as usize;
        if self.heap[i].at == at {
            return;
        }
        self.next_seq += 1;
        let old = self.heap[i].key();
        self.heap[i].at = at;
        self.heap[i].seq = seq;
        if self.heap[i].key() < old {
            self.sift_up(i);
        } else {
            self.sift_down(i);
        }
    }

    /// Removes `slot`'s wake-up, if any.
    pub fn cancel(&mut self, slot: usize) {
        let Some(&p) = self.position.get(slot) else {
            return;
        };
        if p != NOT_QUEUED {
            self.remove_at(p as usize);
        }
    }

    /// The earliest wake-up without removing it.
    pub fn peek(&self) -> Option<(Instant, usize)> {
        self.heap.first().map(|e| (e.at, e.slot as usize))
    }

    /// Removes and returns the earliest wake-up: (time, slot).
    pub fn pop(&mut self) -> Option<(Instant, usize)> {
        let first = *self.heap.first()?;
        self.remove_at(0);
        Some((first.at, first.slot as usize))
    }

    fn remove_at(&mut self, i: usize) {
        let last = self.heap.len() - 1;
        let slot = self.heap[i].slot as usize;
        self.swap(i, last);
        self.heap.pop();
        self.position[slot] = NOT_QUEUED;
        if i < self.heap.len() {
            self.sift_down(i);
            self.sift_up(i);
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.position[self.heap[a].slot as usize] = a as u32;
        self.position[self.heap[b].slot as usize] = b as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i].key() >= self.heap[parent].key() {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right].key() < self.heap[left].key() {
                right
            } else {
                left
            };
            if self.heap[child].key() >= self.heap[i].key() {
                break;
            }
            self.swap(i, child);
            i = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn t(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn pops_in_time_order_and_ties_in_scheduling_order() {
        let mut q = EventQueue::with_slots(4);
        q.schedule(2, Some(t(5)));
        q.schedule(0, Some(t(5)));
        q.schedule(3, Some(t(1)));
        q.schedule(1, Some(t(9)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(t(1), 3), (t(5), 2), (t(5), 0), (t(9), 1)]);
    }

    #[test]
    fn one_wake_up_per_slot_rescheduled_in_place() {
        let mut q = EventQueue::with_slots(3);
        q.schedule(0, Some(t(10)));
        q.schedule(1, Some(t(20)));
        q.schedule(0, Some(t(30)));
        assert_eq!(q.len(), 2, "re-arming replaces the slot's wake-up");
        assert_eq!(q.deadline(0), Some(t(30)));
        q.schedule(1, None);
        assert_eq!(q.pop(), Some((t(30), 0)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn matches_a_sorted_reference_under_random_updates() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut q = EventQueue::with_slots(64);
        let mut reference: Vec<Option<Instant>> = vec![None; 64];
        for _ in 0..10_000 {
            let slot = rng.random_range(0..64);
            match rng.random_range(0..4) {
                0 => {
                    q.cancel(slot);
                    reference[slot] = None;
                }
                1 => {
                    let popped = q.pop();
                    let expected = reference.iter().flatten().min().copied();
                    assert_eq!(popped.map(|p| p.0), expected);
                    if let Some((_, s)) = popped {
                        reference[s] = None;
                    }
                }
                _ => {
                    let at = t(rng.random_range(0..1000));
                    q.schedule(slot, Some(at));
                    reference[slot] = Some(at);
                }
            }
            assert_eq!(q.len(), reference.iter().flatten().count());
            for (s, a) in reference.iter().enumerate() {
                assert_eq!(q.deadline(s), *a);
            }
        }
    }
}
