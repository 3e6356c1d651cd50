//! The two roles of the experiment as one node type, so the simulator dispatches statically.

use covey_proto::{dispatch_events, App, AppContext, Apps};
use covey_sim::sim::NodeApp;

use super::client::TransferClient;
use super::server::PayloadServer;

/// A node of the one-hop link.
#[derive(Debug)]
pub enum GoodputNode {
    /// The node serving the resource.
    Server(PayloadServer),
    /// The node fetching it.
    Client(TransferClient),
}

impl Apps for GoodputNode {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        match self {
            GoodputNode::Server(s) => s.start(cx),
            GoodputNode::Client(c) => c.start(cx),
        }
    }

    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        match self {
            GoodputNode::Server(s) => dispatch_events(s, cx),
            GoodputNode::Client(c) => dispatch_events(c, cx),
        }
    }
}

impl NodeApp for GoodputNode {
    fn is_done(&self) -> bool {
        match self {
            GoodputNode::Server(_) => true,
            GoodputNode::Client(c) => c.is_done(),
        }
    }
}
