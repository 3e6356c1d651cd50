//! What could produce the paper's Table 1 retransmissions: a sweep of the retransmitted
//! share and of the retransmission counts over what a netem set-up can have besides rate
//! and delay — random loss (netem `loss random PERCENT`: per tc-netem(8) an independent
//! loss probability per outgoing packet; here on both directions of the bottleneck, drawn
//! per IP fragment), the drop-tail queue (netem `limit`) and the response's size, which at
//! MTU 128 decides whether it travels as one packet or as IP fragments that each take a
//! queue slot and each can be lost. A sensitivity study beside the main results, not a fit:
//! the main sweep keeps the configured (loss-free) values.
//!
//! Its runs are points of the sweep like the main ones (variant [`Variant::Netem`]), with
//! at most [`super::sensitivity::SEEDS`] seeds, continuous clients only.

use covey_proto::cc::Algorithm;
use covey_sim::media::Fragmentation;
use serde::Serialize;

use super::results::{aggregate, RunResult};
use super::{Fragments, LossDirection, Params, Point, Variant, Workload};

/// Random loss per packet, per mille (0, 0.5, 1, 2 and 5 %).
pub const LOSS_PERMILLE: [u16; 5] = [0, 5, 10, 20, 50];

/// Drop-tail queue limits, packets (IP fragments).
pub const QUEUES: [u32; 3] = [10, 50, 1000];

/// Response payloads, bytes: the default 6 (one packet with its headers) and 150 (three
/// IPv6 fragments at MTU 128, two IPv4 ones).
pub const PAYLOADS: [u16; 2] = [6, 150];

/// The client counts of the paper's Table 1.
pub const CLIENTS: [usize; 3] = [10, 40, 80];

/// The algorithms the sweep runs.
pub const ALGORITHMS: [Algorithm; 2] = [Algorithm::Default, Algorithm::Cocoa];

/// One setting of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// Random loss per packet, per mille.
    pub loss_permille: u16,
    /// Drop-tail queue, packets.
    pub queue: u32,
    /// Response payload, bytes.
    pub payload: u16,
}

impl Setting {
    /// `base` with this setting: the loss on both directions, IP fragmentation.
    pub fn params(self, base: &Params) -> Params {
        Params {
            loss: f64::from(self.loss_permille) / 10.0,
            loss_direction: LossDirection::Both,
            queue: self.queue as usize,
            payload: usize::from(self.payload),
            fragmentation: Fragments::Ip,
            ..base.clone()
        }
    }

    /// The setting as the report names it.
    pub fn label(self) -> String {
        format!(
            "loss {} %, queue {}, payload {} B",
            f64::from(self.loss_permille) / 10.0,
            self.queue,
            self.payload
        )
    }
}

/// The quick sweep's losses, queues, client counts and algorithms: a corner of the grid, so
/// that the CI-sized sweep still runs every mechanism.
const QUICK_LOSS_PERMILLE: [u16; 2] = [0, 20];
const QUICK_QUEUES: [u32; 1] = [10];
const QUICK_CLIENTS: [usize; 1] = [10];
const QUICK_ALGORITHMS: [Algorithm; 1] = [Algorithm::Default];

/// Every setting (of the quick sweep's corner when `quick`), in report order.
pub fn settings(quick: bool) -> Vec<Setting> {
    let (losses, queues): (&[u16], &[u32]) = if quick {
        (&QUICK_LOSS_PERMILLE, &QUICK_QUEUES)
    } else {
        (&LOSS_PERMILLE, &QUEUES)
    };
    let mut out = Vec::new();
    for payload in PAYLOADS {
        for &queue in queues {
            for &loss_permille in losses {
                out.push(Setting {
                    loss_permille,
                    queue,
                    payload,
                });
            }
        }
    }
    out
}

/// The sweep's points: every setting with default CoAP and CoCoA at 10, 40 and 80
/// continuous clients (the quick sweep: its corner, default CoAP, 10 clients).
pub fn points(quick: bool) -> Vec<Point> {
    let (clients_of, algorithms): (&[usize], &[Algorithm]) = if quick {
        (&QUICK_CLIENTS, &QUICK_ALGORITHMS)
    } else {
        (&CLIENTS, &ALGORITHMS)
    };
    let mut points = Vec::new();
    for setting in settings(quick) {
        for &clients in clients_of {
            for &algorithm in algorithms {
                points.push(Point {
                    variant: Variant::Netem(setting),
                    algorithm,
                    workload: Workload::Continuous,
                    clients,
                });
            }
        }
    }
    points
}

/// One setting's result for one algorithm and client count.
#[derive(Debug, Clone, Serialize)]
pub struct RetxRow {
    /// Random loss per packet, percent.
    pub loss_percent: f64,
    /// Drop-tail queue, packets.
    pub queue: u32,
    /// Response payload, bytes.
    pub payload: u16,
    /// Frames (IP fragments) that carry the request and the response on the bottleneck.
    pub request_frames: usize,
    /// See `request_frames`.
    pub response_frames: usize,
    /// The algorithm.
    pub algorithm: &'static str,
    /// Clients.
    pub clients: usize,
    /// Runs (seeds).
    pub runs: usize,
    /// Exchanges that ended (succeeded or failed).
    pub exchanges: u64,
    /// Share of completed exchanges that needed a retransmission.
    pub retransmitted_share: f64,
    /// Shares of the ended exchanges that succeeded on the original transmission and after
    /// the 1st … 8th retransmission (the paper's Table 1 columns).
    pub after: [f64; 9],
    /// Share of the ended exchanges that failed (retry limit reached).
    pub failed: f64,
    /// Median client completion time, seconds.
    pub completion_median_s: f64,
    /// Datagrams or fragments the drop-tail queues dropped, per run.
    pub queue_drops_per_run: f64,
}

/// The frames of a request and of a response of `payload` bytes: the CoAP sizes Covey's
/// engine sends (4-byte header, token, the `sensor` Uri-Path; the payload marker).
pub fn frames(params: &Params, payload: usize) -> (usize, usize) {
    let framing = super::run::bottleneck(params).framing;
    let fragmentation: Fragmentation = params.fragmentation.model();
    let token = covey_proto::Config::default().token_length;
    let request = 4 + token + 1 + super::client::RESOURCE.len();
    let response = 4 + token + usize::from(payload > 0) + payload;
    (
        framing.frame_count_as(request, fragmentation),
        framing.frame_count_as(response, fragmentation),
    )
}

/// The sweep's rows from its runs; each point's seeds in seed order, as the runner gives
/// them.
pub fn study(runs: &[(Setting, RunResult)]) -> Vec<RetxRow> {
    let mut rows = Vec::new();
    for setting in settings(false) {
        let of: Vec<&RunResult> = runs
            .iter()
            .filter(|(s, _)| *s == setting)
            .map(|(_, r)| r)
            .collect();
        if of.is_empty() {
            continue;
        }
        let params = setting.params(&Params::default());
        let (request_frames, response_frames) = frames(&params, usize::from(setting.payload));
        for a in aggregate(of.iter().copied()) {
            let these: Vec<&&RunResult> = of
                .iter()
                .filter(|r| r.algorithm.name() == a.run_algorithm && r.clients == a.clients)
                .collect();
            let drops = these.iter().map(|r| r.queue_drops).sum::<u64>() as f64;
            let completed: u64 = a.completed_after.iter().sum();
            let ended = (completed + a.failed).max(1) as f64;
            let mut after = [0.0; 9];
            for (x, n) in after.iter_mut().zip(a.completed_after) {
                *x = n as f64 / ended;
            }
            rows.push(RetxRow {
                loss_percent: params.loss,
                queue: setting.queue,
                payload: setting.payload,
                request_frames,
                response_frames,
                algorithm: a.run_algorithm,
                clients: a.clients,
                runs: these.len(),
                exchanges: completed + a.failed,
                retransmitted_share: a.retransmitted_share,
                after,
                failed: a.failed as f64 / ended,
                completion_median_s: a.completion_s.median,
                queue_drops_per_run: drops / these.len().max(1) as f64,
            });
        }
    }
    rows
}

/// How far a row's distribution (original, 1st … 8th retransmission, failed) lies from the
/// paper's Table 1 row of default CoAP, continuous, at the same client count: the sum of
/// absolute differences of the shares (0: equal, 2: disjoint). `None` without a paper row.
pub fn distance_to_table_1(row: &RetxRow) -> Option<f64> {
    let paper = super::paper::table_1(row.clients, "continuous", row.algorithm)?;
    let total: u64 = paper.counts.iter().sum();
    let d: f64 = paper
        .counts
        .iter()
        .zip(row.after)
        .map(|(&n, x)| (n as f64 / total as f64 - x).abs())
        .sum();
    Some(d + row.failed)
}
