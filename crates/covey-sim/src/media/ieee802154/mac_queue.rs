//! The bounded drop-tail MAC queue of one node: it holds frames (fragments count one each, as
//! Contiki's queue buffers do), so a fragmented datagram enters whole or not at all.

use std::collections::VecDeque;

use super::frame::MacFrame;

/// A node's bounded frame queue.
#[derive(Debug, Clone)]
pub struct MacQueue {
    frames: VecDeque<MacFrame>,
    capacity: usize,
}

impl MacQueue {
    /// An empty queue for up to `capacity` frames.
    pub fn new(capacity: usize) -> Self {
        MacQueue {
            frames: VecDeque::new(),
            capacity,
        }
    }

    /// Appends all `frames` of one datagram, or none of them if they do not all fit.
    pub fn push_datagram(&mut self, frames: Vec<MacFrame>) -> bool {
        if self.frames.len() + frames.len() > self.capacity {
            return false;
        }
        self.frames.extend(frames);
        true
    }

    /// The frame at the head.
    pub fn head(&self) -> Option<&MacFrame> {
        self.frames.front()
    }

    /// Removes the head frame.
    pub fn pop(&mut self) -> Option<MacFrame> {
        self.frames.pop_front()
    }

    /// Removes every queued frame of the datagram `packet` sent to `hop_to` (its remaining
    /// fragments are useless once one is lost).
    pub fn drop_datagram(&mut self, packet: u64, hop_to: Option<usize>) {
        self.frames
            .retain(|f| !(f.packet == packet && f.hop_to == hop_to));
    }

    /// Removes the queued frames of the head's datagram behind the head, which stays.
    pub fn drop_rest_of_datagram(&mut self, packet: u64, hop_to: Option<usize>) {
        let head = self.frames.pop_front();
        self.drop_datagram(packet, hop_to);
        if let Some(head) = head {
            self.frames.push_front(head);
        }
    }

    /// Whether frames of the datagram `packet` to `hop_to` are still queued. A datagram's
    /// frames enter together and leave from the head or all at once, so they stay contiguous:
    /// after its head frame leaves, the rest (if any) is at the head.
    pub fn holds_datagram(&self, packet: u64, hop_to: Option<usize>) -> bool {
        self.frames
            .front()
            .is_some_and(|f| f.packet == packet && f.hop_to == hop_to)
    }

    /// Frames queued.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::Destination;

    fn frames(packet: u64, count: usize) -> Vec<MacFrame> {
        (0..count)
            .map(|fragment| MacFrame {
                packet,
                origin: 0,
                destination: Destination::Node(1),
                payload_bytes: 300,
                hop_to: Some(1),
                fragment,
                fragments: count,
                mpdu_bytes: 127,
            })
            .collect()
    }

    #[test]
    fn a_datagram_enters_whole_or_not_at_all() {
        let mut queue = MacQueue::new(4);
        assert!(queue.push_datagram(frames(1, 3)));
        assert!(!queue.push_datagram(frames(2, 2)), "only one slot is left");
        assert_eq!(queue.len(), 3);
        assert!(queue.push_datagram(frames(3, 1)));
    }

    #[test]
    fn dropping_a_datagram_removes_its_fragments_only() {
        let mut queue = MacQueue::new(8);
        queue.push_datagram(frames(1, 3));
        queue.push_datagram(frames(2, 2));
        queue.pop();
        assert!(queue.holds_datagram(1, Some(1)));
        queue.drop_datagram(1, Some(1));
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.head().map(|f| f.packet), Some(2));
    }
}
