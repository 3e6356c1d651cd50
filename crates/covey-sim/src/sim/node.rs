//! A simulated node: the engine's own drive loop ([`covey_proto::Node`]: endpoint and
//! applications), its random streams and group memberships, and the counters of endpoints
//! it has retired.

use covey_proto::{Apps, Config, ConfigError, Endpoint, Stats};

use super::node_app::SimHost;
use super::random::{derive_seed, Stream};
use crate::media::NodeId;

/// One node of a simulation.
#[derive(Debug)]
pub struct Node<A: Apps> {
    /// The node's endpoint and applications, driven as the tokio driver drives them.
    pub core: covey_proto::Node<A>,
    /// The node's host side: group memberships, log.
    pub host: SimHost,
    pub(crate) config: Config,
    pub(crate) incarnation: u32,
    pub(crate) retired: Stats,
    pub(crate) counted_done: bool,
}

impl<A: Apps> Node<A> {
    pub(crate) fn new(
        id: NodeId,
        config: Config,
        app: A,
        run_seed: u64,
    ) -> Result<Node<A>, ConfigError> {
        let seed = derive_seed(
            run_seed,
            Stream::Engine {
                node: id,
                incarnation: 0,
            },
        );
        Ok(Node {
            core: covey_proto::Node::new(Endpoint::new(config.clone(), seed)?, app),
            host: SimHost::default(),
            config,
            incarnation: 0,
            retired: Stats::default(),
            counted_done: false,
        })
    }

    /// Replaces the endpoint by a fresh one, keeping the old one's counters.
    pub(crate) fn restart(&mut self, id: NodeId, run_seed: u64) {
        self.incarnation += 1;
        let seed = derive_seed(
            run_seed,
            Stream::Engine {
                node: id,
                incarnation: self.incarnation,
            },
        );
        // The configuration passed validation when the node was added.
        let fresh = Endpoint::new(self.config.clone(), seed).expect("validated by add_node");
        let old = self.core.replace_endpoint(fresh);
        add_stats(&mut self.retired, old.stats());
    }

    /// The counters of every endpoint this node has had, summed.
    pub fn stats(&self) -> Stats {
        let mut total = self.retired.clone();
        add_stats(&mut total, self.core.endpoint.stats());
        total
    }

    /// The node's endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.core.endpoint
    }

    /// The node's applications.
    pub fn app(&self) -> &A {
        &self.core.apps
    }

    /// How many times the endpoint was replaced.
    pub fn incarnation(&self) -> u32 {
        self.incarnation
    }
}

/// Adds every counter of `more` to `total`.
pub fn add_stats(total: &mut Stats, more: &Stats) {
    total.transmissions += more.transmissions;
    for (t, m) in total.retransmissions.iter_mut().zip(more.retransmissions) {
        *t += m;
    }
    total.received += more.received;
    total.duplicates += more.duplicates;
    for (t, m) in total.drops.iter_mut().zip(more.drops) {
        *t += m;
    }
    for (t, m) in total.completed_after.iter_mut().zip(more.completed_after) {
        *t += m;
    }
    total.failed += more.failed;
    total.rtt_samples += more.rtt_samples;
    total.rtt_total += more.rtt_total;
    total.mid_exhausted += more.mid_exhausted;
    total.separate_responses += more.separate_responses;
}
