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

    /// Frames queued.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}
