//! The discrete-event simulator: real `Endpoint`s and their applications on virtual time,
//! joined by a [`Medium`].
//!
//! Every step pops the earliest wake-up from the [`EventQueue`]: either a node (its
//! endpoint's `poll_timeout` came due) or the medium (a serialisation, propagation or MAC
//! timer). A node step runs the endpoint's timers, hands its events to the application,
//! moves its datagrams into the medium and re-arms the node's one wake-up; a medium step
//! advances the medium and feeds every delivered datagram to its receiver.

pub mod address;
pub mod event_queue;
pub mod node;
pub mod node_app;
pub mod packet_store;
pub mod random;

use std::net::SocketAddr;

use covey_proto::{Config, ConfigError, Instant, LocalAddr, Stats};

use crate::media::{Destination, Medium, NodeId, Packet};
pub use address::{endpoint_addr, node_addr, node_of};
pub use event_queue::EventQueue;
pub use node::Node;
pub use node_app::{Lone, NodeApp, SimHost};
pub use packet_store::PacketStore;
pub use random::{derive_seed, splitmix64, stream_rng, SimRng, Stream};

/// The medium's slot in the event queue; node `n` has slot `n + 1`.
const MEDIUM_SLOT: usize = 0;

/// Largest datagram a lab endpoint may send (the engine's buffer for `poll_transmit`).
const DATAGRAM_BUFFER: usize = 2048;

/// Counters of the simulator itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Wake-ups processed (node and medium steps).
    pub steps: u64,
    /// Medium steps.
    pub medium_steps: u64,
    /// Datagrams handed to the medium.
    pub datagrams_sent: u64,
    /// Datagrams delivered to an endpoint.
    pub datagrams_delivered: u64,
    /// Deliveries dropped by the host (no such node, or not a member of the group).
    pub undeliverable: u64,
}

/// A simulation: nodes, a medium, virtual time.
pub struct Simulator<M, A: NodeApp> {
    now: Instant,
    run_seed: u64,
    queue: EventQueue,
    nodes: Vec<Node<A>>,
    medium: M,
    packets: PacketStore,
    buf: Vec<u8>,
    unfinished: usize,
    stats: SimStats,
}

impl<M: Medium, A: NodeApp> Simulator<M, A> {
    /// An empty simulation at time zero over `medium`, seeded with `run_seed`.
    pub fn new(medium: M, run_seed: u64) -> Simulator<M, A> {
        Simulator {
            now: Instant::ZERO,
            run_seed,
            queue: EventQueue::with_slots(1),
            nodes: Vec::new(),
            medium,
            packets: PacketStore::default(),
            buf: vec![0; DATAGRAM_BUFFER],
            unfinished: 0,
            stats: SimStats::default(),
        }
    }

    /// Adds a node running `app` on an endpoint configured by `config`; it starts at once.
    /// Fails, adding nothing, when `config` breaks a rule of [`Config::validate`].
    pub fn add_node(&mut self, config: Config, app: A) -> Result<NodeId, ConfigError> {
        let id = self.nodes.len();
        self.nodes.push(Node::new(id, config, app, self.run_seed)?);
        self.queue.add_slot();
        if self.nodes[id].core.apps.is_done() {
            self.nodes[id].counted_done = true;
        } else {
            self.unfinished += 1;
        }
        self.start_app(id);
        self.process_node(id);
        Ok(id)
    }

    /// Virtual time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The nodes.
    pub fn nodes(&self) -> &[Node<A>] {
        &self.nodes
    }

    /// The medium.
    pub fn medium(&self) -> &M {
        &self.medium
    }

    /// The simulator's own counters.
    pub fn stats(&self) -> SimStats {
        self.stats
    }

    /// Counters of node `node` over all its endpoints.
    pub fn node_stats(&self, node: NodeId) -> Option<Stats> {
        self.nodes.get(node).map(Node::stats)
    }

    /// Packets whose bytes are still held (in the medium or not yet released by it).
    pub fn packets_in_flight(&self) -> usize {
        self.packets.live()
    }

    /// Runs until every application is done, nothing is left to do, or `limit` passes.
    /// Returns whether every application finished.
    pub fn run_until(&mut self, limit: Instant) -> bool {
        while self.unfinished > 0 {
            match self.queue.peek() {
                Some((at, _)) if at <= limit => {
                    self.step();
                }
                _ => break,
            }
        }
        self.unfinished == 0
    }

    /// Lets `f` act on node `id`'s endpoint and app now (e.g. send a request from outside
    /// the app), then moves what it produced into the medium and re-arms the node.
    /// Returns `None` when there is no such node.
    pub fn act<R>(
        &mut self,
        id: NodeId,
        f: impl FnOnce(&mut covey_proto::Endpoint, &mut A, Instant) -> R,
    ) -> Option<R> {
        let now = self.now;
        let node = self.nodes.get_mut(id)?;
        let r = f(&mut node.core.endpoint, &mut node.core.apps, now);
        self.process_node(id);
        Some(r)
    }

    /// Processes every wake-up due at or before `limit`, whether or not the applications
    /// are done, and leaves the clock at `limit`.
    pub fn run_to(&mut self, limit: Instant) {
        while self.queue.peek().is_some_and(|(at, _)| at <= limit) {
            self.step();
        }
        self.now = self.now.max(limit);
    }

    /// Processes the earliest wake-up; false when nothing is pending.
    pub fn step(&mut self) -> bool {
        let Some((at, slot)) = self.queue.pop() else {
            return false;
        };
        self.now = self.now.max(at);
        self.stats.steps += 1;
        if slot == MEDIUM_SLOT {
            self.stats.medium_steps += 1;
            self.medium.handle_timeout(self.now);
            self.drain_medium();
        } else {
            let id = slot - 1;
            let node = &mut self.nodes[id];
            node.core.handle_timeout(self.now, &mut node.host);
            self.process_node(id);
        }
        true
    }

    fn drain_medium(&mut self) {
        while let Some(delivery) = self.medium.poll_delivery() {
            self.deliver(delivery.id, delivery.to);
        }
        while let Some(id) = self.medium.poll_released() {
            self.packets.release(id);
        }
        self.queue.schedule(MEDIUM_SLOT, self.medium.poll_timeout());
    }

    fn deliver(&mut self, id: u64, to: NodeId) {
        let now = self.now;
        let (Some(packet), Some(node)) = (self.packets.get(id), self.nodes.get_mut(to)) else {
            self.stats.undeliverable += 1;
            return;
        };
        let group = packet.destination.ip();
        let local = if group.is_multicast() {
            if !node.host.is_member(group) {
                self.stats.undeliverable += 1;
                return;
            }
            LocalAddr::multicast(group)
        } else {
            LocalAddr::UNICAST
        };
        node.core
            .handle_datagram(now, packet.source, local, &packet.bytes, &mut node.host);
        self.stats.datagrams_delivered += 1;
        self.process_node(to);
    }

    fn start_app(&mut self, id: NodeId) {
        let node = &mut self.nodes[id];
        node.core.start(self.now, &mut node.host);
    }

    /// Hands node `id`'s remaining events to its Apps (after an outside action) and its
    /// datagrams to the medium, restarts its endpoint if the Apps asked, then re-arms its
    /// wake-up.
    fn process_node(&mut self, id: NodeId) {
        let now = self.now;
        loop {
            let node = &mut self.nodes[id];
            node.core.dispatch(now, &mut node.host);
            let source = endpoint_addr(id, node.incarnation);
            let mut sent = false;
            while let Some(t) = node.core.poll_transmit(now, &mut self.buf) {
                let Some(bytes) = self.buf.get(..t.size) else {
                    continue;
                };
                sent = true;
                node.core.apps.on_transmit(now, bytes);
                let to = destination_of(t.destination);
                let pid = self.packets.insert(source, t.destination, bytes);
                self.stats.datagrams_sent += 1;
                self.medium.send(
                    now,
                    Packet {
                        id: pid,
                        from: id,
                        to,
                        payload_bytes: t.size,
                    },
                );
            }
            if sent {
                self.queue.schedule(MEDIUM_SLOT, self.medium.poll_timeout());
            }
            if self.nodes[id].core.apps.take_restart() {
                self.nodes[id].restart(id, self.run_seed);
                self.start_app(id);
                continue;
            }
            if !sent {
                break;
            }
        }
        let node = &mut self.nodes[id];
        if !node.counted_done && node.core.apps.is_done() {
            node.counted_done = true;
            self.unfinished = self.unfinished.saturating_sub(1);
        }
        self.queue.schedule(id + 1, node.core.poll_timeout());
    }
}

/// Where a datagram to `addr` goes: one node, or everyone in range for a group.
fn destination_of(addr: SocketAddr) -> Destination {
    match addr.ip() {
        ip if ip.is_multicast() => Destination::Broadcast,
        ip => match node_of(ip) {
            Some(n) => Destination::Node(n),
            None => Destination::Node(usize::MAX),
        },
    }
}

#[cfg(test)]
mod tests;
