//! Behaviour of the whole medium: saturation throughput against the closed form, ACKs and
//! retries, hidden terminals, queue overflow, fragmentation and multi-hop delivery.

use covey_proto::{Duration, Instant};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::{Delivery, Destination, LossCause, Medium, NodeId, Packet};
use super::{
    FrameErrorModel, FrameKind, FrameOnLink, HeaderModel, Ieee802154Config, Ieee802154Medium,
    PhyTiming, Topology,
};

/// Runs the medium until it has nothing left to do, collecting deliveries.
fn run(medium: &mut Ieee802154Medium) -> Vec<Delivery> {
    let mut delivered = Vec::new();
    while let Some(at) = medium.poll_timeout() {
        medium.handle_timeout(at);
        while let Some(d) = medium.poll_delivery() {
            delivered.push(d);
        }
    }
    delivered
}

fn packet(id: u64, from: NodeId, to: Destination, payload_bytes: usize) -> Packet {
    Packet {
        id,
        from,
        to,
        payload_bytes,
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Corrupts the next `remaining` frames of `kind`.
struct CorruptNext {
    kind: FrameKind,
    remaining: usize,
}

impl FrameErrorModel for CorruptNext {
    fn corrupts(&mut self, frame: &FrameOnLink, _rng: &mut Xoshiro256PlusPlus) -> bool {
        if frame.kind == self.kind && self.remaining > 0 {
            self.remaining -= 1;
            return true;
        }
        false
    }
}

/// Payload throughput of one always-backlogged sender over an idle, error-free channel, in
/// kbit/s, measured between the first and the last delivery of `frames` frames.
fn saturation_kbit_per_s(payload: usize, ack: bool, frames: u64) -> f64 {
    saturation_with_phy(PhyTiming::default(), payload, ack, frames)
}

fn saturation_with_phy(phy: PhyTiming, payload: usize, ack: bool, frames: u64) -> f64 {
    let mut config = Ieee802154Config {
        seed: 42 + payload as u64,
        phy,
        headers: HeaderModel::mac_only(),
        queue_capacity_frames: usize::try_from(frames).unwrap_or(usize::MAX),
        ..Ieee802154Config::default()
    };
    config.mac.ack_unicast = ack;
    let mut medium = Ieee802154Medium::new(config, Topology::full_mesh(2));
    for id in 0..frames {
        medium.send(Instant::ZERO, packet(id, 0, Destination::Node(1), payload));
    }
    let delivered = run(&mut medium);
    assert_eq!(delivered.len() as u64, frames);
    let (Some(first), Some(last)) = (delivered.first(), delivered.last()) else {
        return 0.0;
    };
    let span_us = micros(last.at - first.at);
    let bits = (frames - 1) as f64 * 8.0 * payload as f64;
    bits / span_us * 1000.0
}

/// The spec's "standard timeline" columns (L_MAC = 11), kbit/s: (payload, no ACK, ACK).
const STANDARD_TIMELINE: [(usize, f64, f64); 7] = [
    (10, 27.17, 22.94),
    (20, 49.02, 42.02),
    (30, 66.96, 58.14),
    (50, 94.70, 83.89),
    (80, 123.46, 111.73),
    (100, 137.36, 125.63),
    (116, 146.46, 134.88),
];

#[test]
fn saturation_throughput_matches_the_standard_timeline_closed_form() {
    for (payload, no_ack, with_ack) in STANDARD_TIMELINE {
        for (ack, expected) in [(false, no_ack), (true, with_ack)] {
            let measured = saturation_kbit_per_s(payload, ack, 20_000);
            let error = (measured - expected).abs() / expected;
            eprintln!("payload {payload:>3} ack {ack:>5}: {measured:8.3} kbit/s, closed form {expected:8.2}, {:+.3} %", (measured - expected) / expected * 100.0);
            assert!(
                error < 0.01,
                "payload {payload} ack {ack}: {measured:.2} kbit/s vs {expected:.2} ({:.2} %)",
                error * 100.0
            );
        }
    }
}

#[test]
fn dropping_cca_and_turnaround_gives_the_papers_convention() {
    // The spec's "paper's convention, no ACK" column: Latré et al. leave out the CCA and the
    // RX-to-TX turnaround before each data frame.
    let papers_convention = [
        (10, 30.49),
        (20, 54.35),
        (30, 73.53),
        (50, 102.46),
        (80, 131.58),
        (100, 145.35),
        (116, 154.26),
    ];
    let phy = PhyTiming {
        cca_us: 0,
        turnaround_us: 0,
        ..PhyTiming::default()
    };
    for (payload, expected) in papers_convention {
        let measured = saturation_with_phy(phy, payload, false, 10_000);
        let error = (measured - expected).abs() / expected;
        assert!(
            error < 0.01,
            "payload {payload}: {measured:.2} vs {expected}"
        );
    }
}

#[test]
fn closed_form_of_the_spec_follows_from_the_phy_timing() {
    // The reference numbers are the spec's; check they are the closed form of our timing, so
    // the saturation test compares like with like.
    let phy = PhyTiming::default();
    let l_mac = HeaderModel::mac_only().mac_overhead();
    for (payload, no_ack, with_ack) in STANDARD_TIMELINE {
        let mean_backoff = 3.5 * phy.backoff_unit_us as f64;
        let base = mean_backoff
            + micros(phy.cca())
            + micros(phy.turnaround())
            + micros(phy.frame_duration(l_mac + payload))
            + micros(phy.ifs(l_mac + payload));
        let ack = micros(phy.turnaround()) + micros(phy.ack_duration());
        let rate = |t: f64| 8.0 * payload as f64 / t * 1000.0;
        assert!((rate(base) - no_ack).abs() < 0.01, "{payload}");
        assert!((rate(base + ack) - with_ack).abs() < 0.01, "{payload}");
    }
}

#[test]
fn frame_spacing_stays_within_the_backoff_window() {
    // One backlogged sender without ACKs: consecutive deliveries are one attempt apart, and
    // an attempt is CCA, turnaround, frame and IFS plus 0 to 7 backoff periods (BE = 3).
    let mut config = Ieee802154Config {
        headers: HeaderModel::mac_only(),
        queue_capacity_frames: 2000,
        ..Ieee802154Config::default()
    };
    config.mac.ack_unicast = false;
    let phy = config.phy;
    let mut medium = Ieee802154Medium::new(config, Topology::full_mesh(2));
    for id in 0..2000 {
        medium.send(Instant::ZERO, packet(id, 0, Destination::Node(1), 40));
    }
    let delivered = run(&mut medium);
    let fixed = phy.cca() + phy.turnaround() + phy.frame_duration(51) + phy.ifs(51);
    let mut seen = [false; 8];
    for pair in delivered.windows(2) {
        let gap = pair[1].at - pair[0].at;
        let extra = gap.checked_sub(fixed).map(|d| d.as_micros() as u64);
        let periods = extra.map(|us| (us / phy.backoff_unit_us, us % phy.backoff_unit_us));
        match periods {
            Some((p, 0)) if p < 8 => seen[p as usize] = true,
            other => panic!("gap {gap:?} is no whole number of backoff periods below 8: {other:?}"),
        }
    }
    // And every value in the window occurs.
    assert_eq!(seen, [true; 8]);
}

#[test]
fn unreachable_receiver_costs_one_transmission_and_three_retries() {
    let topology = Topology::from_links(2, &[]).expect("a valid topology");
    let mut medium = Ieee802154Medium::new(Ieee802154Config::default(), topology);
    medium.send(Instant::ZERO, packet(1, 0, Destination::Node(1), 20));
    assert!(run(&mut medium).is_empty());
    let stats = medium.node_stats(0).copied().unwrap_or_default();
    assert_eq!(stats.frames_sent, 4);
    assert_eq!(stats.retries, 3);
    assert_eq!(stats.retries_exhausted, 1);
    assert_eq!(medium.stats().losses_of(LossCause::RetriesExhausted), 1);
}

#[test]
fn corrupted_frames_are_retried_and_lost_to_the_channel_after_four_attempts() {
    let mut medium = Ieee802154Medium::new(Ieee802154Config::default(), Topology::full_mesh(2));
    medium.add_frame_error_model(Box::new(CorruptNext {
        kind: FrameKind::Data,
        remaining: 4,
    }));
    medium.send(Instant::ZERO, packet(1, 0, Destination::Node(1), 20));
    medium.send(Instant::ZERO, packet(2, 0, Destination::Node(1), 20));
    let delivered = run(&mut medium);
    // The first packet used up all four attempts; the second got through at once.
    assert_eq!(delivered.iter().map(|d| d.id).collect::<Vec<_>>(), vec![2]);
    assert_eq!(medium.stats().losses_of(LossCause::Channel), 1);
    let sender = medium.node_stats(0).copied().unwrap_or_default();
    assert_eq!(sender.frames_sent, 5);
    assert_eq!(sender.retries, 3);
    let receiver = medium.node_stats(1).copied().unwrap_or_default();
    assert_eq!(receiver.rx_channel_errors, 4);
    assert_eq!(receiver.acks_sent, 1);
}

#[test]
fn lost_ack_brings_a_retransmission_delivered_once() {
    let mut medium = Ieee802154Medium::new(Ieee802154Config::default(), Topology::full_mesh(2));
    medium.add_frame_error_model(Box::new(CorruptNext {
        kind: FrameKind::Ack,
        remaining: 1,
    }));
    medium.send(Instant::ZERO, packet(7, 0, Destination::Node(1), 30));
    let delivered = run(&mut medium);
    assert_eq!(delivered.len(), 1);
    let sender = medium.node_stats(0).copied().unwrap_or_default();
    let receiver = medium.node_stats(1).copied().unwrap_or_default();
    assert_eq!(sender.frames_sent, 2);
    assert_eq!(receiver.acks_sent, 2);
    assert_eq!(receiver.duplicates, 1);
}

/// Fraction of rounds in which two senders, each sending one frame to node 1 at the same
/// instant, collided at node 1.
fn collision_share(topology: Topology, rounds: u64) -> f64 {
    let mut config = Ieee802154Config {
        seed: 9,
        ..Ieee802154Config::default()
    };
    config.mac.ack_unicast = false;
    let mut medium = Ieee802154Medium::new(config, topology);
    for round in 0..rounds {
        // Rounds 100 ms apart: the channel is idle again by then.
        let at = Instant::from_millis(100 * round);
        medium.handle_timeout(at);
        medium.send(at, packet(2 * round, 0, Destination::Node(1), 50));
        medium.send(at, packet(2 * round + 1, 2, Destination::Node(1), 50));
        while let Some(next) = medium.poll_timeout() {
            if next >= Instant::from_millis(100 * (round + 1)) {
                break;
            }
            medium.handle_timeout(next);
        }
    }
    let collided = medium.stats().losses_of(LossCause::Collision);
    // One collision loses both frames.
    collided as f64 / 2.0 / rounds as f64
}

#[test]
fn hidden_senders_collide_and_senders_that_hear_each_other_mostly_do_not() {
    let hidden = Topology::from_links(3, &[(0, 1), (1, 2)]).expect("a valid topology");
    let hidden_share = collision_share(hidden, 400);
    let mesh_share = collision_share(Topology::full_mesh(3), 400);
    // Hidden: a 2.4 ms frame outlasts the 2.24 ms spread of first backoffs, so the frames
    // nearly always overlap. In range: only equal backoff slots (1 in 8) defeat the CCA.
    assert!(hidden_share > 0.9, "hidden {hidden_share}");
    assert!(mesh_share < 0.2, "mesh {mesh_share}");
    assert!(mesh_share > 0.05, "mesh {mesh_share}");
}

#[test]
fn full_queue_drops_whole_datagrams() {
    let config = Ieee802154Config {
        queue_capacity_frames: 8,
        ..Ieee802154Config::default()
    };
    let mut medium = Ieee802154Medium::new(config, Topology::full_mesh(2));
    // 3 fragments each: two datagrams fit in 8 frames, the other three are dropped.
    for id in 0..5 {
        medium.send(Instant::ZERO, packet(id, 0, Destination::Node(1), 250));
    }
    assert_eq!(medium.queue_len(0), 6);
    let delivered = run(&mut medium);
    assert_eq!(delivered.len(), 2);
    assert_eq!(medium.stats().losses_of(LossCause::QueueFull), 3);
    assert_eq!(medium.node_stats(0).map(|s| s.queue_drops), Some(3));
}

#[test]
fn fragmented_datagram_arrives_once_after_its_last_fragment() {
    let mut medium = Ieee802154Medium::new(Ieee802154Config::default(), Topology::full_mesh(2));
    medium.send(Instant::ZERO, packet(3, 0, Destination::Node(1), 500));
    let delivered = run(&mut medium);
    assert_eq!(delivered.len(), 1);
    let fragments = HeaderModel::default()
        .frames(500, Default::default(), 127)
        .map_or(0, |f| f.len() as u64);
    assert_eq!(fragments, 5);
    // Every fragment and its ACK went on the air.
    assert_eq!(medium.stats().frames_on_wire, 2 * fragments);
}

/// A chain 0 - 1 - 2 - 3 rooted at 0 where only neighbours hear each other.
fn chain() -> Topology {
    Topology::from_links(4, &[(0, 1), (1, 2), (2, 3)])
        .and_then(|t| t.with_tree(vec![None, Some(0), Some(1), Some(2)]))
        .expect("a valid topology")
}

#[test]
fn multi_hop_delivery_takes_at_least_a_full_attempt_per_hop() {
    let mut medium = Ieee802154Medium::new(Ieee802154Config::default(), chain());
    let payload = 40;
    medium.send(Instant::ZERO, packet(5, 0, Destination::Node(3), payload));
    let delivered = run(&mut medium);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].to, 3);
    let phy = PhyTiming::default();
    let headers = HeaderModel::default();
    let hops = medium.topology().hops(0, 3);
    assert_eq!(hops, 3);
    // Each hop: CCA, turnaround and the frame at least; inner hops carry more address bytes.
    let mut bound = Duration::ZERO;
    let mut at = 0;
    for _ in 0..hops {
        let next = medium.topology().next_hop(at, 3);
        let addressing = super::frame_format::HopAddressing {
            source_inline: at != 0,
            destination_inline: next != 3,
            multicast: false,
        };
        let mpdu = headers.frames(payload, addressing, 127).unwrap_or_default();
        bound += phy.cca() + phy.turnaround() + phy.frame_duration(mpdu.iter().sum());
        at = next;
    }
    assert!(delivered[0].at >= Instant::ZERO + bound);
    assert_eq!(medium.node_stats(1).map(|s| s.forwarded), Some(1));
    assert_eq!(medium.node_stats(2).map(|s| s.forwarded), Some(1));
    // And back up the tree.
    medium.send(delivered[0].at, packet(6, 3, Destination::Node(0), payload));
    let back = run(&mut medium);
    assert_eq!(
        back.iter().map(|d| (d.id, d.to)).collect::<Vec<_>>(),
        vec![(6, 0)]
    );
}

#[test]
fn multicast_floods_down_the_tree_once_per_node() {
    // 0 is the root; 1 and 2 its children; 3 below 1, 4 below 2. 1 and 2 hear each other.
    let topology = Topology::from_links(5, &[(0, 1), (0, 2), (1, 2), (1, 3), (2, 4)])
        .and_then(|t| t.with_tree(vec![None, Some(0), Some(0), Some(1), Some(2)]))
        .expect("a valid topology");
    let mut medium = Ieee802154Medium::new(Ieee802154Config::default(), topology);
    medium.send(Instant::ZERO, packet(9, 0, Destination::Broadcast, 30));
    let mut reached: Vec<NodeId> = run(&mut medium).iter().map(|d| d.to).collect();
    reached.sort_unstable();
    // 3 hears only 1 and 4 only 2, so even forwarders that pick the same slot reach them.
    assert_eq!(reached, vec![1, 2, 3, 4]);
    // Released once, after the last forwarder is done.
    assert_eq!(medium.poll_released(), Some(9));
    assert_eq!(medium.poll_released(), None);
    // Broadcasts are never acknowledged.
    assert_eq!(
        (0..5)
            .map(|n| medium.node_stats(n).map_or(0, |s| s.acks_sent))
            .sum::<u64>(),
        0
    );
    // The root and the two forwarders each sent one frame.
    let sent: Vec<u64> = (0..5)
        .map(|n| medium.node_stats(n).map_or(0, |s| s.frames_sent))
        .collect();
    assert_eq!(sent, vec![1, 1, 1, 0, 0]);
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let times = |seed| {
        let config = Ieee802154Config {
            seed,
            ..Ieee802154Config::default()
        };
        let mut medium = Ieee802154Medium::new(config, Topology::full_mesh(3));
        for id in 0..4 {
            medium.send(
                Instant::ZERO,
                packet(id, (id % 2) as usize * 2, Destination::Node(1), 60),
            );
        }
        run(&mut medium).iter().map(|d| d.at).collect::<Vec<_>>()
    };
    assert_eq!(times(1), times(1));
    assert_ne!(times(1), times(2));
}

#[test]
fn every_unicast_datagram_is_delivered_or_lost_once_under_contention() {
    // Twelve nodes flood the gateway (node 0): queues overflow, CCAs fail, frames collide.
    let config = Ieee802154Config {
        seed: 5,
        ..Ieee802154Config::default()
    };
    let mut medium = Ieee802154Medium::new(config, Topology::full_mesh(13));
    let mut sent = 0;
    for round in 0..15u64 {
        for node in 1..13usize {
            let id = round * 100 + node as u64;
            medium.send(Instant::ZERO, packet(id, node, Destination::Node(0), 80));
            sent += 1;
        }
    }
    let delivered = run(&mut medium);
    let mut ids: Vec<u64> = delivered.iter().map(|d| d.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), delivered.len(), "a datagram was delivered twice");
    let lost: u64 = medium.stats().losses.iter().map(|(_, n)| n).sum();
    assert_eq!(delivered.len() as u64 + lost, sent);
    // And the simulator may free every packet's bytes, each once.
    let mut released = Vec::new();
    while let Some(id) = medium.poll_released() {
        released.push(id);
    }
    released.sort_unstable();
    released.dedup();
    assert_eq!(released.len() as u64, sent);
    let failures: u64 = (1..13)
        .map(|n| {
            medium
                .node_stats(n)
                .map_or(0, |s| s.channel_access_failures)
        })
        .sum();
    assert!(failures > 0, "twelve saturated senders must fail some CCAs");
    // A retry that fails its CCAs after the first copy arrived (its ACK was lost) loses
    // nothing.
    let caf_losses = medium.stats().losses_of(LossCause::ChannelAccessFailure);
    assert!(
        caf_losses > 0 && caf_losses <= failures,
        "{caf_losses} of {failures}"
    );
    assert!(medium.stats().losses_of(LossCause::QueueFull) > 0);
}
