//! The forwarder's packet buffers: fixed-size slots in one growing arena, reused through a
//! free list, so that once warm no packet allocates; the number of slots is bounded by
//! configuration and a packet that finds no free slot is dropped and counted.

/// What the forwarder remembers about a packet in a slot.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlotMeta {
    /// Bytes of the packet.
    pub len: usize,
    /// The flow's index in the flow table.
    pub flow: usize,
    /// Whether it was written to its receiver.
    pub delivered: bool,
}

/// Packet slots of `slot_size` bytes, at most `capacity` of them.
#[derive(Debug)]
pub struct PacketPool {
    data: Vec<u8>,
    meta: Vec<SlotMeta>,
    free: Vec<usize>,
    slot_size: usize,
    capacity: usize,
}

impl PacketPool {
    /// An empty pool of at most `capacity` slots of `slot_size` bytes.
    pub fn new(slot_size: usize, capacity: usize) -> PacketPool {
        PacketPool {
            data: Vec::new(),
            meta: Vec::new(),
            free: Vec::new(),
            slot_size,
            capacity,
        }
    }

    /// A free slot, growing the arena if under capacity; `None` when every slot is used.
    pub fn alloc(&mut self) -> Option<usize> {
        if let Some(slot) = self.free.pop() {
            return Some(slot);
        }
        let slot = self.meta.len();
        if slot >= self.capacity {
            return None;
        }
        self.data.resize(self.data.len() + self.slot_size, 0);
        self.meta.push(SlotMeta::default());
        Some(slot)
    }

    /// Returns `slot` to the free list.
    pub fn free(&mut self, slot: usize) {
        if slot < self.meta.len() {
            self.free.push(slot);
        }
    }

    /// The whole buffer of `slot`, to read a packet into.
    pub fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        let start = slot * self.slot_size;
        &mut self.data[start..start + self.slot_size]
    }

    /// The packet stored in `slot`.
    pub fn packet(&self, slot: usize) -> &[u8] {
        let start = slot * self.slot_size;
        let len = self.meta[slot].len.min(self.slot_size);
        &self.data[start..start + len]
    }

    /// What is known about the packet in `slot`.
    pub fn meta_mut(&mut self, slot: usize) -> &mut SlotMeta {
        &mut self.meta[slot]
    }

    /// Slots in use now.
    pub fn in_use(&self) -> usize {
        self.meta.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_bounded() {
        let mut pool = PacketPool::new(64, 2);
        let a = pool.alloc().expect("first slot");
        let b = pool.alloc().expect("second slot");
        assert_ne!(a, b);
        assert_eq!(pool.alloc(), None, "capacity is 2");
        pool.buffer_mut(b)[..3].copy_from_slice(b"abc");
        pool.meta_mut(b).len = 3;
        assert_eq!(pool.packet(b), b"abc");
        pool.free(a);
        assert_eq!(pool.alloc(), Some(a), "a freed slot is reused");
        assert_eq!(pool.in_use(), 2);
    }
}
