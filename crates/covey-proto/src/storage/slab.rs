//! A slab bounded by a capacity, growing on demand up to it, with generation-checked keys.

use alloc::vec::Vec;

/// A handle into a [`Slab`]; stale after its entry is removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlabKey {
    index: u32,
    generation: u32,
}

impl SlabKey {
    /// The slot index, dense in `0..capacity`.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

#[derive(Debug)]
struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

/// Storage for at most `capacity` values; slots are created as they are first needed and
/// reused after removal, and insertion fails instead of growing past the capacity.
#[derive(Debug)]
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    books: Books,
}

/// The part of a slab that does not depend on its values: free list, count and bound,
/// compiled once rather than for each value type.
#[derive(Debug)]
struct Books {
    free: Vec<u32>,
    len: usize,
    capacity: usize,
}

impl Books {
    /// Counts in a new value and picks its slot: a freed one, or the next new one,
    /// `created`, with how many slots to reserve first (0 when there is room). `None` when
    /// full. `created` and `reserved` are the slots' length and capacity.
    #[cfg_attr(target_os = "none", inline(never))]
    fn claim(&mut self, created: usize, reserved: usize) -> Option<(u32, usize)> {
        let claim = match self.free.pop() {
            Some(index) => (index, 0),
            None if created < self.capacity => {
                // Doubling, as a Vec grows, but never past the bound: the last doubling
                // would reserve up to twice what the bound lets the slab hold.
                let grow = if created == reserved {
                    created.max(4).min(self.capacity - created)
                } else {
                    0
                };
                (created as u32, grow)
            }
            None => return None,
        };
        self.len += 1;
        Some(claim)
    }

    /// After a new slot: the free list can take every slot back without growing later.
    #[cfg_attr(target_os = "none", inline(never))]
    fn keep_room(&mut self, created: usize, reserved: usize) {
        if self.free.capacity() < created {
            self.free.reserve_exact(reserved - self.free.len());
        }
    }

    /// Counts out the value of slot `index` and frees the slot.
    #[cfg_attr(target_os = "none", inline(never))]
    fn release(&mut self, index: u32) {
        self.free.push(index);
        self.len -= 1;
    }
}

impl<T> Slab<T> {
    /// An empty slab that will hold at most `capacity` values; it allocates nothing yet.
    pub fn with_capacity(capacity: usize) -> Slab<T> {
        Slab {
            slots: Vec::new(),
            books: Books {
                free: Vec::new(),
                len: 0,
                capacity,
            },
        }
    }

    /// Stores `value`, or gives it back when full.
    pub fn insert(&mut self, value: T) -> Result<SlabKey, T> {
        let Some((index, grow)) = self.books.claim(self.slots.len(), self.slots.capacity()) else {
            return Err(value);
        };
        if index as usize == self.slots.len() {
            self.slots.reserve_exact(grow);
            self.slots.push(Slot {
                generation: 0,
                value: None,
            });
            self.books
                .keep_room(self.slots.len(), self.slots.capacity());
        }
        let slot = &mut self.slots[index as usize];
        slot.value = Some(value);
        Ok(SlabKey {
            index,
            generation: slot.generation,
        })
    }

    /// The value for `key`, if it is still there.
    // Called on bare-metal targets: inlined, a node's score of lookups took 0.5 KiB of flash.
    #[cfg_attr(target_os = "none", inline(never))]
    pub fn get(&self, key: SlabKey) -> Option<&T> {
        self.slots
            .get(key.index as usize)
            .filter(|s| s.generation == key.generation)
            .and_then(|s| s.value.as_ref())
    }

    /// The value for `key`, mutably.
    // Called on bare-metal targets, as `get` is.
    #[cfg_attr(target_os = "none", inline(never))]
    pub fn get_mut(&mut self, key: SlabKey) -> Option<&mut T> {
        self.slots
            .get_mut(key.index as usize)
            .filter(|s| s.generation == key.generation)
            .and_then(|s| s.value.as_mut())
    }

    /// The live key at `index`, if any.
    pub fn key_at(&self, index: usize) -> Option<SlabKey> {
        self.slots.get(index).and_then(|s| {
            s.value.as_ref().map(|_| SlabKey {
                index: index as u32,
                generation: s.generation,
            })
        })
    }

    /// Removes and returns the value for `key`.
    pub fn remove(&mut self, key: SlabKey) -> Option<T> {
        let slot = self
            .slots
            .get_mut(key.index as usize)
            .filter(|s| s.generation == key.generation)?;
        let value = slot.value.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.books.release(key.index);
        Some(value)
    }

    /// Number of stored values.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub fn len(&self) -> usize {
        self.books.len
    }

    /// True when no further value fits.
    pub fn is_full(&self) -> bool {
        self.books.len >= self.books.capacity
    }

    /// Maximum number of values.
    pub fn capacity(&self) -> usize {
        self.books.capacity
    }

    /// Slots created so far (the high-water mark of `len`).
    pub fn slots_created(&self) -> usize {
        self.slots.len()
    }

    /// Slots room is reserved for.
    #[cfg(test)]
    pub fn slots_reserved(&self) -> usize {
        self.slots.capacity()
    }

    /// Live entries with their keys.
    pub fn iter(&self) -> impl Iterator<Item = (SlabKey, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.value.as_ref().map(|v| {
                (
                    SlabKey {
                        index: i as u32,
                        generation: s.generation,
                    },
                    v,
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_generation_checked() {
        let mut s = Slab::with_capacity(2);
        let a = s.insert(1).unwrap();
        let b = s.insert(2).unwrap();
        assert_eq!(s.insert(3), Err(3));
        assert_eq!(s.remove(a), Some(1));
        let c = s.insert(4).unwrap();
        assert_eq!(c.index(), a.index());
        assert_eq!(s.get(a), None, "a stale key does not see the new value");
        assert_eq!(s.get(c), Some(&4));
        assert_eq!(s.get(b), Some(&2));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn grows_on_demand_only() {
        let mut s = Slab::with_capacity(1000);
        assert_eq!(s.slots_created(), 0);
        let keys: Vec<_> = (0..3).map(|i| s.insert(i).unwrap()).collect();
        assert_eq!(s.slots_created(), 3);
        s.remove(keys[1]);
        s.insert(9).unwrap();
        assert_eq!(
            s.slots_created(),
            3,
            "a freed slot is reused before a new one"
        );
        assert!(!s.is_full());
    }

    #[test]
    fn never_reserves_past_its_capacity() {
        let mut s = Slab::with_capacity(1000);
        for i in 0..1000 {
            s.insert(i).unwrap();
        }
        assert!(s.is_full());
        // Doubling from 4 would have reserved 1 024 slots.
        assert_eq!(s.slots_reserved(), 1000);
    }

    fn books(capacity: usize) -> Books {
        Books {
            free: Vec::new(),
            len: 0,
            capacity,
        }
    }

    #[test]
    fn books_grow_by_doubling_up_to_the_bound() {
        let mut b = books(10);
        assert_eq!(
            b.claim(0, 0),
            Some((0, 4)),
            "the first slots come four at once"
        );
        assert_eq!(b.claim(1, 4), Some((1, 0)), "no growth while there is room");
        assert_eq!(b.claim(4, 4), Some((4, 4)));
        assert_eq!(b.claim(8, 8), Some((8, 2)), "doubling stops at the bound");
        assert_eq!(b.claim(10, 10), None);
        assert_eq!(b.len, 4, "a refused value is not counted");
    }

    #[test]
    fn books_reuse_freed_slots_first() {
        let mut b = books(3);
        assert_eq!(b.claim(0, 0), Some((0, 3)));
        b.keep_room(1, 3);
        assert!(b.free.capacity() >= 3, "room for every slot to come back");
        assert_eq!(b.claim(1, 3), Some((1, 0)));
        b.release(0);
        assert_eq!(b.len, 1);
        assert_eq!(b.claim(2, 3), Some((0, 0)), "slot 0 again, not a new slot");
        assert_eq!(b.len, 2);
        assert_eq!(b.claim(2, 3), Some((2, 0)));
        assert_eq!(b.claim(3, 3), None);
    }
}
