//! What one run measured, and the aggregates over runs that the report shows.

use std::collections::BTreeMap;

use covey_proto::cc::Algorithm;
use covey_proto::stats::TRACKED_ATTEMPTS;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::client::ClientKind;
use super::Workload;
use crate::stats;

/// One client's measurements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientResult {
    /// Index among the run's clients.
    pub client: usize,
    /// The algorithm this client's endpoints used.
    #[serde(
        serialize_with = "algorithm_name",
        deserialize_with = "algorithm_named"
    )]
    pub algorithm: Algorithm,
    /// Continuous or random.
    pub kind: ClientKind,
    /// Seconds from its first request to the end of its last exchange (`None`: unfinished
    /// at the time limit).
    pub completion_s: Option<f64>,
    /// The longest retransmission timeout that expired, seconds (0: none expired).
    pub rto_max_s: f64,
    /// Exchanges that got a response.
    pub succeeded: u32,
    /// Exchanges that failed.
    pub failed: u32,
    /// Endpoints used (fresh clients of a random client).
    pub endpoints: u32,
    /// Engine counters: exchanges completed after i retransmissions (last bucket: more).
    pub completed_after: [u64; TRACKED_ATTEMPTS],
    /// Engine counters: (i+1)-th retransmissions sent.
    pub retransmissions: [u64; TRACKED_ATTEMPTS],
    /// Engine counters: datagrams sent.
    pub transmissions: u64,
    /// Engine counters: acknowledged CONs timed from their first transmission.
    pub rtt_samples: u64,
    /// Sum of the RTT samples, seconds.
    pub rtt_total_s: f64,
}

/// One run's measurements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The algorithm under test.
    #[serde(
        serialize_with = "algorithm_name",
        deserialize_with = "algorithm_named"
    )]
    pub algorithm: Algorithm,
    /// The workload.
    pub workload: Workload,
    /// Number of clients.
    pub clients: usize,
    /// Which of the point's seeds.
    pub seed_index: usize,
    /// The run seed.
    pub run_seed: u64,
    /// Whether every client ended its exchanges within the time limit.
    pub finished: bool,
    /// Virtual time at the end, seconds.
    pub virtual_s: f64,
    /// Simulator steps taken.
    pub sim_steps: u64,
    /// Serialisation completions and arrivals on the bottleneck.
    pub link_events: u64,
    /// Bytes on the bottleneck, headers included.
    pub bytes_on_wire: u64,
    /// Frames on the bottleneck.
    pub frames_on_wire: u64,
    /// Packets dropped by the drop-tail queues.
    pub queue_drops: u64,
    /// Longest upstream queue.
    pub max_queue_up: usize,
    /// Longest downstream queue.
    pub max_queue_down: usize,
    /// Per-client measurements (in the clients CSV; left out of the JSON, which would
    /// otherwise repeat tens of thousands of rows, and carried beside the run in shards).
    #[serde(skip)]
    pub results: Vec<ClientResult>,
}

/// An algorithm as its name ([`Algorithm::name`]).
pub(super) fn algorithm_name<S: Serializer>(a: &Algorithm, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(a.name())
}

/// An algorithm read back from its name.
fn algorithm_named<'de, D: Deserializer<'de>>(d: D) -> Result<Algorithm, D::Error> {
    let name = String::deserialize(d)?;
    Algorithm::from_name(&name)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown algorithm `{name}`")))
}

/// Five numbers that describe a distribution.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Distribution {
    /// Samples.
    pub n: usize,
    /// Smallest.
    pub min: f64,
    /// 10th percentile.
    pub p10: f64,
    /// Median.
    pub median: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl Distribution {
    /// The distribution of the finite `samples` (the lab's quantiles, [`crate::stats`]).
    pub fn of(mut samples: Vec<f64>) -> Distribution {
        samples.retain(|x| x.is_finite());
        samples.sort_by(f64::total_cmp);
        let q = |p: f64| stats::quantile_sorted(&samples, p).unwrap_or_default();
        Distribution {
            n: samples.len(),
            min: q(0.0),
            p10: q(0.10),
            median: q(0.50),
            p90: q(0.90),
            max: q(1.0),
            mean: stats::mean(&samples).unwrap_or_default(),
        }
    }
}

/// The clients of one class (same run algorithm, workload, client count and client
/// algorithm) over all seeds.
#[derive(Debug, Clone, Serialize)]
pub struct Aggregate {
    /// The workload.
    pub workload: Workload,
    /// The algorithm under test in these runs.
    pub run_algorithm: &'static str,
    /// Clients per run.
    pub clients: usize,
    /// The algorithm these clients used (differs from `run_algorithm` for the default
    /// half of a competing workload).
    pub client_algorithm: &'static str,
    /// Runs aggregated.
    pub runs: usize,
    /// Client completion times, seconds.
    pub completion_s: Distribution,
    /// Client RTOmax, seconds.
    pub rto_max_s: Distribution,
    /// Exchanges completed after i retransmissions (summed over clients and runs).
    pub completed_after: [u64; TRACKED_ATTEMPTS],
    /// Exchanges that failed.
    pub failed: u64,
    /// Clients unfinished at the time limit.
    pub unfinished: usize,
    /// Share of completed exchanges that needed at least one retransmission.
    pub retransmitted_share: f64,
    /// Datagrams the clients sent per completed exchange.
    pub transmissions_per_exchange: f64,
    /// Mean time from an exchange's first transmission to its ACK, seconds (the engine's
    /// RTT counters, retransmitted exchanges included).
    pub rtt_mean_s: f64,
}

/// Groups the clients of `runs` into [`Aggregate`]s, in a stable order.
pub fn aggregate<'a>(runs: impl IntoIterator<Item = &'a RunResult>) -> Vec<Aggregate> {
    type Key = (Workload, &'static str, usize, &'static str);
    let mut groups: BTreeMap<Key, (usize, Vec<&ClientResult>)> = BTreeMap::new();
    for run in runs {
        let mut seen: Vec<&'static str> = Vec::new();
        for c in &run.results {
            let algorithm = c.algorithm.name();
            let key = (run.workload, run.algorithm.name(), run.clients, algorithm);
            let entry = groups.entry(key).or_default();
            if !seen.contains(&algorithm) {
                seen.push(algorithm);
                entry.0 += 1;
            }
            entry.1.push(c);
        }
    }
    groups
        .into_iter()
        .map(
            |((workload, run_algorithm, clients, client_algorithm), (n, cs))| {
                let mut completed_after = [0u64; TRACKED_ATTEMPTS];
                let mut transmissions = 0u64;
                let (mut rtt_n, mut rtt_sum) = (0u64, 0.0f64);
                for c in &cs {
                    rtt_n += c.rtt_samples;
                    rtt_sum += c.rtt_total_s;
                    for (t, x) in completed_after.iter_mut().zip(c.completed_after) {
                        *t += x;
                    }
                    transmissions += c.transmissions;
                }
                let completed: u64 = completed_after.iter().sum();
                Aggregate {
                    workload,
                    run_algorithm,
                    clients,
                    client_algorithm,
                    runs: n,
                    completion_s: Distribution::of(
                        cs.iter().filter_map(|c| c.completion_s).collect(),
                    ),
                    rto_max_s: Distribution::of(cs.iter().map(|c| c.rto_max_s).collect()),
                    completed_after,
                    failed: cs.iter().map(|c| u64::from(c.failed)).sum(),
                    unfinished: cs.iter().filter(|c| c.completion_s.is_none()).count(),
                    retransmitted_share: if completed == 0 {
                        0.0
                    } else {
                        1.0 - completed_after[0] as f64 / completed as f64
                    },
                    transmissions_per_exchange: if completed == 0 {
                        0.0
                    } else {
                        transmissions as f64 / completed as f64
                    },
                    rtt_mean_s: if rtt_n == 0 {
                        0.0
                    } else {
                        rtt_sum / rtt_n as f64
                    },
                }
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_interpolates_its_percentiles() {
        let d = Distribution::of((1..=10).map(f64::from).collect());
        assert_eq!((d.n, d.min, d.max), (10, 1.0, 10.0));
        // Type 7, as numpy.quantile(range(1, 11), [0.1, 0.5, 0.9]).
        assert!((d.p10 - 1.9).abs() < 1e-12 && (d.p90 - 9.1).abs() < 1e-12);
        assert_eq!(d.median, 5.5);
        assert!((d.mean - 5.5).abs() < 1e-12);
        assert_eq!(Distribution::of(vec![]).n, 0);
        assert_eq!(Distribution::of(vec![f64::NAN, 2.0]).median, 2.0);
    }
}
