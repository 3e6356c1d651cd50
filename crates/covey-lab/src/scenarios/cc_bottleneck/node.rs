//! The two roles of the experiment as one node type, so the simulator dispatches statically.

use covey_proto::{Event, Instant};

use super::client::WorkloadClient;
use super::server::ResourceServer;
use crate::sim::{NodeApp, NodeContext};

/// A node of the cc-bottleneck topology.
#[derive(Debug)]
pub enum CcNode {
    /// The server behind the bottleneck.
    Server(ResourceServer),
    /// A client in front of the router.
    Client(WorkloadClient),
}

impl NodeApp for CcNode {
    fn start(&mut self, cx: &mut NodeContext<'_>) {
        match self {
            CcNode::Server(s) => s.start(cx),
            CcNode::Client(c) => c.start(cx),
        }
    }

    fn handle_event(&mut self, cx: &mut NodeContext<'_>, event: Event) {
        match self {
            CcNode::Server(s) => s.handle_event(cx, event),
            CcNode::Client(c) => c.handle_event(cx, event),
        }
    }

    fn on_transmit(&mut self, now: Instant, datagram: &[u8]) {
        match self {
            CcNode::Server(s) => s.on_transmit(now, datagram),
            CcNode::Client(c) => c.on_transmit(now, datagram),
        }
    }

    fn is_done(&self) -> bool {
        match self {
            CcNode::Server(s) => s.is_done(),
            CcNode::Client(c) => c.is_done(),
        }
    }
}
