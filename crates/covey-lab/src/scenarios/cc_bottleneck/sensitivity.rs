//! How the outcome depends on what the paper leaves open: the same continuous runs with
//! IPv4 instead of IPv6 headers (the paper does not name its IP version) and with a short
//! router buffer instead of netem's 1000-packet default. A sensitivity study, reported as
//! such beside the main results — not a fit.
//!
//! Its runs are points of the sweep like the main ones (variant [`Variant::Ipv4Headers`] or
//! [`Variant::ShortQueue`]), with at most [`SEEDS`] seeds; its "as configured" rows are the
//! main sweep's runs of the same algorithms, client counts and seeds.

use covey_proto::cc::Algorithm;
use serde::Serialize;

use super::results::{aggregate, RunResult};
use super::{Headers, Params, Point, Workload};

/// A router buffer of a constrained border router: Contiki's default QUEUEBUF_NUM.
pub const SHORT_QUEUE: usize = 8;

/// Seeds per point of the study (fewer when the sweep has fewer).
pub const SEEDS: usize = 3;

/// The algorithms the study runs.
pub const ALGORITHMS: [Algorithm; 3] = [Algorithm::Default, Algorithm::Cocoa, Algorithm::Linux];

/// The client counts the study runs.
pub const CLIENTS: [usize; 3] = [10, 40, 80];

/// The parameters a run uses: as configured, or with one setting changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// The parameters as configured (the main sweep).
    Configured,
    /// IPv4 instead of the configured headers.
    Ipv4Headers,
    /// A router buffer of [`SHORT_QUEUE`] packets.
    ShortQueue,
    /// A point of the retransmission sweep ([`super::retx_sweep`]).
    Netem(super::retx_sweep::Setting),
}

impl Variant {
    /// The variants of the study, in report order.
    pub const ALL: [Variant; 3] = [
        Variant::Configured,
        Variant::Ipv4Headers,
        Variant::ShortQueue,
    ];

    /// `base` with this variant's change.
    pub fn params(self, base: &Params) -> Params {
        match self {
            Variant::Configured => base.clone(),
            Variant::Ipv4Headers => Params {
                header: Headers::Ipv4,
                ..base.clone()
            },
            Variant::ShortQueue => Params {
                queue: SHORT_QUEUE,
                ..base.clone()
            },
            Variant::Netem(setting) => setting.params(base),
        }
    }

    /// What was changed, as the report names it.
    pub fn label(self) -> String {
        match self {
            Variant::Configured => "as configured".to_string(),
            Variant::Ipv4Headers => Headers::Ipv4.model().name().to_string(),
            Variant::ShortQueue => format!("queue {SHORT_QUEUE} packets"),
            Variant::Netem(setting) => setting.label(),
        }
    }
}

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

/// The study's points beyond the main sweep: default CoAP, CoCoA and Linux RTO with 10, 40
/// and 80 continuous clients under each changed setting.
pub fn points() -> Vec<Point> {
    let mut points = Vec::new();
    for variant in [Variant::Ipv4Headers, Variant::ShortQueue] {
        for clients in CLIENTS {
            for algorithm in ALGORITHMS {
                points.push(Point {
                    variant,
                    algorithm,
                    workload: Workload::Continuous,
                    clients,
                });
            }
        }
    }
    points
}

/// Whether the main sweep's `run` is one of the study's "as configured" runs.
fn studied(run: &RunResult) -> bool {
    run.workload == Workload::Continuous
        && run.seed_index < SEEDS
        && CLIENTS.contains(&run.clients)
        && ALGORITHMS.contains(&run.algorithm)
}

/// The study's rows from the main sweep's runs (`main`) and the changed settings' runs
/// (`variants`); each point's seeds in seed order, as the runner gives them.
pub fn study(main: &[RunResult], variants: &[(Variant, RunResult)]) -> Vec<SensitivityRow> {
    let mut rows = Vec::new();
    for variant in Variant::ALL {
        let runs: Vec<&RunResult> = if variant == Variant::Configured {
            main.iter().filter(|r| studied(r)).collect()
        } else {
            variants
                .iter()
                .filter(|(v, _)| *v == variant)
                .map(|(_, r)| r)
                .collect()
        };
        for a in aggregate(runs.iter().copied()) {
            let runs: Vec<&&RunResult> = runs
                .iter()
                .filter(|r| r.algorithm.name() == a.run_algorithm && r.clients == a.clients)
                .collect();
            let drops = runs.iter().map(|r| r.queue_drops).sum::<u64>() as f64;
            rows.push(SensitivityRow {
                variant: variant.label(),
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
