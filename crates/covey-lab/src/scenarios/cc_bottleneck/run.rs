//! One run of the experiment: build the dumbbell, start the server and the clients, run
//! until every client has ended its 50 exchanges, read the engines' counters.

use covey_proto::cc::Algorithm;
use covey_proto::{Config, Instant, TransmissionParameters};
use covey_sim::media::{
    Framing, LinkConfig, LossCause, LossSpec, Medium, PointToPoint, PropagationDelay, RateLimit,
};
use covey_sim::sim::{node_addr, Simulator};

use super::client::{ClientKind, WorkloadClient};
use super::node::CcNode;
use super::results::{ClientResult, RunResult};
use super::server::ResourceServer;
use super::{Params, RunPoint, Workload};

/// The server is node 0; clients are nodes 1..=N.
const SERVER: usize = 0;

/// The engine configuration of a client: RFC 7252 defaults except the retry limit, with
/// tables sized for one outstanding exchange (NSTART 1) so a thousand nodes stay small.
pub fn client_config(algorithm: Algorithm, max_retransmit: u8) -> Config {
    let transmission = TransmissionParameters {
        max_retransmit,
        ..TransmissionParameters::default()
    };
    fit_blocks(Config {
        response_timeout: transmission.max_transmit_wait(),
        transmission,
        congestion_control: algorithm,
        max_message_size: 256,
        max_peers: 2,
        max_exchanges: 2,
        max_incoming: 2,
        max_dedup_entries: 8,
        max_buffers: 4,
        max_queued_per_peer: 2,
        max_events: 8,
        max_app_timers: 2,
        max_body_size: 256,
        max_uploads: 1,
        max_reassembly_bytes: 256,
        max_observers: 1,
        ..covey_sim::paper_config()
    })
}

/// The server's configuration: room for every client of the largest run at once, and a
/// deduplication memory larger than the exchanges the bottleneck carries in a retry span.
pub fn server_config(clients: usize, max_retransmit: u8) -> Config {
    let transmission = TransmissionParameters {
        max_retransmit,
        ..TransmissionParameters::default()
    };
    let room = (2 * clients).max(16);
    fit_blocks(Config {
        response_timeout: transmission.max_transmit_wait(),
        transmission,
        max_message_size: 256,
        max_peers: room,
        max_exchanges: 2,
        max_incoming: room,
        max_dedup_entries: 4096,
        max_buffers: 2 * room,
        max_queued_per_peer: 2,
        max_events: room,
        max_app_timers: 2,
        max_body_size: 256,
        max_uploads: 1,
        max_reassembly_bytes: 256,
        max_observers: 1,
        ..covey_sim::paper_config()
    })
}

/// `config` with room for a response of `payload` bytes in one message (the tables above
/// hold the default 6-byte one in 256-byte datagrams; they grow only for larger payloads).
pub fn sized_for(config: Config, payload: usize) -> Config {
    let room = payload + 64;
    fit_blocks(Config {
        max_message_size: config.max_message_size.max(room),
        max_body_size: config.max_body_size.max(room),
        max_reassembly_bytes: config.max_reassembly_bytes.max(room),
        ..config
    })
}

/// `config` with the largest block its datagrams hold, and a response payload of up to
/// 1024 bytes (the default's one block) sent whole when the datagram holds it, as with the
/// default 1024-byte blocks: small datagrams change no response into a block-wise one.
fn fit_blocks(config: Config) -> Config {
    let block_szx = (0..=6u8)
        .rev()
        .find(|&szx| {
            let c = Config {
                block_szx: szx,
                ..config.clone()
            };
            c.min_message_size() <= c.max_message_size
        })
        .unwrap_or(0);
    let fitted = Config {
        block_szx,
        ..config
    };
    Config {
        single_message_payload: Some(1024.clamp(fitted.block_size(), fitted.max_message_size)),
        ..fitted
    }
}

/// The bottleneck of `params`, without its random loss (see [`directions`]).
pub fn bottleneck(params: &Params) -> LinkConfig {
    LinkConfig {
        rate_bps: params.rate,
        delay: PropagationDelay::Fixed(params.one_way_delay()),
        framing: Framing {
            mtu: params.mtu,
            header: params.header_model(),
        },
        queue_packets: params.queue,
        loss: LossSpec::None,
        rate_limit: RateLimit::Serialiser,
    }
}

/// The client-to-server and server-to-client directions of the bottleneck: [`bottleneck`]
/// with netem's random loss where `loss_direction` puts it.
pub fn directions(params: &Params) -> (LinkConfig, LinkConfig) {
    let base = bottleneck(params);
    let with = |up: bool| LinkConfig {
        loss: params.loss_spec(up),
        ..base
    };
    (with(true), with(false))
}

/// What client `i` of `point` runs: its behaviour and its algorithm.
pub fn client_role(point: &RunPoint, i: usize) -> (ClientKind, Algorithm) {
    match point.workload {
        Workload::Continuous => (ClientKind::Continuous, point.algorithm),
        Workload::Random => (ClientKind::Random, point.algorithm),
        Workload::Mixed if i.is_multiple_of(2) => (ClientKind::Continuous, point.algorithm),
        Workload::Mixed => (ClientKind::Random, point.algorithm),
        Workload::Competing if i.is_multiple_of(2) => (ClientKind::Continuous, Algorithm::Default),
        Workload::Competing => (ClientKind::Continuous, point.algorithm),
    }
}

/// Runs `point` and returns its measurements.
pub fn run_point(point: &RunPoint, params: &Params) -> RunResult {
    let clients: Vec<usize> = (1..=point.clients).collect();
    // The dumbbell (`Dumbbell::build`) with a loss model per direction.
    let (up, down) = directions(params);
    let mut medium = PointToPoint::between(&clients, &[SERVER], up, down, point.run_seed, 0);
    medium.set_fragmentation(params.fragmentation.model());
    let mut sim: Simulator<_, CcNode> = Simulator::new(medium, point.run_seed);
    sim.add_node(
        sized_for(
            server_config(point.clients, params.max_retransmit),
            params.payload,
        ),
        CcNode::Server(ResourceServer::with_payload(params.payload)),
    )
    .unwrap_or_else(|e| panic!("cc_bottleneck: {e}"));
    let mut roles = Vec::with_capacity(point.clients);
    for i in 0..point.clients {
        let (kind, algorithm) = client_role(point, i);
        roles.push((kind, algorithm));
        let client = WorkloadClient::new(
            kind,
            node_addr(SERVER),
            params.exchanges,
            params.start_spread(),
        );
        sim.add_node(
            sized_for(
                client_config(algorithm, params.max_retransmit),
                params.payload,
            ),
            CcNode::Client(client),
        )
        .unwrap_or_else(|e| panic!("cc_bottleneck: {e}"));
    }
    let finished = sim.run_until(Instant::ZERO + params.time_limit());
    let mut results = Vec::with_capacity(point.clients);
    for (i, (kind, algorithm)) in roles.into_iter().enumerate() {
        let node = &sim.nodes()[i + 1];
        let CcNode::Client(c) = node.app() else {
            continue;
        };
        let stats = node.stats();
        results.push(ClientResult {
            client: i,
            algorithm,
            kind,
            completion_s: c.completion_time().map(|d| d.as_secs_f64()),
            rto_max_s: c.rto_max.as_secs_f64(),
            succeeded: c.succeeded,
            failed: c.failed,
            endpoints: c.endpoints,
            completed_after: stats.completed_after,
            retransmissions: stats.retransmissions,
            transmissions: stats.transmissions,
            rtt_samples: stats.rtt_samples,
            rtt_total_s: stats.rtt_total.as_secs_f64(),
        });
    }
    let m = sim.medium();
    RunResult {
        algorithm: point.algorithm,
        workload: point.workload,
        clients: point.clients,
        seed_index: point.seed_index,
        run_seed: point.run_seed,
        finished,
        virtual_s: sim.now().as_nanos() as f64 / 1e9,
        sim_steps: sim.stats().steps,
        link_events: m.events(),
        bytes_on_wire: m.stats().bytes_on_wire,
        frames_on_wire: m.stats().frames_on_wire,
        queue_drops: m.stats().losses_of(LossCause::QueueFull),
        max_queue_up: m.a_to_b().max_queue(),
        max_queue_down: m.b_to_a().max_queue(),
        results,
    }
}
