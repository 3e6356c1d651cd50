//! The two roles of the experiment as one node type, so the simulator dispatches statically.

use covey_proto::{dispatch_events, App, AppContext, Apps};
use covey_sim::sim::NodeApp;

use super::client::RateClient;
use super::server::FullFrameServer;

/// A node of the one-hop link.
#[derive(Debug)]
pub enum WorkloadNode {
    /// The server under load.
    Server(FullFrameServer),
    /// The fixed-rate client.
    Client(RateClient),
}

impl Apps for WorkloadNode {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        match self {
            WorkloadNode::Server(s) => s.start(cx),
            WorkloadNode::Client(c) => c.start(cx),
        }
    }

    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        match self {
            WorkloadNode::Server(s) => dispatch_events(s, cx),
            WorkloadNode::Client(c) => dispatch_events(c, cx),
        }
    }
}

impl NodeApp for WorkloadNode {
    fn is_done(&self) -> bool {
        match self {
            WorkloadNode::Server(_) => true,
            WorkloadNode::Client(c) => c.is_done(),
        }
    }
}
