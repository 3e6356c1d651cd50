//! An in-memory network on virtual time for protocol tests: endpoints with applications,
//! links with delay and loss, multicast groups whose membership apps can change, and a log
//! of every datagram. Test support only (feature `testing`), shared by the crates above.

use crate::{
    App, AppContext, AppSet, Config, Duration, Endpoint, Event, GroupError, Host, Instant,
    LocalAddr, LogLevel, PeerIdentity,
};
#[cfg(feature = "client")]
use crate::{Request, RequestError, RequestId, RequestParams};
use core::ops::{Deref, DerefMut};
use std::boxed::Box;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::rc::Rc;
use std::vec;
use std::vec::Vec;

/// A datagram that crossed (or was dropped by) the network.
#[derive(Debug, Clone)]
pub struct Sent {
    /// When it was sent.
    pub at: Instant,
    /// The sender.
    pub from: SocketAddr,
    /// The destination (a node or a group).
    pub to: SocketAddr,
    /// The datagram.
    pub bytes: Vec<u8>,
    /// Whether it was lost on every path.
    pub dropped: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: Instant,
    seq: u64,
    from: SocketAddr,
    to: SocketAddr,
    group: Option<IpAddr>,
    bytes: Vec<u8>,
}

/// Events an application did not consume, for the test to inspect.
pub type EventLog = Vec<(Instant, Event)>;

/// An App built from a closure.
pub struct FnApp<F: FnMut(&mut Endpoint, Instant, Event)>(pub F);

impl<F: FnMut(&mut Endpoint, Instant, Event)> App for FnApp<F> {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        (self.0)(cx.endpoint, cx.now, event)
    }
}

/// The host of a test node: its group memberships live in the network's group table, and
/// its Apps' log lines are kept for the test to read.
pub struct TestHost {
    addr: SocketAddr,
    groups: GroupTable,
    /// Log lines written by the node's Apps.
    pub log: Vec<(LogLevel, std::string::String)>,
    /// The identities peers authenticated with, as a DTLS layer would report them.
    pub identities: HashMap<SocketAddr, PeerIdentity>,
}

impl Host for TestHost {
    fn join_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        let mut groups = self.groups.borrow_mut();
        let members = groups.entry(group).or_default();
        if !members.contains(&self.addr) {
            members.push(self.addr);
        }
        Ok(())
    }

    fn leave_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        let mut groups = self.groups.borrow_mut();
        let members = groups.get_mut(&group).ok_or(GroupError::NotJoined)?;
        let before = members.len();
        members.retain(|a| *a != self.addr);
        if members.len() == before {
            return Err(GroupError::NotJoined);
        }
        Ok(())
    }

    fn groups(&self) -> Vec<IpAddr> {
        let mut joined: Vec<IpAddr> = self
            .groups
            .borrow()
            .iter()
            .filter(|(_, m)| m.contains(&self.addr))
            .map(|(g, _)| *g)
            .collect();
        joined.sort();
        joined
    }

    fn log(&mut self, level: LogLevel, message: core::fmt::Arguments<'_>) {
        self.log.push((level, std::format!("{message}")));
    }

    fn peer_identity(
        &self,
        remote: SocketAddr,
        _local: Option<SocketAddr>,
    ) -> Option<PeerIdentity> {
        self.identities.get(&remote).cloned()
    }
}

/// One endpoint of the network with its applications; it derefs to the shared
/// [`crate::Node`], so `node.endpoint` and `node.apps` are its engine and Apps.
pub struct Node {
    /// Its address.
    pub addr: SocketAddr,
    /// Its engine and Apps, driven as the drivers drive them.
    pub node: crate::Node<AppSet<dyn App>>,
    /// Events seen when the node has no app.
    pub events: EventLog,
    /// What its Apps see of the node.
    pub host: TestHost,
}

impl Deref for Node {
    type Target = crate::Node<AppSet<dyn App>>;

    fn deref(&self) -> &Self::Target {
        &self.node
    }
}

impl DerefMut for Node {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.node
    }
}

/// Group address -> the addresses of the nodes that joined it; shared with member apps.
pub type GroupTable = Rc<RefCell<HashMap<IpAddr, Vec<SocketAddr>>>>;

/// Decides whether a datagram is lost: (from, to, bytes) -> drop?
pub type DropRule = Box<dyn FnMut(&SocketAddr, &SocketAddr, &[u8]) -> bool>;

/// The network: nodes, links with one delay and loss rate, groups, and a log.
pub struct Network {
    /// Virtual time.
    pub now: Instant,
    /// Every node.
    pub nodes: Vec<Node>,
    /// One-way delay of every link.
    pub delay: Duration,
    /// Probability that a datagram is lost on its way to one receiver.
    pub loss: f64,
    /// Every datagram sent.
    pub log: Vec<Sent>,
    /// Drops chosen by the test, on top of random loss.
    pub drop_rule: Option<DropRule>,
    groups: GroupTable,
    queue: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    rng: u64,
}

/// The address of test node `n`.
pub fn addr(n: u16) -> SocketAddr {
    SocketAddr::new(
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, n)),
        5683,
    )
}

impl Network {
    /// An empty network with `delay` and `loss`; `seed` makes the loss reproducible.
    pub fn new(delay: Duration, loss: f64, seed: u64) -> Network {
        Network {
            now: Instant::from_secs(1000),
            nodes: Vec::new(),
            delay,
            loss,
            log: Vec::new(),
            drop_rule: None,
            groups: GroupTable::default(),
            queue: BinaryHeap::new(),
            seq: 0,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    /// Adds a node; `app` None means events are collected in `node.events`. Panics on a
    /// `config` that [`Config::validate`] refuses (a test's mistake).
    pub fn add(
        &mut self,
        addr: SocketAddr,
        config: Config,
        seed: u64,
        app: Option<Box<dyn App>>,
    ) -> usize {
        self.add_apps(addr, config, seed, app.map(|a| AppSet::new().with(a)))
    }

    /// Adds a node hosting several Apps; `None` means events are collected in `node.events`.
    /// Panics on an invalid `config`, as [`add`](Self::add).
    pub fn add_apps(
        &mut self,
        addr: SocketAddr,
        config: Config,
        seed: u64,
        apps: Option<AppSet<dyn App>>,
    ) -> usize {
        let mut node = crate::Node::new(endpoint(config, seed), apps.unwrap_or_default());
        let mut host = TestHost {
            addr,
            groups: self.groups.clone(),
            log: Vec::new(),
            identities: HashMap::new(),
        };
        node.start(self.now, &mut host);
        self.nodes.push(Node {
            addr,
            node,
            events: Vec::new(),
            host,
        });
        let i = self.nodes.len() - 1;
        self.flush(i);
        i
    }

    /// Makes node `node` a member of `group`.
    pub fn join(&mut self, node: usize, group: IpAddr) {
        let addr = self.nodes[node].addr;
        self.groups
            .borrow_mut()
            .entry(group)
            .or_default()
            .push(addr);
    }

    /// The shared group table, for member apps that join and leave groups.
    pub fn groups(&self) -> GroupTable {
        self.groups.clone()
    }

    /// Replaces node `i`'s endpoint and app (a restart: all engine state is lost). Panics on
    /// an invalid `config`, as [`add`](Self::add).
    pub fn restart(&mut self, i: usize, config: Config, seed: u64, app: Option<Box<dyn App>>) {
        let apps = app.map_or_else(AppSet::new, |a| AppSet::new().with(a));
        let mut node = crate::Node::new(endpoint(config, seed), apps);
        node.start(self.now, &mut self.nodes[i].host);
        self.nodes[i].node = node;
        self.flush(i);
    }

    fn random(&mut self) -> f64 {
        // xorshift64*: deterministic loss per seed.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Moves every datagram node `i` wants to send onto the wire, and its events to its app.
    pub fn flush(&mut self, i: usize) {
        loop {
            let now = self.now;
            let Node {
                node, events, host, ..
            } = &mut self.nodes[i];
            node.dispatch(now, host);
            while let Some(e) = node.endpoint.poll_event() {
                events.push((now, e));
            }
            let mut buf = vec![0u8; 2048];
            let mut sent_any = false;
            while let Some(t) = self.nodes[i].node.poll_transmit(now, &mut buf) {
                sent_any = true;
                let from = self.nodes[i].addr;
                let bytes = buf[..t.size].to_vec();
                self.send(from, t.destination, bytes);
            }
            if !sent_any {
                break;
            }
        }
    }

    /// Puts a datagram on the wire (subject to loss and the drop rule).
    pub fn send(&mut self, from: SocketAddr, to: SocketAddr, bytes: Vec<u8>) {
        let receivers: Vec<(usize, Option<IpAddr>)> = if to.ip().is_multicast() {
            let members = self
                .groups
                .borrow()
                .get(&to.ip())
                .cloned()
                .unwrap_or_default();
            members
                .iter()
                .filter_map(|a| self.nodes.iter().position(|n| n.addr == *a))
                .map(|n| (n, Some(to.ip())))
                .collect()
        } else {
            self.nodes
                .iter()
                .position(|n| n.addr == to)
                .map(|n| vec![(n, None)])
                .unwrap_or_default()
        };
        let mut dropped_all = true;
        for (node, group) in receivers {
            let ruled = self
                .drop_rule
                .as_mut()
                .is_some_and(|r| r(&from, &to, &bytes));
            let lost = ruled || (self.loss > 0.0 && self.random() < self.loss);
            if lost {
                continue;
            }
            dropped_all = false;
            self.seq += 1;
            self.queue.push(Reverse(InFlight {
                at: self.now + self.delay,
                seq: self.seq,
                from,
                to: self.nodes[node].addr,
                group,
                bytes: bytes.clone(),
            }));
        }
        self.log.push(Sent {
            at: self.now,
            from,
            to,
            bytes,
            dropped: dropped_all,
        });
    }

    /// Node `i` sends `request` to `to` now, and its datagrams go on the wire at once.
    #[cfg(feature = "client")]
    pub fn request(
        &mut self,
        i: usize,
        to: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
    ) -> Result<RequestId, RequestError> {
        let now = self.now;
        let id = self.nodes[i]
            .endpoint
            .send_request(now, to, request, params);
        self.flush(i);
        id
    }

    /// Injects a datagram arriving at node `i` now, as if from `from`.
    pub fn inject(&mut self, from: SocketAddr, i: usize, bytes: &[u8]) {
        let now = self.now;
        let Node { node, host, .. } = &mut self.nodes[i];
        node.handle_datagram(now, from, LocalAddr::UNICAST, bytes, host);
        self.flush(i);
    }

    fn next_time(&self) -> Option<Instant> {
        let wire = self.queue.peek().map(|r| r.0.at);
        let timers = self
            .nodes
            .iter()
            .filter_map(|n| n.node.poll_timeout())
            .min();
        match (wire, timers) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs until nothing is left to do or `deadline` passes; returns steps taken.
    pub fn run_until(&mut self, deadline: Instant) -> usize {
        let mut steps = 0;
        while let Some(t) = self.next_time() {
            if t > deadline {
                break;
            }
            steps += 1;
            assert!(steps < 10_000_000, "network did not settle");
            self.now = self.now.max(t);
            let now = self.now;
            while self.queue.peek().is_some_and(|r| r.0.at <= now) {
                let Reverse(p) = self.queue.pop().unwrap();
                let Some(i) = self.nodes.iter().position(|n| n.addr == p.to) else {
                    continue;
                };
                let local = p.group.map_or(LocalAddr::UNICAST, LocalAddr::multicast);
                let Node { node, host, .. } = &mut self.nodes[i];
                node.handle_datagram(now, p.from, local, &p.bytes, host);
                self.flush(i);
            }
            for i in 0..self.nodes.len() {
                let Node { node, host, .. } = &mut self.nodes[i];
                if node.poll_timeout().is_some_and(|t| t <= now) {
                    node.handle_timeout(now, host);
                }
                self.flush(i);
            }
        }
        self.now = self
            .now
            .max(deadline.min(self.next_time().unwrap_or(deadline)));
        steps
    }

    /// Runs for `d` of virtual time.
    pub fn run_for(&mut self, d: Duration) -> usize {
        let deadline = self.now + d;
        let steps = self.run_until(deadline);
        self.now = deadline;
        steps
    }

    /// Datagrams sent by `from`.
    pub fn sent_by(&self, from: SocketAddr) -> Vec<&Sent> {
        self.log.iter().filter(|s| s.from == from).collect()
    }
}

/// A test network's endpoint: a refused configuration is the test's mistake.
fn endpoint(config: Config, seed: u64) -> Endpoint {
    Endpoint::new(config, seed).unwrap_or_else(|e| panic!("invalid Config for a test node: {e}"))
}
