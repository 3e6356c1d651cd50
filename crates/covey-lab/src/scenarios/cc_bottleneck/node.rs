//! The two roles of the experiment as one node type, so the simulator dispatches statically.

use covey_proto::{dispatch_events, App, AppContext, Apps, Instant};
use covey_sim::sim::NodeApp;

use super::client::WorkloadClient;
use super::server::ResourceServer;

/// A node of the cc-bottleneck topology.
#[derive(Debug)]
pub enum CcNode {
    /// The server behind the bottleneck.
    Server(ResourceServer),
    /// A client in front of the router.
    Client(WorkloadClient),
}

impl Apps for CcNode {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        match self {
            CcNode::Server(s) => s.start(cx),
            CcNode::Client(c) => c.start(cx),
        }
    }

    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        match self {
            CcNode::Server(s) => dispatch_events(s, cx),
            CcNode::Client(c) => dispatch_events(c, cx),
        }
    }
}

impl NodeApp for CcNode {
    fn on_transmit(&mut self, now: Instant, datagram: &[u8]) {
        if let CcNode::Client(c) = self {
            c.on_transmit(now, datagram);
        }
    }

    fn is_done(&self) -> bool {
        match self {
            CcNode::Server(_) => true,
            CcNode::Client(c) => c.is_done(),
        }
    }

    fn take_restart(&mut self) -> bool {
        match self {
            CcNode::Server(_) => false,
            CcNode::Client(c) => c.take_restart(),
        }
    }
}
