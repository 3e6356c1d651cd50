//! The testbed of one run: a client host and the gateways on a wired LAN, each gateway the
//! RPL root of its own 802.15.4 network of members, the Entity Manager of covey-group running
//! unchanged as an App on every gateway, and every member running Covey's engine with its
//! sensor resource and the `/mc` membership resource.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use covey_core::uri::SocketAuthority;
use covey_group::{EmConfig, EntityManager, GroupMembershipResource, MemoryStore};
use covey_proto::{
    App, AppContext, AppSet, Apps, Config, Duration, Event, Instant, TransmissionParameters,
};
use covey_sim::media::contiki::ContikiConfig;
use covey_sim::media::ieee802154::{
    Ieee802154Config, Ieee802154Medium, MacLayer, NodeStats, PathLoss, RadioParams, ReceptionModel,
};
use covey_sim::media::{NodeId, RadioIslands, WireConfig};
use covey_sim::sim::{derive_seed, node_addr, NodeApp, Simulator, Stream};

use super::hop_profile::{HopProfile, RADIO_RANGE_M};
use super::querier::{Querier, QueryLog, QueryPlan, SharedLog};
use super::thermometer::Thermometer;
use super::wifi::WifiSetup;
use crate::LabError;

/// The client host's node.
pub const CLIENT: NodeId = 0;

/// The gateway's EM, shared with the scenario so it can read what the EM computed.
pub type SharedEm = Rc<RefCell<EntityManager>>;

/// The EM as an App of the gateway's set; on the queried gateway it also notes when a
/// member reply reaches the EM, the end of the paper's entity response time.
struct EmApp(SharedEm, Option<SharedLog>);

impl App for EmApp {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.0.borrow_mut().start(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        if let (Some(log), Event::Response { .. }) = (&self.1, event) {
            log.borrow_mut().last_member_reply = Some(cx.now);
        }
        self.0.borrow_mut().handle_event(cx, event);
    }
}

/// A node of the testbed: its Apps, and for the client the log that says when it is done.
pub struct GroupNode {
    apps: AppSet<dyn App>,
    log: Option<SharedLog>,
}

impl Apps for GroupNode {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.apps.start(cx);
    }

    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        self.apps.dispatch(cx);
    }
}

impl NodeApp for GroupNode {
    fn is_done(&self) -> bool {
        self.log.as_ref().is_none_or(|l| l.borrow().done)
    }
}

/// The CoAP transmission parameters every node uses: RFC 7252's, with ACK_TIMEOUT set.
pub fn transmission(ack_timeout: Duration) -> TransmissionParameters {
    TransmissionParameters {
        ack_timeout,
        ..TransmissionParameters::default()
    }
}

/// Everything that shapes one run's network.
#[derive(Debug, Clone)]
pub struct TestbedSpec {
    /// One radio network per gateway.
    pub islands: Vec<HopProfile>,
    /// Frames each node's MAC queue holds.
    pub queue_frames: usize,
    /// CoAP's ACK_TIMEOUT on every node.
    pub ack_timeout: Duration,
    /// Wi-Fi interference over the radio networks, if any.
    pub wifi: Option<WifiSetup>,
    /// How the radio networks judge receptions.
    pub reception: ReceptionModel,
    /// The run's seed.
    pub run_seed: u64,
}

/// Reception by SINR on the testbed's geometry: the path loss exponent that puts the −95 dBm
/// sensitivity of a 0 dBm sender at [`RADIO_RANGE_M`], so the topology's audibility and the
/// radio's agree (hidden terminals stay hidden).
pub fn sinr_reception() -> ReceptionModel {
    let params = RadioParams::default();
    let budget = params.tx_power_dbm - params.sensitivity_dbm;
    let reference = PathLoss::friis().loss_db(1.0);
    let exponent = (budget - reference) / (10.0 * RADIO_RANGE_M.log10());
    ReceptionModel::Sinr(RadioParams {
        path_loss: PathLoss::log_distance(exponent),
        ..params
    })
}

/// A built testbed, ready to run.
pub struct Testbed {
    /// The simulation.
    pub sim: Simulator<RadioIslands, GroupNode>,
    /// The gateways' nodes, one per island.
    pub gateways: Vec<NodeId>,
    /// Each island's member nodes.
    pub members: Vec<Vec<NodeId>>,
    /// Each gateway's EM.
    pub ems: Vec<SharedEm>,
    /// The client's log.
    pub log: SharedLog,
    /// MAC counters and EM retransmissions when the entities were created: the queries'
    /// counters are what came after.
    pub baseline: (NodeStats, u64),
    /// Whether the Wi-Fi interferer sends (from when the entities exist).
    pub wifi_on: Arc<AtomicBool>,
}

/// The `coap://` URI of `path` on `node`.
pub fn uri(node: NodeId, path: &str) -> String {
    format!("coap://{}/{path}", SocketAuthority(node_addr(node)))
}

/// Members' sensor URIs of island `index`, as JSON strings for a profile's `er`.
pub fn sensor_uris(members: &[NodeId]) -> Vec<String> {
    members.iter().map(|&m| uri(m, "s/t")).collect()
}

/// The address of `node`'s endpoint.
pub fn addr(node: NodeId) -> SocketAddr {
    node_addr(node)
}

impl Testbed {
    /// Builds the network of `spec` with the client following `plan(gateways, members)`.
    pub fn build(
        spec: &TestbedSpec,
        plan: impl FnOnce(&[NodeId], &[Vec<NodeId>]) -> QueryPlan,
    ) -> Result<Testbed, LabError> {
        // Node numbers: the client, then each gateway followed by its members.
        let mut gateways = Vec::new();
        let mut members = Vec::new();
        let mut next = CLIENT + 1;
        for p in &spec.islands {
            gateways.push(next);
            members.push((next + 1..=next + p.members).collect::<Vec<_>>());
            next += 1 + p.members;
        }
        let wifi_on = Arc::new(AtomicBool::new(false));
        let mut medium = RadioIslands::new(next, WireConfig::default());
        medium.wire_node(CLIENT);
        for (i, p) in spec.islands.iter().enumerate() {
            let topology = p
                .topology()
                .map_err(|e| LabError::InvalidOption(format!("group topology: {e}")))?;
            let config = Ieee802154Config {
                seed: derive_seed(spec.run_seed, Stream::Link(i as u64)),
                queue_capacity_frames: spec.queue_frames,
                // The paper's motes ran Contiki 3.0: csma.c over nullrdc, the gateway behind
                // the rpl-border-router's SLIP line, SMRF for multicast. The queue size is
                // the members' QUEUEBUF_NUM.
                mac_layer: MacLayer::Contiki(ContikiConfig {
                    member_queued_packets: spec.queue_frames,
                    ..ContikiConfig::default()
                }),
                reception: spec.reception,
                ..Ieee802154Config::default()
            };
            let mut radio = Ieee802154Medium::new(config, topology);
            if let Some(wifi) = &spec.wifi {
                let (_, positions) = p.layout();
                let seed = derive_seed(spec.run_seed, Stream::Link(1000 + i as u64));
                let interferer = Box::new(wifi.interferer(&positions, i, seed, wifi_on.clone()));
                // Under SINR the bursts enter every frame's SINR sum; under Overlap they
                // corrupt frames as a frame error model.
                if matches!(radio.config().reception, ReceptionModel::Sinr(_)) {
                    let _ = radio.add_interferer(interferer);
                } else {
                    radio.add_frame_error_model(interferer);
                }
            }
            let mut nodes = vec![gateways[i]];
            nodes.extend(&members[i]);
            medium.add_island(radio, nodes);
            medium.wire_node(gateways[i]);
        }
        let mut sim: Simulator<RadioIslands, GroupNode> = Simulator::new(medium, spec.run_seed);
        let transmission = transmission(spec.ack_timeout);

        let log: SharedLog = Rc::new(RefCell::new(QueryLog::default()));
        let plan = plan(&gateways, &members);
        let queried = plan.em;
        let client = Querier::new(plan, log.clone());
        let client_config = Config {
            transmission,
            // The EM answers after its slowest member, which may take the member timeout.
            response_timeout: Duration::from_secs(300),
            ..covey_sim::paper_config()
        };
        sim.add_node(
            client_config,
            GroupNode {
                apps: AppSet::new().with(Box::new(client) as Box<dyn App>),
                log: Some(log.clone()),
            },
        )
        .map_err(|e| LabError::InvalidOption(format!("engine configuration: {e}")))?;

        let mut ems = Vec::new();
        for (i, &gw) in gateways.iter().enumerate() {
            let em_config = EmConfig {
                authorities: vec![node_addr(gw)],
                ..EmConfig::default()
            };
            let mut engine = em_config.engine_config();
            engine.transmission = transmission;
            // As every lab node: no Echo, which the paper's EM predates.
            engine.amplification = covey_sim::paper_config().amplification;
            let em = EntityManager::new(em_config, Box::new(MemoryStore::new()))
                .map_err(|e| LabError::InvalidOption(format!("entity manager: {e}")))?;
            let shared = Rc::new(RefCell::new(em));
            ems.push(shared.clone());
            sim.add_node(
                engine,
                GroupNode {
                    apps: AppSet::new().with(Box::new(EmApp(
                        shared,
                        (node_addr(gw) == queried).then(|| log.clone()),
                    )) as Box<dyn App>),
                    log: None,
                },
            )
            .map_err(|e| LabError::InvalidOption(format!("engine configuration: {e}")))?;
            for (k, _) in members[i].iter().enumerate() {
                let celsius = 20.0 + (k % 10) as f64 * 0.5;
                let sensor: Box<dyn App> = Box::new(Thermometer::new(celsius));
                let membership: Box<dyn App> = Box::new(GroupMembershipResource::new());
                let apps = AppSet::new().with(sensor).with(membership);
                sim.add_node(
                    Config {
                        transmission,
                        ..covey_sim::paper_config()
                    },
                    GroupNode { apps, log: None },
                )
                .map_err(|e| LabError::InvalidOption(format!("engine configuration: {e}")))?;
            }
        }
        Ok(Testbed {
            sim,
            gateways,
            members,
            ems,
            log,
            baseline: (NodeStats::default(), 0),
            wifi_on,
        })
    }

    /// Runs until the client is done or `limit` of virtual time has passed, noting the
    /// counters when the entities are created.
    pub fn run(&mut self, limit: Duration) -> bool {
        let end = Instant::ZERO + limit;
        while !self.log.borrow().created && !self.log.borrow().done && self.sim.now() < end {
            if !self.sim.step() {
                break;
            }
        }
        self.baseline = (self.radio_totals(), self.em_total_retransmissions());
        self.wifi_on.store(true, Ordering::Relaxed);
        self.sim.run_until(end)
    }

    /// The MAC counters of every radio node since the entities were created.
    pub fn mac_totals(&self) -> NodeStats {
        let now = self.radio_totals();
        let base = self.baseline.0;
        NodeStats {
            frames_sent: now.frames_sent - base.frames_sent,
            acks_sent: now.acks_sent - base.acks_sent,
            retries: now.retries - base.retries,
            channel_access_failures: now.channel_access_failures - base.channel_access_failures,
            retries_exhausted: now.retries_exhausted - base.retries_exhausted,
            queue_drops: now.queue_drops - base.queue_drops,
            rx_collisions: now.rx_collisions - base.rx_collisions,
            rx_channel_errors: now.rx_channel_errors - base.rx_channel_errors,
            forwarded: now.forwarded - base.forwarded,
            duplicates: now.duplicates - base.duplicates,
        }
    }

    /// CoAP retransmissions by the gateways' EMs since the entities were created.
    pub fn em_retransmissions(&self) -> u64 {
        self.em_total_retransmissions() - self.baseline.1
    }

    /// The MAC counters of every radio node, summed over the whole run.
    fn radio_totals(&self) -> NodeStats {
        let mut total = NodeStats::default();
        for (i, members) in self.members.iter().enumerate() {
            let Some(radio) = self.sim.medium().island(i) else {
                continue;
            };
            for local in 0..=members.len() {
                if let Some(s) = radio.node_stats(local) {
                    total.frames_sent += s.frames_sent;
                    total.acks_sent += s.acks_sent;
                    total.retries += s.retries;
                    total.channel_access_failures += s.channel_access_failures;
                    total.retries_exhausted += s.retries_exhausted;
                    total.queue_drops += s.queue_drops;
                    total.rx_collisions += s.rx_collisions;
                    total.rx_channel_errors += s.rx_channel_errors;
                    total.forwarded += s.forwarded;
                    total.duplicates += s.duplicates;
                }
            }
        }
        total
    }

    /// CoAP retransmissions by the gateways' EMs over the whole run.
    fn em_total_retransmissions(&self) -> u64 {
        self.gateways
            .iter()
            .filter_map(|&g| self.sim.node_stats(g))
            .map(|s| s.retransmissions.iter().sum::<u64>())
            .sum()
    }
}
