//! One row per trial: the metrics the paper reports (bytes on the wire, experienced latency,
//! experienced loss, control overhead per 100 bytes of data).

use serde::Serialize;

use super::condition::Condition;
use super::trial::TrialOutcome;

/// A trial's metrics, or why it could not run.
#[derive(Debug, Clone, Serialize)]
pub struct TrialRow {
    /// The network condition.
    pub condition: Condition,
    /// The protocol's label.
    pub protocol: String,
    /// Whether the protocol recovers lost packets.
    pub reliable: bool,
    /// Repetition index.
    pub repetition: usize,
    /// The metrics, when the trial ran.
    pub metrics: Option<Metrics>,
    /// Each received message's latency, seconds, in sequence order.
    pub latencies_s: Vec<f64>,
    /// Why it did not run (a missing package, a stack that never became ready).
    pub error: Option<String>,
}

/// The metrics of one trial.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Metrics {
    /// Messages sent.
    pub sent: u64,
    /// Distinct messages received by the caregiver.
    pub received: u64,
    /// Share of messages never received, %.
    pub loss_pct: f64,
    /// Mean gateway-to-caregiver latency, seconds.
    pub latency_mean_s: f64,
    /// Median latency, seconds.
    pub latency_median_s: f64,
    /// 95th percentile latency, seconds.
    pub latency_p95_s: f64,
    /// IP bytes on the links (both hops, every packet of the trial).
    pub wire_bytes: u64,
    /// IP packets on the links.
    pub wire_packets: u64,
    /// Bytes beyond the application data per 100 bytes of it; the data counted once per hop
    /// for every message sent.
    pub overhead_per_100: f64,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

impl Metrics {
    /// The metrics of `outcome` for messages of `size` bytes.
    pub fn of(outcome: &TrialOutcome, size: usize) -> Metrics {
        let mut l = outcome.latencies_s.clone();
        l.sort_by(f64::total_cmp);
        let mean = if l.is_empty() {
            f64::NAN
        } else {
            l.iter().sum::<f64>() / l.len() as f64
        };
        let app = 2.0 * size as f64 * outcome.sent as f64;
        let wire = outcome.traffic.bytes as f64;
        Metrics {
            sent: outcome.sent,
            received: outcome.received,
            loss_pct: if outcome.sent == 0 {
                f64::NAN
            } else {
                100.0 * (1.0 - outcome.received as f64 / outcome.sent as f64)
            },
            latency_mean_s: mean,
            latency_median_s: quantile(&l, 0.5),
            latency_p95_s: quantile(&l, 0.95),
            wire_bytes: outcome.traffic.bytes,
            wire_packets: outcome.traffic.packets,
            overhead_per_100: if app > 0.0 {
                100.0 * (wire - app) / app
            } else {
                f64::NAN
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::stacks::network::Traffic;

    #[test]
    fn metrics_follow_their_definitions() {
        let outcome = TrialOutcome {
            sent: 4,
            received: 3,
            duplicates: 0,
            latencies_s: vec![0.3, 0.1, 0.2],
            traffic: Traffic {
                packets: 20,
                bytes: 1200,
            },
        };
        let m = Metrics::of(&outcome, 100);
        assert_eq!(m.loss_pct, 25.0);
        assert!((m.latency_mean_s - 0.2).abs() < 1e-12);
        assert_eq!(m.latency_median_s, 0.2);
        assert_eq!(m.latency_p95_s, 0.3);
        // 800 bytes of data (4 messages, 2 hops), 400 bytes more on the wire.
        assert!((m.overhead_per_100 - 50.0).abs() < 1e-9);
    }
}
