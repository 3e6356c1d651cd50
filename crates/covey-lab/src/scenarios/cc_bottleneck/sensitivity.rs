//! How the outcome depends on what the paper leaves open: the same continuous runs with
//! IPv4 instead of IPv6 headers (the paper does not name its IP version) and with a short
//! router buffer instead of netem's 1000-packet default. A sensitivity study, reported as
//! such beside the main results — not a fit.

use covey_proto::cc::Algorithm;
use covey_sim::media::HeaderModel;
use serde::Serialize;

use super::{run_sweep, Params, Sweep, Workload};

/// A router buffer of a constrained border router: Contiki's default QUEUEBUF_NUM.
pub const SHORT_QUEUE: usize = 8;

/// One variant's result for one algorithm and client count.
#[derive(Debug, Clone, Serialize)]
pub struct SensitivityRow {
    /// What was changed.
    pub variant: String,
    /// The algorithm.
    pub algorithm: &'static str,
    /// Clients.
    pub clients: usize,
    /// Share of exchanges that needed a retransmission.
    pub retransmitted_share: f64,
    /// Median client completion time, seconds.
    pub completion_median_s: f64,
    /// Packets the drop-tail queues dropped, per run.
    pub queue_drops_per_run: f64,
}

/// The variants of `base` studied.
pub fn variants(base: &Params) -> Vec<(String, Params)> {
    vec![
        ("as configured".to_string(), base.clone()),
        (
            HeaderModel::Ipv4Udp.name().to_string(),
            Params {
                header: HeaderModel::Ipv4Udp,
                ..base.clone()
            },
        ),
        (
            format!("queue {SHORT_QUEUE} packets"),
            Params {
                queue_packets: SHORT_QUEUE,
                ..base.clone()
            },
        ),
    ]
}

/// Runs default CoAP, CoCoA and Linux RTO with 10, 40 and 80 continuous clients under each
/// variant, `seeds` seeds each.
pub fn study(base: &Params, seeds: usize, seed: u64) -> Vec<SensitivityRow> {
    let sweep = Sweep {
        algorithms: vec![Algorithm::Default, Algorithm::Cocoa, Algorithm::Linux],
        clients: vec![10, 40, 80],
        workloads: vec![Workload::Continuous],
        seeds,
    };
    let mut rows = Vec::new();
    for (name, params) in variants(base) {
        let outcome = run_sweep(&params, &sweep, seed, None);
        for a in &outcome.aggregates {
            let runs: Vec<_> = outcome
                .runs
                .iter()
                .filter(|r| r.algorithm == a.run_algorithm && r.clients == a.clients)
                .collect();
            let drops = runs.iter().map(|r| r.queue_drops).sum::<u64>() as f64;
            rows.push(SensitivityRow {
                variant: name.clone(),
                algorithm: a.run_algorithm,
                clients: a.clients,
                retransmitted_share: a.retransmitted_share,
                completion_median_s: a.completion_s.median,
                queue_drops_per_run: drops / runs.len().max(1) as f64,
            });
        }
    }
    rows
}
