//! One run of the experiment: a client and a server on one 802.15.4 hop under one error
//! model at one SNR, 100 consecutive transactions of one payload size.

use covey_proto::{Config, Instant, RandomFactor, TransmissionParameters};
use covey_sim::media::fading::{PaperFadingModel, RayleighFadingLoss};
use covey_sim::media::ieee802154::{Ieee802154Config, Ieee802154Medium, Topology};
use covey_sim::media::{LossCause, Medium};
use covey_sim::sim::{derive_seed, node_addr, stream_rng, Simulator, Stream};
use serde::{Deserialize, Serialize};

use super::client::TransferClient;
use super::error_model::ErrorModel;
use super::node::GoodputNode;
use super::server::PayloadServer;
use super::udp_discard::UdpDiscard;
use super::Params;
use crate::scenarios::one_hop::LinkFormat;

/// The server is node 0, the client node 1.
const SERVER: usize = 0;
/// The client's node.
const CLIENT: usize = 1;

/// One run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunPoint {
    /// How traffic is corrupted.
    pub model: ErrorModel,
    /// The SNR in dB.
    pub snr_db: f64,
    /// Bytes of the representation fetched.
    pub payload: usize,
    /// Which seed of the point.
    pub seed_index: usize,
    /// The run seed (the same for every model, SNR and payload: one random sequence).
    pub run_seed: u64,
}

/// What one run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The run.
    pub point: RunPoint,
    /// Whether every transaction ended within the time limit.
    pub finished: bool,
    /// Fragments of the largest datagram sent (the response's).
    pub fragments: usize,
    /// Transactions with the whole representation.
    pub succeeded: u32,
    /// Transactions that failed.
    pub failed: u32,
    /// Payload bytes received.
    pub bytes: u64,
    /// Seconds from the first request to the end of the last transaction.
    pub elapsed_s: f64,
    /// Goodput: payload bytes received per second.
    pub goodput: f64,
    /// CoAP retransmissions by the client.
    pub coap_retransmissions: u64,
    /// CoAP datagrams sent by both nodes.
    pub coap_datagrams: u64,
    /// Frames on the air (data, fragments and ACKs, retries included).
    pub frames_on_air: u64,
    /// MAC retransmissions of data frames.
    pub mac_retries: u64,
    /// Datagrams the radio lost to channel errors.
    pub channel_losses: u64,
    /// Datagrams the receiving UDP layer discarded (the paper's method).
    pub udp_discards: u64,
}

/// The engine configuration of both nodes: the paper's fixed 1 s initial timeout without
/// randomisation (ACK_RANDOM_FACTOR 1.0), 4 retransmissions, room for a 1200-byte body.
pub fn endpoint_config(params: &Params) -> Config {
    let transmission = TransmissionParameters {
        ack_timeout: params.ack_timeout(),
        ack_random_factor: RandomFactor::ONE,
        max_retransmit: params.max_retransmit,
        ..TransmissionParameters::default()
    };
    Config {
        response_timeout: transmission.max_transmit_wait(),
        transmission,
        max_message_size: 1280,
        max_body_size: 4096,
        // TinyCoAP sent every payload of the sweep as one fragmented datagram.
        single_message_payload: Some(super::expected::SINGLE_MESSAGE_BODY),
        ..covey_sim::paper_config()
    }
}

/// The 802.15.4 configuration of the hop: the standard's MAC defaults, a MAC queue of
/// `params.queue` frames.
pub fn medium_config(params: &Params, seed: u64) -> Ieee802154Config {
    let link = LinkFormat::default();
    Ieee802154Config {
        seed,
        mac: link.mac,
        phy: link.phy,
        headers: link.headers,
        queue_capacity_frames: params.queue,
        ..Ieee802154Config::default()
    }
}

/// The hop with `model`'s errors at `snr_db`, seeded from `run_seed`.
pub fn build_link(
    model: ErrorModel,
    snr_db: f64,
    params: &Params,
    run_seed: u64,
) -> UdpDiscard<Ieee802154Medium> {
    let seed = derive_seed(run_seed, Stream::Link(0));
    let mut medium = Ieee802154Medium::new(medium_config(params, seed), Topology::full_mesh(2));
    if let Some(rule) = model.frame_errors(snr_db) {
        medium.add_frame_error_model(Box::new(RayleighFadingLoss::new(rule)));
    }
    let discard = match model {
        ErrorModel::Paper => PaperFadingModel::at_snr_db(snr_db),
        ErrorModel::Independent | ErrorModel::Rayleigh => None,
    };
    UdpDiscard::new(
        medium,
        LinkFormat::default(),
        discard,
        stream_rng(run_seed, Stream::Link(1)),
    )
}

/// Runs `point` and returns its measurements.
pub fn run_point(point: &RunPoint, params: &Params) -> RunResult {
    let link = build_link(point.model, point.snr_db, params, point.run_seed);
    let mut sim: Simulator<_, GoodputNode> = Simulator::new(link, point.run_seed);
    let config = endpoint_config(params);
    sim.add_node(
        config.clone(),
        GoodputNode::Server(PayloadServer::new(point.payload)),
    )
    .unwrap_or_else(|e| panic!("fading_goodput: {e}"));
    sim.add_node(
        config,
        GoodputNode::Client(TransferClient::new(node_addr(SERVER), params.transactions)),
    )
    .unwrap_or_else(|e| panic!("fading_goodput: {e}"));
    let finished = sim.run_until(Instant::ZERO + params.time_limit());
    let (succeeded, failed, bytes, elapsed_s) = match sim.nodes().get(CLIENT).map(|n| n.app()) {
        Some(GoodputNode::Client(c)) => (c.succeeded, c.failed, c.bytes, c.elapsed_s()),
        _ => (0, 0, 0, None),
    };
    let elapsed_s = elapsed_s.unwrap_or_else(|| sim.now().as_nanos() as f64 / 1e9);
    let client = sim.node_stats(CLIENT).unwrap_or_default();
    let server = sim.node_stats(SERVER).unwrap_or_default();
    let medium = sim.medium().inner();
    let mac_retries = (0..2)
        .filter_map(|n| medium.node_stats(n))
        .map(|s| s.retries)
        .sum();
    let fragments = sim.medium().most_fragments_sent();
    RunResult {
        point: *point,
        finished,
        fragments,
        succeeded,
        failed,
        bytes,
        elapsed_s,
        goodput: if elapsed_s > 0.0 {
            bytes as f64 / elapsed_s
        } else {
            0.0
        },
        coap_retransmissions: client.retransmissions.iter().sum(),
        coap_datagrams: client.transmissions + server.transmissions,
        frames_on_air: medium.stats().frames_on_wire,
        mac_retries,
        channel_losses: medium.stats().losses_of(LossCause::Channel),
        udp_discards: sim.medium().discarded(),
    }
}
