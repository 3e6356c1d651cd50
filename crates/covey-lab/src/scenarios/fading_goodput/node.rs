//! The two roles of the experiment as one node type, so the simulator dispatches statically.

use covey_proto::{dispatch_events, App, AppContext, Apps, Endpoint, Host, Instant};
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
    fn start(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host) {
        let cx = &mut AppContext::new(endpoint, now, host);
        match self {
            GoodputNode::Server(s) => s.start(cx),
            GoodputNode::Client(c) => c.start(cx),
        }
    }

    fn dispatch(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host) {
        match self {
            GoodputNode::Server(s) => dispatch_events(s, endpoint, now, host),
            GoodputNode::Client(c) => dispatch_events(c, endpoint, now, host),
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
