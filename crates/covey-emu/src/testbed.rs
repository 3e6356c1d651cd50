//! A testbed: named nodes, each a network namespace with one TUN device and one IPv4
//! address in a shared /24, every pair joined by an emulated point-to-point link whose two
//! directions run the simulator's link model on real time. Processes started in the nodes
//! are supervised; dropping the testbed (or interrupting the program) removes every
//! process, device and namespace it created.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicU64, Ordering};

use covey_proto::Duration;
use covey_sim::media::{Framing, HeaderModel, LinkConfig, LossSpec, PropagationDelay};

use super::flow_counters::FlowRecord;
use super::interrupt;
use super::link_process::{Forwarder, ForwarderSetup};
use super::link_stats::{DirectionStats, ForwarderStats};
use super::message_marks::{MessageCounts, MessageMarker};
use super::namespace::{ip, namespaces_with_prefix, Namespace};
use super::supervisor::Supervised;
use super::tun_link::TunPort;
use super::{emulated_link, require_root, EmuError, NAMESPACE_PREFIX};

/// Distinguishes the testbeds of one process.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// Longest node name (it becomes part of a namespace name).
const MAX_NODE_NAME: usize = 16;

/// A process started in a testbed node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId(pub usize);

/// Describes a testbed before it is built.
#[derive(Debug, Clone)]
pub struct TestbedBuilder {
    nodes: Vec<String>,
    links: Vec<(String, String, LinkConfig, LinkConfig)>,
    default_link: LinkConfig,
    seed: u64,
    subnet: [u8; 3],
    mtu: u16,
    packet_capacity: usize,
    max_flows: usize,
    spin: Duration,
    realtime: bool,
    message_marker: Option<MessageMarker>,
}

impl Default for TestbedBuilder {
    fn default() -> TestbedBuilder {
        TestbedBuilder {
            nodes: Vec::new(),
            links: Vec::new(),
            default_link: emulated_link(
                10_000_000_000,
                PropagationDelay::Fixed(Duration::ZERO),
                LossSpec::None,
                10_000,
            ),
            seed: 1,
            subnet: [10, 77, 0],
            mtu: 1500,
            packet_capacity: 16_384,
            max_flows: 4096,
            spin: Duration::from_micros(50),
            realtime: true,
            message_marker: None,
        }
    }
}

impl TestbedBuilder {
    /// Adds a node (a namespace); names are 1–16 of `a-z`, `0-9`, `-`.
    pub fn node(mut self, name: &str) -> TestbedBuilder {
        self.nodes.push(name.to_owned());
        self
    }

    /// Sets the link between `a` and `b`: `a_to_b` and `b_to_a` configure its directions.
    /// Its framing is replaced by the emulator's (whole IP packets, no fragmentation).
    pub fn link(mut self, a: &str, b: &str, a_to_b: LinkConfig, b_to_a: LinkConfig) -> Self {
        self.links
            .push((a.to_owned(), b.to_owned(), a_to_b, b_to_a));
        self
    }

    /// The same configuration in both directions between `a` and `b`.
    pub fn symmetric_link(self, a: &str, b: &str, config: LinkConfig) -> TestbedBuilder {
        self.link(a, b, config, config)
    }

    /// The link of every pair not set with [`Self::link`] (default: 10 Gbit/s, no delay,
    /// no loss).
    pub fn default_link(mut self, config: LinkConfig) -> TestbedBuilder {
        self.default_link = config;
        self
    }

    /// Seed of the link models' random streams (default 1).
    pub fn seed(mut self, seed: u64) -> TestbedBuilder {
        self.seed = seed;
        self
    }

    /// The /24 the nodes are numbered in (default 10.77.0.0/24; node i gets .(i + 1)).
    /// Each testbed's namespaces are private, so testbeds may share it.
    pub fn subnet(mut self, network: Ipv4Addr) -> TestbedBuilder {
        let o = network.octets();
        self.subnet = [o[0], o[1], o[2]];
        self
    }

    /// The TUN devices' MTU (576–9000, default 1500).
    pub fn mtu(mut self, mtu: u16) -> TestbedBuilder {
        self.mtu = mtu;
        self
    }

    /// Packets the forwarder holds at most (queued and propagating, all links; default
    /// 16 384); beyond it packets are dropped and counted.
    pub fn packet_capacity(mut self, packets: usize) -> TestbedBuilder {
        self.packet_capacity = packets;
        self
    }

    /// Flows counted apart (default 4096); later flows share one overflow entry.
    pub fn max_flows(mut self, flows: usize) -> TestbedBuilder {
        self.max_flows = flows;
        self
    }

    /// How long before a due time the forwarder busy-waits instead of sleeping (default
    /// 50 µs; zero never spins).
    pub fn spin(mut self, spin: Duration) -> TestbedBuilder {
        self.spin = spin;
        self
    }

    /// Whether the forwarder runs under SCHED_FIFO (default yes; it falls back to normal
    /// scheduling when `chrt` is missing or refused).
    pub fn realtime(mut self, realtime: bool) -> TestbedBuilder {
        self.realtime = realtime;
        self
    }

    /// Counts application messages per direction: packets holding `marker` followed by a
    /// sequence number up to `max_label` (off by default; see [`Testbed::messages`]).
    pub fn message_marker(mut self, marker: &[u8], max_label: u64) -> TestbedBuilder {
        self.message_marker = Some(MessageMarker::new(marker, max_label));
        self
    }

    fn check(&self) -> Result<(), EmuError> {
        if self.nodes.len() < 2 || self.nodes.len() > 250 {
            return Err(EmuError::Invalid(format!(
                "a testbed has 2 to 250 nodes, not {}",
                self.nodes.len()
            )));
        }
        for (i, name) in self.nodes.iter().enumerate() {
            let valid = !name.is_empty()
                && name.len() <= MAX_NODE_NAME
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !valid {
                return Err(EmuError::Invalid(format!(
                    "node name `{name}`: use 1 to {MAX_NODE_NAME} of a-z, 0-9 and -"
                )));
            }
            if self.nodes[..i].contains(name) {
                return Err(EmuError::Invalid(format!("node `{name}` appears twice")));
            }
        }
        if !(576..=9000).contains(&self.mtu) {
            return Err(EmuError::Invalid(format!(
                "MTU {} not in 576..=9000",
                self.mtu
            )));
        }
        if self.packet_capacity == 0 {
            return Err(EmuError::Invalid("packet capacity 0".into()));
        }
        Ok(())
    }

    fn index(&self, name: &str) -> Result<usize, EmuError> {
        self.nodes
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| EmuError::UnknownNode(name.to_owned()))
    }

    /// Creates the namespaces and devices and starts the forwarder.
    pub fn build(self) -> Result<Testbed, EmuError> {
        require_root()?;
        self.check()?;
        interrupt::install_handler();
        remove_stale_namespaces();
        let n = self.nodes.len();
        let framing = Framing {
            mtu: 65_535,
            header: HeaderModel::Included,
        };
        let mut pairs = vec![None; n * n];
        for (a, b, ab, ba) in &self.links {
            let (i, j) = (self.index(a)?, self.index(b)?);
            if i == j {
                return Err(EmuError::Invalid(format!("link from `{a}` to itself")));
            }
            let (ab, ba) = (LinkConfig { framing, ..*ab }, LinkConfig { framing, ..*ba });
            let (lo, hi, lo_hi, hi_lo) = if i < j {
                (i, j, ab, ba)
            } else {
                (j, i, ba, ab)
            };
            pairs[lo * n + hi] = Some((lo_hi, hi_lo));
        }
        let default = LinkConfig {
            framing,
            ..self.default_link
        };
        let mut links = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let (ab, ba) = pairs[a * n + b].unwrap_or((default, default));
                links.push((a, b, ab, ba));
            }
        }

        let id = SERIAL.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("{NAMESPACE_PREFIX}{}-{id}-", std::process::id());
        let names: Vec<String> = self.nodes.iter().map(|n| format!("{prefix}{n}")).collect();
        interrupt::register(id, names.clone());
        let mut testbed = Testbed {
            id,
            nodes: self.nodes.clone(),
            namespaces: Vec::with_capacity(n),
            subnet: self.subnet,
            processes: Vec::new(),
            forwarder: None,
        };
        // From here on, an error drops `testbed`, which removes what was made so far.
        let mut ports = Vec::with_capacity(n);
        for (i, name) in names.iter().enumerate() {
            // Not after an interrupt's clean-up, which could no longer delete it.
            let guard = interrupt::hold_for_start().ok_or(EmuError::Interrupted)?;
            let ns = Namespace::create(name)?;
            drop(guard);
            ports.push(TunPort::create(&ns, testbed.address_of(i), 24, self.mtu)?);
            testbed.namespaces.push(ns);
        }
        testbed.forwarder = Some(Forwarder::spawn(ForwarderSetup {
            ports,
            links,
            seed: self.seed,
            subnet: self.subnet,
            packet_capacity: self.packet_capacity,
            max_flows: self.max_flows,
            spin: self.spin,
            mtu: usize::from(self.mtu),
            realtime: self.realtime,
            message_marker: self.message_marker,
        })?);
        Ok(testbed)
    }
}

/// A running testbed.
#[derive(Debug)]
pub struct Testbed {
    id: u64,
    nodes: Vec<String>,
    namespaces: Vec<Namespace>,
    subnet: [u8; 3],
    processes: Vec<Option<Supervised>>,
    forwarder: Option<Forwarder>,
}

impl Testbed {
    /// A builder with no nodes.
    pub fn builder() -> TestbedBuilder {
        TestbedBuilder::default()
    }

    /// The node names, in the order they were added.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    fn index(&self, node: &str) -> Result<usize, EmuError> {
        self.nodes
            .iter()
            .position(|n| n == node)
            .ok_or_else(|| EmuError::UnknownNode(node.to_owned()))
    }

    fn address_of(&self, index: usize) -> Ipv4Addr {
        let [a, b, c] = self.subnet;
        Ipv4Addr::new(a, b, c, u8::try_from(index + 1).unwrap_or(u8::MAX))
    }

    /// The node's IPv4 address.
    pub fn address(&self, node: &str) -> Result<Ipv4Addr, EmuError> {
        Ok(self.address_of(self.index(node)?))
    }

    /// The node's namespace name, for `ip netns exec NAME …` or `ip -n NAME …`.
    pub fn netns(&self, node: &str) -> Result<&str, EmuError> {
        let i = self.index(node)?;
        self.namespaces
            .get(i)
            .map(Namespace::name)
            .ok_or_else(|| EmuError::UnknownNode(node.to_owned()))
    }

    fn namespace(&self, node: &str) -> Result<&Namespace, EmuError> {
        let i = self.index(node)?;
        self.namespaces
            .get(i)
            .ok_or_else(|| EmuError::UnknownNode(node.to_owned()))
    }

    /// Runs `f` on a thread inside the node's namespace (sockets it opens live there).
    pub fn run_in<T, F>(&self, node: &str, f: F) -> Result<T, EmuError>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        self.namespace(node)?.run_inside(f)
    }

    /// A UDP socket bound to `port` (0: any) on the node's address.
    pub fn udp_socket(&self, node: &str, port: u16) -> Result<UdpSocket, EmuError> {
        let local = SocketAddr::V4(SocketAddrV4::new(self.address(node)?, port));
        self.run_in(node, || UdpSocket::bind(local))?
            .map_err(|e| EmuError::io(format!("bind UDP {local} in {node}"), e))
    }

    /// Starts `command` inside the node (in a process group of its own); the testbed stops
    /// it when dropped. Its stdio settings are kept.
    pub fn exec(&mut self, node: &str, command: &mut Command) -> Result<ProcessId, EmuError> {
        let program = command.get_program().to_string_lossy().into_owned();
        command.process_group(0);
        let namespace = self.namespace(node)?;
        let mut guard = interrupt::hold_for_start().ok_or(EmuError::Interrupted)?;
        let child = namespace
            .run_inside(|| command.spawn())?
            .map_err(|e| EmuError::io(format!("start `{program}` in node {node}"), e))?;
        let supervised = Supervised { child };
        guard.add_group(self.id, supervised.group());
        drop(guard);
        Ok(self.supervise(supervised))
    }

    /// Supervises a process the caller started in a node some other way (for example with
    /// `ip netns exec`): the testbed stops it, and its process group if it leads one, when
    /// dropped or interrupted, as it does the processes of [`Self::exec`].
    pub fn adopt(&mut self, child: Child) -> ProcessId {
        let supervised = Supervised { child };
        interrupt::add_group(self.id, supervised.group());
        self.supervise(supervised)
    }

    fn supervise(&mut self, supervised: Supervised) -> ProcessId {
        self.processes.push(Some(supervised));
        ProcessId(self.processes.len() - 1)
    }

    /// A started process, to read its pipes or poll its status.
    pub fn process(&mut self, id: ProcessId) -> Result<&mut Child, EmuError> {
        match self.processes.get_mut(id.0) {
            Some(Some(s)) => Ok(&mut s.child),
            _ => Err(EmuError::UnknownProcess(id.0)),
        }
    }

    /// Stops a started process (SIGTERM, then SIGKILL after a grace period).
    pub fn stop_process(&mut self, id: ProcessId) -> Result<Option<ExitStatus>, EmuError> {
        let mut s = self
            .processes
            .get_mut(id.0)
            .and_then(Option::take)
            .ok_or(EmuError::UnknownProcess(id.0))?;
        let status = s.stop();
        interrupt::remove_group(self.id, s.group());
        Ok(status)
    }

    fn forwarder(&self) -> Result<&Forwarder, EmuError> {
        self.forwarder
            .as_ref()
            .ok_or_else(|| EmuError::Invalid("the forwarder is not running".into()))
    }

    /// Packets and bytes per flow and direction so far.
    pub fn counters(&self) -> Vec<FlowRecord> {
        self.forwarder()
            .map(|f| f.shared().flows.records(&self.nodes))
            .unwrap_or_default()
    }

    /// The application messages put on each direction so far, as (from, to, counts), for
    /// directions that carried any (empty unless the builder set a message marker).
    pub fn messages(&self) -> Vec<(String, String, MessageCounts)> {
        let Ok(forwarder) = self.forwarder() else {
            return Vec::new();
        };
        let n = self.nodes.len();
        let shared = forwarder.shared();
        let mut out = Vec::new();
        for (i, tally) in shared.messages.iter().enumerate() {
            let counts = tally.counts();
            if counts != MessageCounts::default() {
                out.push((self.nodes[i / n].clone(), self.nodes[i % n].clone(), counts));
            }
        }
        out
    }

    /// The counts of the direction from `from` to `to`.
    pub fn direction(&self, from: &str, to: &str) -> Result<DirectionStats, EmuError> {
        let (i, j) = (self.index(from)?, self.index(to)?);
        let n = self.nodes.len();
        Ok(self.forwarder()?.shared().directions[i * n + j])
    }

    /// The forwarder's own counts and its timing precision.
    pub fn forwarder_stats(&self) -> ForwarderStats {
        self.forwarder()
            .map(|f| f.shared().stats.clone())
            .unwrap_or_default()
    }

    /// Stops everything and reports whether the forwarder had failed.
    pub fn shutdown(mut self) -> Result<(), EmuError> {
        self.stop_processes();
        match self.forwarder.take() {
            Some(mut f) => f.stop(),
            None => Ok(()),
        }
    }

    fn stop_processes(&mut self) {
        for s in self.processes.iter_mut().filter_map(Option::take) {
            let mut s = s;
            s.stop();
        }
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        // Processes first (they keep their namespaces alive), then the devices (closed with
        // the forwarder), then the namespaces.
        self.stop_processes();
        if let Some(mut f) = self.forwarder.take() {
            let _ = f.stop();
        }
        self.namespaces.clear();
        interrupt::unregister(self.id);
    }
}

/// Deletes namespaces left by emulator runs whose process no longer exists (killed hard).
fn remove_stale_namespaces() {
    for name in namespaces_with_prefix(NAMESPACE_PREFIX) {
        let pid = name[NAMESPACE_PREFIX.len()..]
            .split('-')
            .next()
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = ip(&["netns", "del", &name]);
            }
        }
    }
}
