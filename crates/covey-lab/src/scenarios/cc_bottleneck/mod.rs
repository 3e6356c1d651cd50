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
use rayon::prelude::*;
use serde::Serialize;

use crate::media::HeaderModel;
use crate::scenarios::{Progress, RunOptions, Summary};
use crate::sim::splitmix64;
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
    #[serde(serialize_with = "serialize_secs")]
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
    #[serde(serialize_with = "serialize_secs")]
    pub start_spread: Duration,
    /// Virtual time after which a run is stopped.
    #[serde(serialize_with = "serialize_secs")]
    pub time_limit: Duration,
}

fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
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
    /// The defaults with `overrides` applied. Names: `queue` (packets), `max_retransmit`,
    /// `rate` (bit/s), `delay_ms`, `mtu` (bytes), `header` (`ipv6`, `ipv4`, `6lowpan`),
    /// `exchanges`, `start_spread_ms`.
    pub fn with_overrides(overrides: &[(String, String)]) -> Result<Params, LabError> {
        let mut p = Params::default();
        for (name, value) in overrides {
            let bad =
                || LabError::InvalidOption(format!("{NAME}: bad value `{value}` for `{name}`"));
            let int = || value.trim().parse::<u64>().map_err(|_| bad());
            match name.as_str() {
                "queue" => p.queue_packets = usize::try_from(int()?).map_err(|_| bad())?,
                "max_retransmit" => p.max_retransmit = u8::try_from(int()?).map_err(|_| bad())?,
                "rate" => p.rate_bps = int()?.max(1),
                "delay_ms" => p.one_way_delay = Duration::from_millis(int()?),
                "mtu" => p.mtu = usize::try_from(int()?).map_err(|_| bad())?.max(16),
                "exchanges" => {
                    p.exchanges_per_client = u32::try_from(int()?).map_err(|_| bad())?.max(1)
                }
                "start_spread_ms" => p.start_spread = Duration::from_millis(int()?),
                "header" => {
                    p.header = match value.trim().to_ascii_lowercase().as_str() {
                        "ipv6" => HeaderModel::Ipv6Udp,
                        "ipv4" => HeaderModel::Ipv4Udp,
                        "6lowpan" => HeaderModel::SixLowpanIphcNhc,
                        _ => return Err(bad()),
                    }
                }
                _ => {
                    return Err(LabError::InvalidOption(format!(
                        "{NAME} has no parameter `{name}` (queue, max_retransmit, rate, \
                         delay_ms, mtu, header, exchanges, start_spread_ms)"
                    )))
                }
            }
        }
        Ok(p)
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
