//! `fading-goodput`: CoAP's reliability under Rayleigh fading (Ludovici, Moreno, Calveras:
//! TinyCoAP, JSAN 2013, §6.5, Table 4 and Fig 10; seed 002, spec `lab-experiments.md` §5).
//!
//! Method, as the paper's: a client fetches a resource of 10 to 1200 bytes from a server one
//! IEEE 802.15.4 hop away (127-byte PSDU, 133 bytes with the PHY header; 6LoWPAN fragments,
//! at most 12), with CON GETs; the initial timeout is fixed at 1 s (ACK_RANDOM_FACTOR 1.0,
//! no randomisation) and MAX_RETRANSMIT is 4. Each point runs 100 consecutive transactions;
//! goodput is the payload received over the time they took. SNR 1, 1.5, 2 and 2.5 dB.
//! Every model, SNR and payload of a seed uses the same random sequences (the paper used
//! one sequence for every stack).
//!
//! Errors come from one of three models (see [`error_model`]): the paper's (its
//! application-layer rate C_f drawn per datagram at the receiver's UDP layer, the radio
//! itself clean), independent fragments with the paper's per-frame P on the radio, and block
//! Rayleigh fading of each frame from the 802.15.4 bit error rate. Table 4 is printed from
//! each model's closed form and measured by Monte Carlo on the same link ([`loss_probe`]).
//!
//! Modelling choices the paper leaves open, stated here: each node's MAC queue holds 12 frames
//! (Blip's fragment limit, so a whole datagram fits); the server sends every payload up to
//! 1200 bytes in one datagram as TinyCoAP did (`Config::single_message_payload`; RFC 7959
//! would cap a block at 1024 bytes); the server answers at once (no processing time).

pub mod client;
pub mod error_model;
pub mod expected;
pub mod loss_probe;
pub mod node;
pub mod paper;
mod parameters;
pub mod report;
pub mod results;
pub mod run;
pub mod server;
pub mod udp_discard;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant as WallClock;

use covey_proto::Duration;
use covey_sim::sim::splitmix64;
use rayon::prelude::*;
use serde::Serialize;

use crate::scenarios::{Progress, RunOptions, Summary};
use crate::LabError;
pub use error_model::ErrorModel;
pub use loss_probe::LossCell;
pub use results::GoodputPoint;
pub use run::{RunPoint, RunResult};

/// The scenario's name.
pub const NAME: &str = "fading-goodput";

/// The fixed parameters of the experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Params {
    /// Consecutive transactions per run.
    pub transactions: u32,
    /// ACK_TIMEOUT, the fixed initial retransmission timeout.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub ack_timeout: Duration,
    /// MAX_RETRANSMIT.
    pub max_retransmit: u8,
    /// Frames each node's MAC queue holds.
    pub queue_frames: usize,
    /// Datagrams per Table 4 cell in the Monte-Carlo measurement.
    pub probe_datagrams: u64,
    /// Virtual time after which a run is stopped.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub time_limit: Duration,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            transactions: 100,
            ack_timeout: Duration::from_secs(1),
            max_retransmit: 4,
            queue_frames: 12,
            probe_datagrams: 4000,
            time_limit: Duration::from_secs(4 * 3600),
        }
    }
}

impl Params {
    /// The defaults with `overrides` applied. Names: `transactions`, `ack_timeout_ms`,
    /// `max_retransmit`, `queue` (frames), `probe` (datagrams per Table 4 cell), each clamped
    /// to a range a run can finish in; `models` (comma-separated error models) is read by
    /// [`models_from`].
    pub fn with_overrides(overrides: &[(String, String)]) -> Result<Params, LabError> {
        let mut p = Params::default();
        for (name, value) in overrides {
            let bad =
                || LabError::InvalidOption(format!("{NAME}: bad value `{value}` for `{name}`"));
            let int = || value.trim().parse::<u64>().map_err(|_| bad());
            match name.as_str() {
                "transactions" => {
                    p.transactions = u32::try_from(int()?).map_err(|_| bad())?.clamp(1, 100_000)
                }
                "ack_timeout_ms" => p.ack_timeout = Duration::from_millis(int()?.clamp(1, 60_000)),
                "max_retransmit" => {
                    p.max_retransmit = u8::try_from(int()?).map_err(|_| bad())?.min(20)
                }
                "queue" => {
                    p.queue_frames = usize::try_from(int()?).map_err(|_| bad())?.clamp(1, 1024)
                }
                "probe" => p.probe_datagrams = int()?.min(1_000_000),
                "models" => {}
                _ => {
                    return Err(LabError::InvalidOption(format!(
                        "{NAME} has no parameter `{name}` (models, transactions, \
                         ack_timeout_ms, max_retransmit, queue, probe)"
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
    /// Error models.
    pub models: Vec<ErrorModel>,
    /// SNRs in dB.
    pub snrs_db: Vec<f64>,
    /// Payload sizes in bytes.
    pub payloads: Vec<usize>,
    /// Seeds per point.
    pub seeds: usize,
}

impl Sweep {
    /// The paper's sweep: 10 to 1200 bytes in steps of 50, four SNRs.
    pub fn full(models: Vec<ErrorModel>, seeds: usize) -> Sweep {
        Sweep {
            models,
            snrs_db: vec![1.0, 1.5, 2.0, 2.5],
            payloads: paper::payloads(),
            seeds,
        }
    }

    /// A CI-sized sweep: the four SNRs at six payloads from one to twelve fragments.
    pub fn quick(models: Vec<ErrorModel>, seeds: usize) -> Sweep {
        Sweep {
            payloads: vec![10, 110, 310, 610, 1010, 1200],
            ..Sweep::full(models, seeds)
        }
    }

    /// Every run of the sweep; seed k is the same for every point.
    pub fn points(&self, base_seed: u64) -> Vec<RunPoint> {
        let mut points = Vec::new();
        for &model in &self.models {
            for &snr_db in &self.snrs_db {
                for &payload in &self.payloads {
                    for seed_index in 0..self.seeds {
                        points.push(RunPoint {
                            model,
                            snr_db,
                            payload,
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

/// The error models named in `params` (`models=paper,independent`), or all of them.
pub fn models_from(params: &[(String, String)]) -> Result<Vec<ErrorModel>, LabError> {
    let Some((_, value)) = params.iter().rev().find(|(k, _)| k == "models") else {
        return Ok(ErrorModel::ALL.to_vec());
    };
    let mut models = Vec::new();
    for name in value.split(',').filter(|s| !s.trim().is_empty()) {
        let model = ErrorModel::from_name(name).ok_or_else(|| {
            LabError::InvalidOption(format!(
                "{NAME}: unknown error model `{name}` (paper, independent, rayleigh)"
            ))
        })?;
        if !models.contains(&model) {
            models.push(model);
        }
    }
    if models.is_empty() {
        return Err(LabError::InvalidOption(format!("{NAME}: no error model")));
    }
    Ok(models)
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
    /// Goodput per (model, SNR, payload).
    pub points: Vec<GoodputPoint>,
    /// Table 4 per model: closed form and Monte Carlo, f = 1..=12 at each SNR.
    pub table_4: Vec<LossCell>,
    /// Wall-clock seconds the sweep took.
    pub wall_s: f64,
}

/// One task of a sweep: a goodput run or a Table 4 cell.
#[derive(Debug, Clone, Copy)]
enum Task {
    Run(RunPoint),
    Cell(ErrorModel, f64, usize),
}

/// What a task produced.
#[derive(Debug)]
enum Done {
    Run(Box<RunResult>),
    Cell(LossCell),
}

/// Runs `sweep` and the Table 4 measurement with `params` in parallel, in a deterministic
/// order of results whatever the scheduling.
pub fn run_sweep(
    params: &Params,
    sweep: &Sweep,
    seed: u64,
    progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> Outcome {
    let started = WallClock::now();
    let mut tasks: Vec<Task> = Vec::new();
    for &model in &sweep.models {
        for &snr in &sweep.snrs_db {
            for f in 1..=12 {
                tasks.push(Task::Cell(model, snr, f));
            }
        }
    }
    tasks.extend(sweep.points(seed).into_iter().map(Task::Run));
    let total = tasks.len();
    let done = AtomicUsize::new(0);
    let probe_seed = splitmix64(seed ^ 0x7461_626c_6534);
    let results: Vec<Done> = tasks
        .par_iter()
        .map(|task| {
            let out = match *task {
                Task::Run(point) => Done::Run(Box::new(run::run_point(&point, params))),
                Task::Cell(model, snr, f) => Done::Cell(loss_probe::measure(
                    model,
                    snr,
                    f,
                    params.probe_datagrams,
                    params,
                    probe_seed,
                )),
            };
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = progress {
                p(Progress { done: n, total });
            }
            out
        })
        .collect();
    let mut runs = Vec::new();
    let mut table_4 = Vec::new();
    for r in results {
        match r {
            Done::Run(r) => runs.push(*r),
            Done::Cell(c) => table_4.push(c),
        }
    }
    let token_length = run::endpoint_config(params).token_length;
    let mut points = results::aggregate(&runs);
    for p in &mut points {
        p.goodput_closed_form =
            expected::expected_goodput(p.model, p.snr_db, p.payload, params, token_length);
    }
    Outcome {
        params: params.clone(),
        sweep: sweep.clone(),
        seed,
        points,
        runs,
        table_4,
        wall_s: started.elapsed().as_secs_f64(),
    }
}

/// Runs the scenario as `options` asks and writes its reports.
pub fn run(options: &RunOptions) -> Result<Summary, LabError> {
    let seeds = options.runs.unwrap_or(if options.quick { 2 } else { 10 });
    if seeds == 0 {
        return Err(LabError::InvalidOption("runs must be at least 1".into()));
    }
    let models = models_from(&options.params)?;
    let mut params = Params::with_overrides(&options.params)?;
    if options.quick && !options.params.iter().any(|(k, _)| k == "probe") {
        params.probe_datagrams = 1000;
    }
    let sweep = if options.quick {
        Sweep::quick(models, seeds)
    } else {
        Sweep::full(models, seeds)
    };
    let outcome = run_sweep(&params, &sweep, options.seed, options.progress.as_deref());
    report::write(&outcome, &options.out_dir)
}
