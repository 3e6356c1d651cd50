//! The two roles of the experiment as one node type, so the simulator dispatches statically.

use covey_proto::{dispatch_events, App, AppContext, Apps, Endpoint, Host, Instant};
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
    fn start(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host) {
        let cx = &mut AppContext::new(endpoint, now, host);
        match self {
            CcNode::Server(s) => s.start(cx),
            CcNode::Client(c) => c.start(cx),
        }
    }

    fn dispatch(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host) {
        match self {
            CcNode::Server(s) => dispatch_events(s, endpoint, now, host),
            CcNode::Client(c) => dispatch_events(c, endpoint, now, host),
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
