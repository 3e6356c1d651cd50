//! One run of the experiment: the fixed-rate client and the server on one 802.15.4 hop, a
//! fixed number of NON requests at one rate.

use covey_proto::{Config, Duration, Instant, TransmissionParameters};
use covey_sim::media::ieee802154::{Ieee802154Config, Ieee802154Medium, NodeStats, Topology};
use covey_sim::media::Medium;
use covey_sim::sim::{derive_seed, node_addr, Simulator, Stream};
use serde::{Deserialize, Serialize};

use super::client::{RateClient, RESOURCE};
use super::node::WorkloadNode;
use super::serial::{self, SerialBaseStation};
use super::server::FullFrameServer;
use super::Params;
use crate::scenarios::one_hop::LinkFormat;

/// The server is node 0, the client node 1.
const SERVER: usize = 0;
/// The client's node.
const CLIENT: usize = 1;

/// CoAP header bytes before the token.
const COAP_HEADER: usize = 4;

/// One run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunPoint {
    /// Requests per second.
    pub rate: f64,
    /// Whether requests and responses cross the base station's serial line.
    #[serde(default)]
    pub serial_line: bool,
    /// Which seed of the point.
    pub seed_index: usize,
    /// The run seed.
    pub run_seed: u64,
}

/// What one run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The run.
    pub point: RunPoint,
    /// Whether every request had its outcome within the time limit.
    pub finished: bool,
    /// Requests the client was to send.
    pub requests: u32,
    /// Requests answered.
    pub answered: u32,
    /// Requests the client's engine gave up on.
    pub unanswered: u32,
    /// Requests the client's engine refused.
    pub refused: u32,
    /// Mean time from a request's send to its response over the answered requests, seconds.
    #[serde(default)]
    pub latency_mean_s: f64,
    /// Requests that reached the server's application.
    pub server_received: u64,
    /// Requests dropped at the client's full MAC queue (they never left the node).
    pub client_queue_drops: u64,
    /// Responses dropped at the server's full MAC queue.
    pub server_queue_drops: u64,
    /// Responses the base station dropped with its serial line's buffer full.
    #[serde(default)]
    pub serial_drops: u64,
    /// Frames lost to a collision at their receiver (both nodes).
    pub collisions: u64,
    /// Frames dropped after macMaxCSMABackoffs + 1 busy CCAs (both nodes).
    pub channel_access_failures: u64,
    /// Frames dropped after macMaxFrameRetries retransmissions (both nodes).
    pub retries_exhausted: u64,
    /// MAC retransmissions (both nodes).
    pub mac_retries: u64,
    /// Frames on the air, ACKs included.
    pub frames_on_air: u64,
    /// Virtual seconds the run took.
    pub virtual_s: f64,
}

impl RunResult {
    /// The share of requests answered.
    pub fn answered_share(&self) -> f64 {
        if self.requests == 0 {
            return 0.0;
        }
        f64::from(self.answered) / f64::from(self.requests)
    }
}

/// UDP payload bytes of a request: header, token, Uri-Path option (one byte of option
/// header for a value under 13 bytes).
pub fn request_udp_bytes(token_length: usize) -> usize {
    COAP_HEADER + token_length + 1 + RESOURCE.len()
}

/// The response payload that makes the response datagram fill one frame: the largest
/// unfragmented UDP payload less header, token and payload marker.
pub fn response_payload_bytes(link: &LinkFormat, token_length: usize) -> usize {
    link.full_payload(1)
        .unwrap_or(0)
        .saturating_sub(COAP_HEADER + token_length + 1)
}

/// UDP payload bytes of a response: header, token, payload marker and the payload that
/// fills the frame.
pub fn response_udp_bytes(link: &LinkFormat, token_length: usize) -> usize {
    response_payload_bytes(link, token_length) + COAP_HEADER + token_length + 1
}

/// The engine configuration of both nodes: NON requests, NSTART and PROBING_RATE out of the
/// way (TinyCoAP had neither, and the client's rate is the experiment's input), tables for
/// every request of a run.
pub fn endpoint_config(params: &Params) -> Config {
    let room = usize::try_from(params.requests)
        .unwrap_or(usize::MAX)
        .saturating_add(64);
    let transmission = TransmissionParameters {
        nstart: room,
        probing_rate: u32::MAX,
        ..TransmissionParameters::default()
    };
    Config {
        transmission,
        response_timeout: params.response_timeout(),
        max_message_size: 256,
        // The largest block a 256-byte datagram holds; the one-frame response is smaller.
        block_szx: 3,
        max_peers: 4,
        max_exchanges: room,
        max_incoming: room,
        max_dedup_entries: room,
        max_buffers: 2 * room,
        max_queued_per_peer: room,
        max_events: room,
        max_app_timers: 4,
        ..covey_sim::paper_config()
    }
}

/// Runs `point` and returns its measurements.
pub fn run_point(point: &RunPoint, params: &Params) -> RunResult {
    let link = LinkFormat::default();
    let config = Ieee802154Config {
        seed: derive_seed(point.run_seed, Stream::Link(0)),
        mac: link.mac,
        phy: link.phy,
        headers: link.headers,
        queue_capacity_frames: params.queue,
        ..Ieee802154Config::default()
    };
    let radio = Ieee802154Medium::new(config, Topology::full_mesh(2));
    let line = point.serial_line.then(serial::line_config);
    let medium = SerialBaseStation::new(radio, CLIENT, line, params.queue);
    let mut sim: Simulator<_, WorkloadNode> = Simulator::new(medium, point.run_seed);
    let engine = endpoint_config(params);
    let payload = response_payload_bytes(&link, engine.token_length);
    sim.add_node(
        engine.clone(),
        WorkloadNode::Server(FullFrameServer::new(payload)),
    )
    .unwrap_or_else(|e| panic!("server_workload: {e}"));
    sim.add_node(
        engine,
        WorkloadNode::Client(RateClient::new(
            node_addr(SERVER),
            point.rate,
            params.requests,
        )),
    )
    .unwrap_or_else(|e| panic!("server_workload: {e}"));
    // `as` saturates, so no rate or request count can overflow the span.
    let span =
        Duration::from_nanos((1e9 * f64::from(params.requests) / point.rate.max(1e-3)) as u64);
    let limit = Instant::ZERO + span + params.response_timeout() + Duration::from_secs(60);
    let finished = sim.run_until(limit);
    let (answered, unanswered, refused, latency_sum_s) =
        match sim.nodes().get(CLIENT).map(|n| n.app()) {
            Some(WorkloadNode::Client(c)) => (c.answered, c.unanswered, c.refused, c.latency_sum_s),
            _ => (0, 0, 0, 0.0),
        };
    let server_received = match sim.nodes().get(SERVER).map(|n| n.app()) {
        Some(WorkloadNode::Server(s)) => s.received,
        _ => 0,
    };
    let medium = sim.medium().radio();
    let node = |n: usize| medium.node_stats(n).copied().unwrap_or_default();
    let both = |f: fn(&NodeStats) -> u64| f(&node(SERVER)) + f(&node(CLIENT));
    RunResult {
        point: *point,
        finished,
        requests: params.requests,
        answered,
        unanswered,
        refused,
        latency_mean_s: latency_sum_s / f64::from(answered.max(1)),
        server_received,
        client_queue_drops: node(CLIENT).queue_drops,
        server_queue_drops: node(SERVER).queue_drops,
        serial_drops: sim.medium().up_drops,
        collisions: both(|s| s.rx_collisions),
        channel_access_failures: both(|s| s.channel_access_failures),
        retries_exhausted: both(|s| s.retries_exhausted),
        mac_retries: both(|s| s.retries),
        frames_on_air: medium.stats().frames_on_wire,
        virtual_s: sim.now().as_nanos() as f64 / 1e9,
    }
}
