//! `server-workload`: the share of requests a server answers as the client's rate grows
//! (Ludovici, Moreno, Calveras: TinyCoAP, JSAN 2013, §6.4, Fig 9; seed 002, spec
//! `lab-experiments.md` §6).
//!
//! Method, as the paper's: a client one IEEE 802.15.4 hop from the server sends NON GETs at a
//! fixed rate (10 to 200 requests/s); each response fills one frame (127-byte PSDU); the
//! metric is the share of requests answered. The only reliability is the MAC's (3 retries).
//!
//! What limits it is modelled, not fitted: unslotted CSMA/CA with the standard's backoffs,
//! CCA and RX/TX turnarounds, link-layer ACKs, collisions when both nodes find the channel
//! idle at once, and each node's bounded MAC queue, where a request or response that finds it
//! full is dropped before it leaves the node (the paper's "sending buffer"). [`capacity`]
//! gives the closed-form ceiling from the same timeline.
//!
//! Modelling choices the paper leaves open, stated here: 8 frames per MAC queue (the medium's
//! default; the paper gives no size), requests per run 1000 (300 in the quick run), NSTART
//! and PROBING_RATE out of the way (TinyCoAP implements neither, and the rate is the
//! experiment's input), a NON response timeout of 2 s, no processing time at the server.

pub mod capacity;
pub mod client;
pub mod node;
pub mod paper;
mod parameters;
pub mod report;
pub mod results;
pub mod run;
pub mod server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant as WallClock;

use covey_proto::Duration;
use covey_sim::sim::splitmix64;
use rayon::prelude::*;
use serde::Serialize;

use crate::scenarios::one_hop::LinkFormat;
use crate::scenarios::{Progress, RunOptions, Summary};
use crate::LabError;
pub use capacity::Capacity;
pub use results::RatePoint;
pub use run::{RunPoint, RunResult};

/// The scenario's name.
pub const NAME: &str = "server-workload";

/// The fixed parameters of the experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Params {
    /// Requests per run.
    pub requests: u32,
    /// Frames each node's MAC queue holds.
    pub queue_frames: usize,
    /// How long the client's engine waits for the response to a NON request.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub response_timeout: Duration,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            requests: 1000,
            queue_frames: 8,
            response_timeout: Duration::from_secs(2),
        }
    }
}

impl Params {
    /// The defaults with `overrides` applied. Names: `requests` (per run), `queue` (frames),
    /// `response_timeout_ms`.
    pub fn with_overrides(overrides: &[(String, String)]) -> Result<Params, LabError> {
        let mut p = Params::default();
        for (name, value) in overrides {
            let bad =
                || LabError::InvalidOption(format!("{NAME}: bad value `{value}` for `{name}`"));
            let int = || value.trim().parse::<u64>().map_err(|_| bad());
            match name.as_str() {
                "requests" => {
                    p.requests = u32::try_from(int()?)
                        .map_err(|_| bad())?
                        .clamp(1, 1_000_000)
                }
                "queue" => {
                    p.queue_frames = usize::try_from(int()?).map_err(|_| bad())?.clamp(1, 1024)
                }
                "response_timeout_ms" => {
                    p.response_timeout = Duration::from_millis(int()?.clamp(1, 3_600_000))
                }
                _ => {
                    return Err(LabError::InvalidOption(format!(
                        "{NAME} has no parameter `{name}` (requests, queue, response_timeout_ms)"
                    )))
                }
            }
        }
        Ok(p)
    }
}

/// The rates and seeds of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Requests per second.
    pub rates: Vec<f64>,
    /// Seeds per rate.
    pub seeds: usize,
}

impl Sweep {
    /// 10 to 200 requests/s in steps of 10.
    pub fn full(seeds: usize) -> Sweep {
        Sweep {
            rates: (1..=20).map(|k| f64::from(k) * 10.0).collect(),
            seeds,
        }
    }

    /// A CI-sized sweep around the paper's knee and flattening.
    pub fn quick(seeds: usize) -> Sweep {
        Sweep {
            rates: vec![10.0, 50.0, 80.0, 100.0, 150.0, 200.0],
            seeds,
        }
    }

    /// Every run of the sweep; seed k is the same for every rate.
    pub fn points(&self, base_seed: u64) -> Vec<RunPoint> {
        let mut points = Vec::new();
        for &rate in &self.rates {
            for seed_index in 0..self.seeds {
                points.push(RunPoint {
                    rate,
                    seed_index,
                    run_seed: splitmix64(base_seed.wrapping_add(seed_index as u64)),
                });
            }
        }
        points
    }
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
    /// The closed-form ceiling of the hop.
    pub capacity: Capacity,
    /// Every run, in sweep order.
    pub runs: Vec<RunResult>,
    /// The answered share per rate.
    pub points: Vec<RatePoint>,
    /// Wall-clock seconds the sweep took.
    pub wall_s: f64,
}

/// Runs `sweep` with `params` in parallel, in a deterministic order of results.
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
    let runs: Vec<RunResult> = points
        .par_iter()
        .map(|point| {
            let r = run::run_point(point, params);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = progress {
                p(Progress { done: n, total });
            }
            r
        })
        .collect();
    let link = LinkFormat::default();
    let token = run::endpoint_config(params).token_length;
    let response_udp = run::response_payload_bytes(&link, token) + 4 + token + 1;
    Outcome {
        params: params.clone(),
        sweep: sweep.clone(),
        seed,
        capacity: Capacity::of(&link, run::request_udp_bytes(token), response_udp),
        points: results::aggregate(&runs),
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
    let mut params = Params::with_overrides(&options.params)?;
    if options.quick && !options.params.iter().any(|(k, _)| k == "requests") {
        params.requests = 300;
    }
    let sweep = if options.quick {
        Sweep::quick(seeds)
    } else {
        Sweep::full(seeds)
    };
    let outcome = run_sweep(&params, &sweep, options.seed, options.progress.as_deref());
    report::write(&outcome, &options.out_dir)
}
