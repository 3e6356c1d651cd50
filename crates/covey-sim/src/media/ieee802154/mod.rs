//! A shared IEEE 802.15.4 (2.4 GHz O-QPSK, 250 kbit/s) medium with unslotted CSMA/CA,
//! link-layer ACKs and retries, 6LoWPAN fragmentation, collisions from the topology (hidden
//! terminals included), route-over multi-hop trees and per-link frame error models.
//!
//! One concept per file: [`phy`] (air times and interframe spaces), [`csma`] (backoff),
//! [`frame_format`] (header bytes and fragmentation), [`mac_queue`], [`topology`] (audibility
//! and routing), [`air`] (what is on the channel), [`frame_error`] (the channel-model hook),
//! [`medium`] (the MACs tied together behind the `Medium` trait).
//!
//! The saturation test (single backlogged sender, idle channel) checks the medium against the
//! spec's closed form with the spec's L_MAC = 11 header model ([`HeaderModel::mac_only`]:
//! 9-byte MAC header with 16-bit addresses and PAN ID compression, 2-byte FCS, no 6LoWPAN
//! bytes), so its payload is the closed form's MAC payload x. Scenarios use
//! [`HeaderModel::default`], which adds 9 bytes of IPHC + UDP NHC per datagram.

pub mod air;
pub mod csma;
pub mod frame;
pub mod frame_error;
pub mod frame_format;
pub mod mac_queue;
pub mod medium;
pub mod node;
pub mod phy;
pub mod schedule;
pub mod topology;

pub use csma::MacParams;
pub use frame_error::{FrameErrorModel, FrameKind, FrameOnLink};
pub use frame_format::HeaderModel;
pub use medium::{Ieee802154Config, Ieee802154Medium};
pub use node::NodeStats;
pub use phy::PhyTiming;
pub use topology::{Position, Topology, TopologyError};

#[cfg(test)]
mod tests;
