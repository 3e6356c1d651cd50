//! The hook through which channel models (Rayleigh fading, Wi-Fi interference) corrupt frames
//! on individual links.

use covey_proto::Instant;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::NodeId;

/// What kind of frame is on the air.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A unicast data frame (or fragment).
    Data,
    /// A link-layer ACK.
    Ack,
    /// A broadcast data frame (or fragment).
    Broadcast,
}

/// One frame arriving at one receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameOnLink {
    /// The transmitting node.
    pub from: NodeId,
    /// The receiving node.
    pub to: NodeId,
    /// First bit on the air.
    pub start: Instant,
    /// Last bit on the air.
    pub end: Instant,
    /// Bytes on the air, PHY header included.
    pub air_bytes: usize,
    /// Data, ACK or broadcast.
    pub kind: FrameKind,
}

/// A model of frame errors on the links of a medium.
pub trait FrameErrorModel {
    /// Whether `frame` arrives corrupted; `rng` is the medium's channel stream.
    fn corrupts(&mut self, frame: &FrameOnLink, rng: &mut Xoshiro256PlusPlus) -> bool;
}
