//! A shared IEEE 802.15.4 (2.4 GHz O-QPSK, 250 kbit/s) medium with unslotted CSMA/CA,
//! link-layer ACKs and retries, 6LoWPAN fragmentation, collisions from the topology (hidden
//! terminals included), route-over multi-hop trees and per-link frame error models.
//!
//! One concept per file: [`phy`] (air times and interframe spaces), [`csma`] (backoff),
//! [`frame_format`] (header bytes and fragmentation), [`mac_queue`], [`topology`] (audibility
//! and routing), [`air`] (what is on the channel), [`frame_error`] (the channel-model hook),
//! [`radio`] (power, path loss, noise, the O-QPSK error curve, CCA modes), [`reception`]
//! (reception by SINR with capture), [`medium`] (the MACs tied together behind the `Medium`
//! trait).
//!
//! Standalone, without CoAP: [`traffic`] sources offer datagrams, [`experiment`] runs them over
//! the medium, [`confirm`] tells each origin how its datagram fared, [`drops`] traces and counts
//! what was dropped and why, and [`counters`] gathers every per-node counter.
//!
//! The saturation test (single backlogged sender, idle channel) checks the medium against the
//! spec's closed form with the spec's L_MAC = 11 header model ([`HeaderModel::mac_only`]:
//! 9-byte MAC header with 16-bit addresses and PAN ID compression, 2-byte FCS, no 6LoWPAN
//! bytes), so its payload is the closed form's MAC payload x. Scenarios use
//! [`HeaderModel::default`], which adds 9 bytes of IPHC + UDP NHC per datagram.

pub mod air;
pub mod confirm;
pub mod counters;
pub mod csma;
pub mod drops;
pub mod experiment;
pub mod frame;
pub mod frame_error;
pub mod frame_format;
pub mod mac_queue;
pub mod medium;
pub mod node;
pub mod phy;
pub mod radio;
pub mod reception;
pub mod schedule;
pub mod topology;
pub mod traffic;

pub use confirm::{Confirm, ConfirmStatus};
pub use counters::MacCounters;
pub use csma::MacParams;
pub use drops::{DropCounts, DropTrace};
pub use experiment::{MacExperiment, Outcome};
pub use frame_error::{FrameErrorModel, FrameKind, FrameOnLink};
pub use frame_format::HeaderModel;
pub use medium::{Ieee802154Config, Ieee802154Medium, MacLayer};
pub use node::NodeStats;
pub use phy::PhyTiming;
pub use radio::{CcaMode, ExternalInterference, PathLoss, RadioParams, ReceptionModel};
pub use topology::{Position, Topology, TopologyError};
pub use traffic::{Flow, Offer, PeriodicSource, PoissonSource};

#[cfg(test)]
mod sinr_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod traffic_tests;
