//! What a simulated node runs: application logic hosted next to a real `Endpoint`.
//!
//! This is the lab's own small hosting trait, kept in this one file so that switching to
//! covey-proto's `App` / `AppContext` (being reworked on `main`) touches nothing else: the
//! context already carries what `AppContext` will (endpoint, now, rng, group join/leave).

use std::net::IpAddr;

use covey_proto::{Endpoint, Event, Instant};

use super::random::SimRng;
use crate::media::NodeId;

/// The host's side of a node, lent to its application for one call.
pub struct NodeContext<'a> {
    /// The node's engine.
    pub endpoint: &'a mut Endpoint,
    /// Virtual time.
    pub now: Instant,
    /// The node's random stream (derived from the run seed).
    pub rng: &'a mut SimRng,
    /// Which node this is.
    pub node: NodeId,
    pub(crate) groups: &'a mut Vec<IpAddr>,
    pub(crate) restart: &'a mut bool,
}

impl NodeContext<'_> {
    /// Joins multicast group `group`: datagrams sent to it reach this node.
    pub fn join(&mut self, group: IpAddr) {
        if !self.groups.contains(&group) {
            self.groups.push(group);
        }
    }

    /// Leaves multicast group `group`.
    pub fn leave(&mut self, group: IpAddr) {
        self.groups.retain(|g| *g != group);
    }

    /// Replaces the node's endpoint with a fresh one (new engine state, new port) once this
    /// call returns, then calls [`NodeApp::start`] again: a new client process.
    pub fn restart_endpoint(&mut self) {
        *self.restart = true;
    }
}

/// Application logic of a simulated node.
pub trait NodeApp {
    /// Called when the node's endpoint starts (at the run's start and after each restart).
    fn start(&mut self, _cx: &mut NodeContext<'_>) {}

    /// Called for every event the node's endpoint produces.
    fn handle_event(&mut self, cx: &mut NodeContext<'_>, event: Event);

    /// Lab instrumentation: every datagram the node's endpoint sends, as it leaves.
    fn on_transmit(&mut self, _now: Instant, _datagram: &[u8]) {}

    /// Whether the node has finished its work (the run may stop when all have).
    fn is_done(&self) -> bool {
        true
    }
}
