//! One row per trial: the metrics the paper reports (bytes on the wire, experienced latency,
//! experienced loss, control overhead per 100 bytes of data); and each point's trials
//! summed up as medians with their intervals.

use serde::{Deserialize, Serialize};

use super::condition::Condition;
use super::trial::TrialOutcome;
use crate::stats::{self, Estimate};

/// A trial's metrics, or why it could not run.
#[derive(Debug, Clone, Serialize)]
pub struct TrialRow {
    /// The network condition.
    pub condition: Condition,
    /// The protocol's label.
    pub protocol: String,
    /// Whether the protocol recovers lost packets.
    pub reliable: bool,
    /// The tbf's burst and latency the trial ran with, or none for the serialiser.
    pub tbf: Option<super::TbfSetting>,
    /// Which trial of the point, from 0 (the runner's seed index).
    pub repetition: usize,
    /// The trial's seed (its links' draws).
    pub seed: u64,
    /// The metrics, when the trial ran.
    pub metrics: Option<Metrics>,
    /// Each received message's latency, seconds, in sequence order.
    pub latencies_s: Vec<f64>,
    /// Why it did not run (a missing package, a stack that never became ready).
    pub error: Option<String>,
    /// Earlier attempts whose stacks did not become ready, and why; each was started again
    /// on fresh links.
    pub setup_failures: Vec<String>,
}

/// The metrics of one trial.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Metrics {
    /// Messages sent.
    pub sent: u64,
    /// Distinct messages received by the caregiver.
    pub received: u64,
    /// Share of messages never received, %.
    pub loss_pct: f64,
    /// Mean gateway-to-caregiver latency, seconds.
    pub latency_mean_s: f64,
    /// Median latency, seconds ([`stats::quantile`]: interpolated between the two middle
    /// values of an even count).
    pub latency_median_s: f64,
    /// 95th percentile latency, seconds ([`stats::quantile`], interpolated).
    pub latency_p95_s: f64,
    /// IP bytes on the links (both hops, every packet of the trial).
    pub wire_bytes: u64,
    /// IP packets on the links.
    pub wire_packets: u64,
    /// The application data on the links: the JSON of each message once for every link it
    /// entered (a message lost on the first hop never enters the second).
    pub data_bytes: u64,
    /// Copies of messages a link had already carried (retransmissions): part of the
    /// overhead, not of the data.
    pub repeated_messages: u64,
    /// Bytes beyond the data per 100 bytes of it: (wire bytes − data) / data × 100. Headers,
    /// acknowledgements, set-up, discovery, keep-alives and retransmitted copies all count.
    pub overhead_per_100: f64,
}

impl Metrics {
    /// The metrics of `outcome` for messages of `size` bytes.
    pub fn of(outcome: &TrialOutcome, size: usize) -> Metrics {
        let l = &outcome.latencies_s;
        let data_bytes = outcome.traffic.messages.first * size as u64;
        let (data, wire) = (data_bytes as f64, outcome.traffic.bytes as f64);
        Metrics {
            sent: outcome.sent,
            received: outcome.received,
            loss_pct: if outcome.sent == 0 {
                f64::NAN
            } else {
                100.0 * (1.0 - outcome.received as f64 / outcome.sent as f64)
            },
            latency_mean_s: stats::mean(l).unwrap_or(f64::NAN),
            latency_median_s: stats::median(l).unwrap_or(f64::NAN),
            latency_p95_s: stats::quantile(l, 0.95).unwrap_or(f64::NAN),
            wire_bytes: outcome.traffic.bytes,
            wire_packets: outcome.traffic.packets,
            data_bytes,
            repeated_messages: outcome.traffic.messages.repeats,
            overhead_per_100: if data > 0.0 {
                100.0 * (wire - data) / data
            } else {
                f64::NAN
            },
        }
    }
}

/// One protocol at one condition over its trials: each metric's median across the trials
/// that measured, with its distribution-free 95 % interval ([`stats::median_ci95`]; for up to
/// ten trials that is the trials' range, and for one trial the value itself).
#[derive(Debug, Clone, Serialize)]
pub struct PointSummary {
    /// The network condition.
    pub condition: Condition,
    /// The protocol's label.
    pub protocol: String,
    /// Trials run.
    pub trials: usize,
    /// Trials that measured (the others did not run: see their rows' errors).
    pub measured: usize,
    /// Whether every trial that measured delivered every message (and one did).
    pub lost_nothing: bool,
    /// Mean latency, seconds.
    pub latency_mean_s: Option<Estimate>,
    /// Median latency, seconds.
    pub latency_median_s: Option<Estimate>,
    /// 95th percentile latency, seconds.
    pub latency_p95_s: Option<Estimate>,
    /// Telemetry lost, %.
    pub loss_pct: Option<Estimate>,
    /// IP bytes on the links.
    pub wire_bytes: Option<Estimate>,
    /// The application data on the links.
    pub data_bytes: Option<Estimate>,
    /// Bytes beyond the data per 100 bytes of it.
    pub overhead_per_100: Option<Estimate>,
    /// IP bytes per message the caregiver received.
    pub bytes_per_delivered: Option<Estimate>,
}

/// Each protocol at each condition of `rows`, in the order they first appear.
pub fn summarise(rows: &[TrialRow]) -> Vec<PointSummary> {
    let mut keys: Vec<(Condition, &str)> = Vec::new();
    for r in rows {
        if !keys
            .iter()
            .any(|(c, p)| *c == r.condition && *p == r.protocol)
        {
            keys.push((r.condition, &r.protocol));
        }
    }
    keys.into_iter()
        .map(|(condition, protocol)| {
            let trials: Vec<&TrialRow> = rows
                .iter()
                .filter(|r| r.condition == condition && r.protocol == protocol)
                .collect();
            let measured: Vec<&Metrics> =
                trials.iter().filter_map(|r| r.metrics.as_ref()).collect();
            let across = |metric: fn(&Metrics) -> f64| {
                let values: Vec<f64> = measured
                    .iter()
                    .map(|m| metric(m))
                    .filter(|v| v.is_finite())
                    .collect();
                stats::median_ci95(&values)
            };
            PointSummary {
                condition,
                protocol: protocol.to_string(),
                trials: trials.len(),
                measured: measured.len(),
                lost_nothing: !measured.is_empty() && measured.iter().all(|m| m.loss_pct == 0.0),
                latency_mean_s: across(|m| m.latency_mean_s),
                latency_median_s: across(|m| m.latency_median_s),
                latency_p95_s: across(|m| m.latency_p95_s),
                loss_pct: across(|m| m.loss_pct),
                wire_bytes: across(|m| m.wire_bytes as f64),
                data_bytes: across(|m| m.data_bytes as f64),
                overhead_per_100: across(|m| m.overhead_per_100),
                bytes_per_delivered: across(|m| m.wire_bytes as f64 / m.received as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use covey_emu::message_marks::MessageTally;
    use covey_emu::stacks::network::Traffic;
    use covey_emu::stacks::telemetry::{message, MESSAGE_MARKER};
    use covey_emu::{MessageCounts, MessageMarker};

    /// IPv4 and UDP headers.
    const HEADERS: u64 = 28;

    fn outcome(sent: u64, received: u64, latencies_s: Vec<f64>, traffic: Traffic) -> TrialOutcome {
        TrialOutcome {
            sent,
            received,
            duplicates: 0,
            latencies_s,
            traffic,
        }
    }

    #[test]
    fn metrics_follow_their_definitions() {
        let traffic = Traffic {
            packets: 20,
            bytes: 1200,
            messages: MessageCounts {
                first: 8,
                repeats: 1,
                unlabelled: 0,
            },
        };
        let m = Metrics::of(&outcome(4, 3, vec![0.3, 0.1, 0.2], traffic), 100);
        assert_eq!(m.loss_pct, 25.0);
        assert!((m.latency_mean_s - 0.2).abs() < 1e-12);
        assert_eq!(m.latency_median_s, 0.2);
        // The lab's quantile interpolates: h = 2 × 0.95 = 1.9, so 0.2 + 0.9 × 0.1 (nearest
        // rank, as before the framework, gave 0.3).
        assert!((m.latency_p95_s - 0.29).abs() < 1e-12);
        let even = Metrics::of(&outcome(4, 4, vec![0.4, 0.1, 0.3, 0.2], traffic), 100);
        assert!((even.latency_median_s - 0.25).abs() < 1e-12);
        // 800 bytes of data (8 messages entered a link), 400 bytes more on the wire.
        assert_eq!((m.data_bytes, m.repeated_messages), (800, 1));
        assert!((m.overhead_per_100 - 50.0).abs() < 1e-9);
    }

    #[test]
    fn no_data_on_the_links_leaves_the_overhead_undefined() {
        let traffic = Traffic {
            packets: 3,
            bytes: 300,
            messages: MessageCounts::default(),
        };
        assert!(Metrics::of(&outcome(4, 0, vec![], traffic), 100)
            .overhead_per_100
            .is_nan());
    }

    fn row(protocol: &str, loss_pct: f64, latency_median_s: f64) -> TrialRow {
        TrialRow {
            condition: Condition::low_quality(),
            protocol: protocol.into(),
            reliable: false,
            tbf: None,
            repetition: 0,
            seed: 0,
            metrics: Some(Metrics {
                sent: 100,
                received: 100 - loss_pct as u64,
                loss_pct,
                latency_mean_s: latency_median_s,
                latency_median_s,
                latency_p95_s: latency_median_s,
                wire_bytes: 50_000,
                wire_packets: 200,
                data_bytes: 40_000,
                repeated_messages: 0,
                overhead_per_100: 25.0,
            }),
            latencies_s: Vec::new(),
            error: None,
            setup_failures: Vec::new(),
        }
    }

    #[test]
    fn a_point_sums_up_its_trials_as_medians_with_their_range() {
        let mut failed = row("a", 0.0, 0.0);
        failed.metrics = None;
        failed.error = Some("no broker".into());
        let rows = vec![
            row("a", 0.0, 0.3),
            row("a", 0.0, 0.1),
            row("a", 0.0, 0.2),
            failed,
            row("b", 10.0, 0.5),
        ];
        let points = summarise(&rows);
        assert_eq!(points.len(), 2);
        let a = &points[0];
        assert_eq!((a.protocol.as_str(), a.trials, a.measured), ("a", 4, 3));
        assert!(a.lost_nothing);
        let median = a.latency_median_s.unwrap();
        assert_eq!((median.value, median.low, median.high), (0.2, 0.1, 0.3));
        let b = &points[1];
        assert!(!b.lost_nothing);
        let loss = b.loss_pct.unwrap();
        assert_eq!((loss.value, loss.low, loss.high), (10.0, 10.0, 10.0));
        assert_eq!(b.bytes_per_delivered.unwrap().value, 50_000.0 / 90.0);
    }

    /// A relay's two hops as the forwarder counts them: each packet is the JSON behind IP and
    /// UDP headers; hop 1 loses packets the sender may repeat, the relay forwards what it got.
    fn relayed(size: usize, losses: &[bool], retransmit: bool) -> Traffic {
        let marker = MessageMarker::new(MESSAGE_MARKER, 1 << 16);
        let (mut hop1, mut hop2) = (MessageTally::default(), MessageTally::default());
        let mut traffic = Traffic::default();
        let mut put = |tally: &mut MessageTally, seq: u64| {
            let mut packet = vec![0u8; HEADERS as usize];
            packet.extend_from_slice(&message(seq, size));
            tally.record(&marker, &packet);
            traffic.packets += 1;
            traffic.bytes += packet.len() as u64;
        };
        for (seq, lost) in losses.iter().enumerate() {
            let seq = seq as u64;
            put(&mut hop1, seq);
            if *lost && retransmit {
                put(&mut hop1, seq);
            }
            if !*lost || retransmit {
                put(&mut hop2, seq);
            }
        }
        traffic.messages = hop1.counts().plus(&hop2.counts());
        traffic
    }

    #[test]
    fn overhead_never_goes_negative_when_messages_are_lost_on_the_first_hop() {
        let size = 409;
        let header_share = 100.0 * HEADERS as f64 / size as f64;
        // Loss patterns from none to all but one message lost on the first hop.
        for lost_every in [0usize, 1, 2, 3, 10] {
            let losses: Vec<bool> = (0..100)
                .map(|i| lost_every > 0 && i % lost_every.max(1) == 0 && i != 99)
                .collect();
            let sent = losses.len() as u64;
            let received = losses.iter().filter(|l| !**l).count() as u64;
            let m = Metrics::of(
                &outcome(sent, received, vec![], relayed(size, &losses, false)),
                size,
            );
            assert!(
                (m.overhead_per_100 - header_share).abs() < 1e-9,
                "without recovery the overhead is the headers: {} at 1 in {lost_every} lost",
                m.overhead_per_100
            );
            let r = Metrics::of(
                &outcome(sent, sent, vec![], relayed(size, &losses, true)),
                size,
            );
            assert!(
                r.overhead_per_100 >= m.overhead_per_100,
                "retransmitted copies are overhead"
            );
            assert_eq!(
                r.data_bytes,
                2 * sent * size as u64,
                "every message crossed both hops"
            );
        }
    }
}
