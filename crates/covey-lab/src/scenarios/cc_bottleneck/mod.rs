//! `cc-bottleneck`: CoAP congestion control algorithms behind a Zigbee-like bottleneck
//! (Järvinen, Daniel, Kojo, WF-IoT 2015; seed 003, spec `lab-experiments.md` §1).
//!
//! Method, as the paper's: N CoAP clients fetch a small resource from one server across a
//! bottleneck of 20 kbit/s, 20 ms one-way delay and 128-byte MTU (the paper used netem;
//! we model netem's rate, delay and drop-tail `limit`, counting IPv6 and UDP headers).
//! Every client sends CON GETs with NSTART 1. A *continuous* client runs 50 exchanges back
//! to back; a *random* client runs 1–10, then a fresh client (fresh RTO state) continues
//! until 50. Workloads: continuous, random, mixed (half each), competing (half default
//! CoAP, half the algorithm under test, continuous clients). N ∈ {10, 20, 30, 40, 80}.
//! Metrics: client completion time, client RTOmax (the longest retransmission timeout that
//! expired), and how many exchanges succeeded after 0, 1, 2 … retransmissions, read from
//! the engines' `Stats`.
//!
//! Modelling choices the paper leaves open, stated here: the retry limit is 8 (its Table 1
//! reaches the 8th retransmission), failures are reported apart; the drop-tail queue holds
//! 1000 packets per direction (netem's default `limit`, the paper names none); clients start
//! at uniform random times within the first second (separate client processes); the
//! response carries a 6-byte payload.

pub mod client;
pub mod node;
pub mod paper;
pub mod report;
pub mod results;
pub mod run;
pub mod sensitivity;
pub mod server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant as WallClock;

use covey_proto::cc::Algorithm;
use covey_proto::Duration;
use covey_sim::media::HeaderModel;
use covey_sim::sim::splitmix64;
use rayon::prelude::*;
use serde::Serialize;

use crate::scenarios::{ParamInfo, Progress, RunOptions, Summary};
use crate::LabError;
pub use results::{aggregate, Aggregate, ClientResult, RunResult};

/// The scenario's name.
pub const NAME: &str = "cc-bottleneck";

/// The client mixes of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Every client continuous.
    Continuous,
    /// Every client random.
    Random,
    /// Half continuous, half random.
    Mixed,
    /// Half default CoAP, half the algorithm under test (continuous clients).
    Competing,
}

impl Workload {
    /// All four workloads.
    pub const ALL: [Workload; 4] = [
        Workload::Continuous,
        Workload::Random,
        Workload::Mixed,
        Workload::Competing,
    ];

    /// The workload's name in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Workload::Continuous => "continuous",
            Workload::Random => "random",
            Workload::Mixed => "mixed",
            Workload::Competing => "competing",
        }
    }
}

/// The fixed parameters of the experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Params {
    /// Bottleneck rate, bit/s.
    pub rate_bps: u64,
    /// Bottleneck one-way delay.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub one_way_delay: Duration,
    /// Bottleneck MTU, bytes.
    pub mtu: usize,
    /// Header bytes counted per datagram.
    #[serde(serialize_with = "serialize_header")]
    pub header: HeaderModel,
    /// Drop-tail queue per direction, packets.
    pub queue_packets: usize,
    /// MAX_RETRANSMIT of every endpoint.
    pub max_retransmit: u8,
    /// Exchanges per client.
    pub exchanges_per_client: u32,
    /// Clients start within this time of the run's start.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub start_spread: Duration,
    /// Virtual time after which a run is stopped.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub time_limit: Duration,
}

fn serialize_header<S: serde::Serializer>(h: &HeaderModel, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(h.name())
}

impl Default for Params {
    fn default() -> Params {
        Params {
            rate_bps: 20_000,
            one_way_delay: Duration::from_millis(20),
            mtu: 128,
            header: HeaderModel::Ipv6Udp,
            queue_packets: 1000,
            max_retransmit: 8,
            exchanges_per_client: 50,
            start_spread: Duration::from_secs(1),
            time_limit: run::default_time_limit(),
        }
    }
}

impl Params {
    /// Every parameter [`Params::with_overrides`] knows, with its default.
    pub fn describe() -> Vec<ParamInfo> {
        let d = Params::default();
        let param = |name, default: String, accepts: &str, help| ParamInfo {
            name,
            default,
            accepts: String::from(accepts),
            help,
        };
        vec![
            param(
                "queue",
                d.queue_packets.to_string(),
                "packets, 0 or more",
                "drop-tail queue per direction (netem's default limit; the paper names none)",
            ),
            param(
                "max_retransmit",
                d.max_retransmit.to_string(),
                "0 to 255",
                "MAX_RETRANSMIT of every endpoint (the paper's Table 1 reaches the 8th)",
            ),
            param(
                "rate",
                d.rate_bps.to_string(),
                "bit/s, 1 or more",
                "bottleneck rate",
            ),
            param(
                "delay_ms",
                d.one_way_delay.as_millis().to_string(),
                "milliseconds",
                "bottleneck one-way delay",
            ),
            param(
                "mtu",
                d.mtu.to_string(),
                "bytes, 16 or more",
                "bottleneck MTU",
            ),
            param(
                "header",
                header_token(d.header).to_string(),
                "ipv6, ipv4 or 6lowpan",
                "header bytes counted per datagram",
            ),
            param(
                "exchanges",
                d.exchanges_per_client.to_string(),
                "1 or more",
                "exchanges per client",
            ),
            param(
                "start_spread_ms",
                d.start_spread.as_millis().to_string(),
                "milliseconds",
                "clients start at random times within this",
            ),
        ]
    }

    /// The defaults with `overrides` applied; the names and values are those of
    /// [`Params::describe`].
    pub fn with_overrides(overrides: &[(String, String)]) -> Result<Params, LabError> {
        let described = Params::describe();
        let mut p = Params::default();
        for (name, value) in overrides {
            let Some(info) = described.iter().find(|d| d.name == name) else {
                let names: Vec<&str> = described.iter().map(|d| d.name).collect();
                return Err(LabError::InvalidOption(format!(
                    "{NAME} has no parameter `{name}` (choose from {})",
                    names.join(", ")
                )));
            };
            let bad = || {
                LabError::InvalidOption(format!(
                    "{NAME}: bad value `{value}` for `{name}` (expected {})",
                    info.accepts
                ))
            };
            let int = |min: u64| {
                value
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&v| v >= min)
                    .ok_or_else(bad)
            };
            match info.name {
                "queue" => p.queue_packets = usize::try_from(int(0)?).map_err(|_| bad())?,
                "max_retransmit" => p.max_retransmit = u8::try_from(int(0)?).map_err(|_| bad())?,
                "rate" => p.rate_bps = int(1)?,
                "delay_ms" => p.one_way_delay = Duration::from_millis(int(0)?),
                "mtu" => p.mtu = usize::try_from(int(16)?).map_err(|_| bad())?,
                "exchanges" => {
                    p.exchanges_per_client = u32::try_from(int(1)?).map_err(|_| bad())?
                }
                "start_spread_ms" => p.start_spread = Duration::from_millis(int(0)?),
                "header" => {
                    p.header = [
                        HeaderModel::Ipv6Udp,
                        HeaderModel::Ipv4Udp,
                        HeaderModel::SixLowpanIphcNhc,
                    ]
                    .into_iter()
                    .find(|&h| value.trim().eq_ignore_ascii_case(header_token(h)))
                    .ok_or_else(bad)?
                }
                _ => unreachable!("every described parameter is handled"),
            }
        }
        Ok(p)
    }
}

/// The name `--set header=` takes for a header model.
fn header_token(header: HeaderModel) -> &'static str {
    match header {
        HeaderModel::Ipv6Udp => "ipv6",
        HeaderModel::Ipv4Udp => "ipv4",
        HeaderModel::SixLowpanIphcNhc => "6lowpan",
        HeaderModel::Included => "included",
    }
}

/// The points and seeds of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Algorithms under test.
    #[serde(serialize_with = "serialize_algorithms")]
    pub algorithms: Vec<Algorithm>,
    /// Client counts.
    pub clients: Vec<usize>,
    /// Workloads.
    pub workloads: Vec<Workload>,
    /// Seeds per point.
    pub seeds: usize,
}

fn serialize_algorithms<S: serde::Serializer>(a: &[Algorithm], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(a.iter().map(|a| a.name()))
}

impl Sweep {
    /// The paper's full sweep: 6 algorithms × {10, 20, 30, 40, 80} clients × 4 workloads.
    pub fn full(seeds: usize) -> Sweep {
        Sweep {
            algorithms: Algorithm::ALL.to_vec(),
            clients: vec![10, 20, 30, 40, 80],
            workloads: Workload::ALL.to_vec(),
            seeds,
        }
    }

    /// A CI-sized sweep that still shows the paper's conclusions: every algorithm, 10, 40
    /// and 80 clients, the two workloads of the paper's Table 1.
    pub fn quick(seeds: usize) -> Sweep {
        Sweep {
            algorithms: Algorithm::ALL.to_vec(),
            clients: vec![10, 40, 80],
            workloads: vec![Workload::Continuous, Workload::Random],
            seeds,
        }
    }

    /// Every run of the sweep. Seed k is the same for every point (common random numbers:
    /// the algorithms face the same client start times).
    pub fn points(&self, base_seed: u64) -> Vec<RunPoint> {
        let mut points = Vec::new();
        for &workload in &self.workloads {
            for &clients in &self.clients {
                for &algorithm in &self.algorithms {
                    for seed_index in 0..self.seeds {
                        points.push(RunPoint {
                            algorithm,
                            workload,
                            clients,
                            seed_index,
                            run_seed: splitmix64(base_seed.wrapping_add(seed_index as u64)),
                        });
                    }
                }
            }
        }
        points
    }
}

/// One run of a sweep.
#[derive(Debug, Clone, Copy)]
pub struct RunPoint {
    /// The algorithm under test.
    pub algorithm: Algorithm,
    /// The workload.
    pub workload: Workload,
    /// Number of clients.
    pub clients: usize,
    /// Which seed of the point.
    pub seed_index: usize,
    /// The run seed.
    pub run_seed: u64,
}

/// Everything a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The experiment's parameters.
    pub params: Params,
    /// The sweep.
    pub sweep: Sweep,
    /// The base seed.
    pub seed: u64,
    /// Every run, in sweep order.
    pub runs: Vec<RunResult>,
    /// Aggregates per class.
    pub aggregates: Vec<Aggregate>,
    /// The sensitivity study (empty unless asked for).
    pub sensitivity: Vec<sensitivity::SensitivityRow>,
    /// Wall-clock seconds the sweep took.
    pub wall_s: f64,
}

/// Runs `sweep` with `params` in parallel (one run per rayon task), in a deterministic
/// order of results whatever the scheduling.
pub fn run_sweep(
    params: &Params,
    sweep: &Sweep,
    seed: u64,
    progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> Outcome {
    let started = WallClock::now();
    let points = sweep.points(seed);
    let total = points.len();
    let done = AtomicUsize::new(0);
    // Largest runs first, so the last tasks are short and both cores stay busy.
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(points[i].clients));
    let mut runs: Vec<(usize, RunResult)> = order
        .par_iter()
        .map(|&i| {
            let result = run::run_point(&points[i], params);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = progress {
                p(Progress { done: n, total });
            }
            (i, result)
        })
        .collect();
    runs.sort_by_key(|(i, _)| *i);
    let runs: Vec<RunResult> = runs.into_iter().map(|(_, r)| r).collect();
    Outcome {
        params: params.clone(),
        sweep: sweep.clone(),
        seed,
        aggregates: aggregate(&runs),
        sensitivity: Vec::new(),
        runs,
        wall_s: started.elapsed().as_secs_f64(),
    }
}

/// Runs the scenario as `options` asks and writes its reports.
pub fn run(options: &RunOptions) -> Result<Summary, LabError> {
    let seeds = options.runs.unwrap_or(if options.quick { 2 } else { 10 });
    if seeds == 0 {
        return Err(LabError::InvalidOption("runs must be at least 1".into()));
    }
    let sweep = if options.quick {
        Sweep::quick(seeds)
    } else {
        Sweep::full(seeds)
    };
    let params = Params::with_overrides(&options.params)?;
    let mut outcome = run_sweep(&params, &sweep, options.seed, options.progress.as_deref());
    let started = WallClock::now();
    outcome.sensitivity = sensitivity::study(&params, seeds.min(3), options.seed);
    outcome.wall_s += started.elapsed().as_secs_f64();
    report::write(&outcome, &options.out_dir)
}
