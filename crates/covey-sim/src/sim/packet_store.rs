//! The bytes of packets in flight, kept by the simulator while media only see sizes.
//! Buffers are recycled, so once warm a run allocates nothing per packet.

use std::net::SocketAddr;

/// A datagram in flight.
#[derive(Debug)]
pub struct StoredPacket {
    /// The sender's socket address.
    pub source: SocketAddr,
    /// The address it was sent to (a node or a group).
    pub destination: SocketAddr,
    /// The datagram.
    pub bytes: Vec<u8>,
}

#[derive(Debug)]
struct Slot {
    generation: u32,
    packet: Option<StoredPacket>,
}

/// Packets by id; an id is (generation << 32 | index), so a stale id never finds a newer
/// packet in a reused slot.
#[derive(Debug, Default)]
pub struct PacketStore {
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    spare_buffers: Vec<Vec<u8>>,
    live: usize,
}

impl PacketStore {
    /// Stores a copy of `bytes` and returns its id.
    pub fn insert(&mut self, source: SocketAddr, destination: SocketAddr, bytes: &[u8]) -> u64 {
        let mut buf = self.spare_buffers.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(bytes);
        let packet = StoredPacket {
            source,
            destination,
            bytes: buf,
        };
        self.live += 1;
        match self.free_slots.pop() {
            Some(index) => {
                let slot = &mut self.slots[index as usize];
                slot.generation = slot.generation.wrapping_add(1);
                slot.packet = Some(packet);
                (u64::from(slot.generation) << 32) | u64::from(index)
            }
            None => {
                let index = self.slots.len() as u64;
                self.slots.push(Slot {
                    generation: 0,
                    packet: Some(packet),
                });
                index
            }
        }
    }

    fn slot(&self, id: u64) -> Option<&Slot> {
        let slot = self.slots.get((id & 0xffff_ffff) as usize)?;
        (u64::from(slot.generation) == id >> 32).then_some(slot)
    }

    /// The packet `id`, while it is in flight.
    pub fn get(&self, id: u64) -> Option<&StoredPacket> {
        self.slot(id)?.packet.as_ref()
    }

    /// Frees packet `id` (its buffer is kept for reuse).
    pub fn release(&mut self, id: u64) {
        if self.slot(id).is_none() {
            return;
        }
        let index = (id & 0xffff_ffff) as usize;
        if let Some(packet) = self.slots[index].packet.take() {
            self.spare_buffers.push(packet.bytes);
            self.free_slots.push(index as u32);
            self.live -= 1;
        }
    }

    /// Packets currently stored.
    pub fn live(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u16) -> SocketAddr {
        SocketAddr::from(([0xfd00, 0, 0, 0, 0, 0, 0, n], 5683))
    }

    #[test]
    fn released_ids_do_not_reach_reused_slots() {
        let mut s = PacketStore::default();
        let a = s.insert(addr(1), addr(2), b"first");
        assert_eq!(s.get(a).map(|p| p.bytes.as_slice()), Some(&b"first"[..]));
        s.release(a);
        assert!(s.get(a).is_none());
        let b = s.insert(addr(2), addr(1), b"second");
        assert_ne!(a, b, "a reused slot gets a new id");
        assert!(s.get(a).is_none(), "the old id stays dead");
        s.release(a);
        assert_eq!(s.live(), 1, "releasing a stale id frees nothing");
        assert_eq!(s.get(b).map(|p| p.source), Some(addr(2)));
    }
}
