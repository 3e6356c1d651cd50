//! The medium driven standalone by traffic sources: confirms against the PHY timing; confirms,
//! drop traces and counters telling one story under contention; lost ACKs; seeded repeatability.

use std::collections::HashMap;
use std::sync::mpsc;

use covey_proto::{Duration, Instant};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::{LossCause, Medium};
use super::frame_format::HopAddressing;
use super::{
    ConfirmStatus, DropCounts, DropTrace, Flow, FrameErrorModel, FrameKind, FrameOnLink,
    Ieee802154Config, Ieee802154Medium, MacExperiment, MacParams, PeriodicSource, PoissonSource,
    Topology,
};

const SINK: usize = 0;
const PAYLOAD_BYTES: usize = 50;

#[test]
fn a_lone_sender_gets_each_datagram_acked_one_exchange_after_its_backoff() {
    let config = Ieee802154Config {
        seed: 11,
        ..Ieee802154Config::default()
    };
    let (phy, mac, headers) = (config.phy, config.mac, config.headers);
    let medium = Ieee802154Medium::new(config, Topology::full_mesh(2));
    let mut experiment = MacExperiment::new(medium);
    // 10 datagrams a second: each exchange is over long before the next offer.
    let flow = Flow::unicast(1, SINK, PAYLOAD_BYTES);
    let period = Duration::from_millis(100);
    experiment.add_source(PeriodicSource::new(flow, period, Instant::ZERO));
    experiment.run_until(Instant::from_secs(20));
    experiment.finish();

    // Offers at 0, 0.1 s, ..., 20 s inclusive.
    assert_eq!(experiment.offered(), 201);
    assert_eq!(experiment.outcomes().len(), 201);
    assert_eq!(experiment.delivery_ratio(), 1.0);

    // CCA, turnaround, the frame, turnaround, the ACK; before them 0 to 2^macMinBE − 1
    // backoff periods.
    let mpdu: usize = headers
        .frames(PAYLOAD_BYTES, HopAddressing::default(), phy.max_psdu_bytes)
        .map_or(0, |f| f.iter().sum());
    let exchange = phy.cca()
        + phy.turnaround()
        + phy.frame_duration(mpdu)
        + phy.turnaround()
        + phy.ack_duration();
    let max_periods = (1u64 << mac.min_be) - 1;
    let mut seen = vec![false; (max_periods + 1) as usize];
    let mut total = Duration::ZERO;
    for outcome in experiment.outcomes() {
        let confirm = outcome.confirm;
        assert_eq!(confirm.status, ConfirmStatus::Delivered, "{outcome:?}");
        assert!(confirm.acked && confirm.transmissions == 1, "{outcome:?}");
        let backoff = outcome
            .delay()
            .checked_sub(exchange)
            .map(|d| d.as_micros() as u64);
        match backoff.map(|us| (us / phy.backoff_unit_us, us % phy.backoff_unit_us)) {
            Some((periods, 0)) if periods <= max_periods => seen[periods as usize] = true,
            other => panic!(
                "delay {:?} is no exchange after a backoff: {other:?}",
                outcome.delay()
            ),
        }
        total += outcome.delay();
    }
    assert!(
        seen.iter().all(|&s| s),
        "every backoff draw occurs: {seen:?}"
    );
    // The mean backoff is half the window.
    let mean_us = total.as_secs_f64() * 1e6 / 201.0;
    let expected_us = exchange.as_secs_f64() * 1e6 + 3.5 * phy.backoff_unit_us as f64;
    assert!(
        (mean_us - expected_us).abs() < 0.6 * phy.backoff_unit_us as f64,
        "mean {mean_us:.0} µs, expected {expected_us:.0} µs"
    );
}

/// `senders` Poisson sources of `rate_per_s` to the sink for `secs` seconds on a full mesh,
/// played out to the end, with every drop the trace hook saw.
fn contention(
    seed: u64,
    senders: usize,
    rate_per_s: f64,
    secs: u64,
) -> (MacExperiment, Vec<DropTrace>) {
    let config = Ieee802154Config {
        seed,
        ..Ieee802154Config::default()
    };
    let medium = Ieee802154Medium::new(config, Topology::full_mesh(senders + 1));
    let mut experiment = MacExperiment::new(medium);
    let (traced, traces) = mpsc::channel();
    experiment.medium_mut().set_drop_trace(move |drop| {
        // The receiver lives until the end of this function.
        let _ = traced.send(*drop);
    });
    for node in 1..=senders {
        let flow = Flow::unicast(node, SINK, PAYLOAD_BYTES);
        let source_seed = seed * 1000 + node as u64;
        experiment.add_source(PoissonSource::new(flow, rate_per_s, source_seed));
    }
    experiment.run_until(Instant::from_secs(secs));
    experiment.finish();
    let traces = traces.try_iter().collect();
    (experiment, traces)
}

#[test]
fn under_contention_confirms_traces_and_counters_account_for_every_datagram_once() {
    // 30 senders at 40 datagrams a second: about five times what the channel carries.
    let (experiment, traces) = contention(5, 30, 40.0, 5);
    let offered = experiment.offered();
    let outcomes = experiment.outcomes();
    assert!(offered > 5000, "{offered}");

    let mut packets: Vec<u64> = outcomes.iter().map(|o| o.confirm.packet).collect();
    packets.sort_unstable();
    assert_eq!(
        packets,
        (0..offered).collect::<Vec<_>>(),
        "one confirm per offer"
    );
    let ratio = experiment.delivery_ratio();
    assert!(ratio > 0.05 && ratio < 1.0, "{ratio}");

    // Delivered plus every failure cause is what was offered.
    let delivered = outcomes.iter().filter(|o| o.delivered()).count() as u64;
    let mut failed = DropCounts::default();
    let mut failed_at_node: HashMap<usize, DropCounts> = HashMap::new();
    for outcome in outcomes {
        if let ConfirmStatus::Lost(cause) = outcome.confirm.status {
            failed.add(cause);
            failed_at_node
                .entry(outcome.confirm.node)
                .or_default()
                .add(cause);
        }
    }
    assert_eq!(delivered + failed.total(), offered);
    assert!(failed.of(LossCause::QueueFull) > 0, "{failed:?}");
    assert!(failed.of(LossCause::ChannelAccessFailure) > 0, "{failed:?}");

    // The trace hook saw exactly the failed datagrams, with the same node, time and cause.
    let mut lost: Vec<DropTrace> = outcomes
        .iter()
        .filter_map(|o| match o.confirm.status {
            ConfirmStatus::Lost(cause) => Some(DropTrace {
                at: o.confirm.at,
                node: o.confirm.node,
                packet: o.confirm.packet,
                cause,
            }),
            ConfirmStatus::Delivered => None,
        })
        .collect();
    let mut traced = traces;
    // One hop: each datagram is dropped at most once, so its packet orders both lists.
    traced.sort_by_key(|d| d.packet);
    lost.sort_by_key(|d| d.packet);
    assert_eq!(traced, lost);

    // The counters tell the same story, per node and in total.
    let medium = experiment.medium();
    let total = medium.total_counters();
    assert_eq!(total.drops, failed);
    for (cause, n) in failed.iter() {
        assert_eq!(medium.stats().losses_of(cause), n, "{cause:?}");
    }
    for node in 0..=30 {
        let counted = medium.counters(node).map(|c| c.drops);
        let confirmed = failed_at_node.get(&node).copied().unwrap_or_default();
        assert_eq!(counted, Some(confirmed), "node {node}");
    }
    assert_eq!(total.stats.queue_drops, failed.of(LossCause::QueueFull));
    let transmissions: u64 = outcomes
        .iter()
        .map(|o| u64::from(o.confirm.transmissions))
        .sum();
    assert_eq!(total.stats.frames_sent, transmissions);
    assert_eq!(experiment.deliveries().len() as u64, delivered);
    assert_eq!(medium.stats().packets_delivered, delivered);
    // The sink acknowledges every intact frame it receives, duplicates included.
    let sink = medium.counters(SINK).unwrap_or_default();
    assert_eq!(sink.frames_received, sink.stats.acks_sent);
    assert_eq!(total.stats.acks_sent, sink.stats.acks_sent);
    assert!(
        sink.stats.rx_collisions > 0 && total.cca_busy > 0,
        "{total:?}"
    );
    assert!(total.stats.channel_access_failures >= failed.of(LossCause::ChannelAccessFailure));
}

#[test]
fn same_seed_same_experiment_other_seed_other_experiment() {
    let run = |seed| {
        let (experiment, traces) = contention(seed, 12, 15.0, 3);
        (
            experiment.outcomes().to_vec(),
            experiment.deliveries().to_vec(),
            experiment.medium().total_counters(),
            traces,
        )
    };
    let first = run(3);
    assert!(!first.3.is_empty(), "the load drops some datagrams");
    assert_eq!(first, run(3));
    assert_ne!(first.0, run(4).0);
}

/// Corrupts every ACK.
struct NoAcks;

impl FrameErrorModel for NoAcks {
    fn corrupts(&mut self, frame: &FrameOnLink, _rng: &mut Xoshiro256PlusPlus) -> bool {
        frame.kind == FrameKind::Ack
    }
}

#[test]
fn a_datagram_whose_acks_are_all_lost_is_confirmed_delivered_unacknowledged() {
    let mut medium = Ieee802154Medium::new(Ieee802154Config::default(), Topology::full_mesh(2));
    medium.add_frame_error_model(Box::new(NoAcks));
    medium.set_drop_trace(|drop| panic!("nothing is lost: {drop:?}"));
    let mut experiment = MacExperiment::new(medium);
    let flow = Flow::unicast(1, SINK, PAYLOAD_BYTES);
    let period = Duration::from_millis(100);
    experiment.add_source(PeriodicSource::new(flow, period, Instant::ZERO).take(3));
    experiment.run_until(Instant::from_secs(1));
    experiment.finish();
    let retries = u32::from(MacParams::default().max_frame_retries);
    assert_eq!(experiment.outcomes().len(), 3);
    for outcome in experiment.outcomes() {
        let confirm = outcome.confirm;
        assert_eq!(confirm.status, ConfirmStatus::Delivered, "{outcome:?}");
        assert!(!confirm.acked, "{outcome:?}");
        assert_eq!(confirm.transmissions, 1 + retries, "{outcome:?}");
    }
    assert_eq!(experiment.deliveries().len(), 3);
    let total = experiment.medium().total_counters();
    assert_eq!(total.drops.total(), 0);
    assert_eq!(total.stats.duplicates, 3 * u64::from(retries));
}
