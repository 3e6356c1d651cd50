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
pub mod report;
pub mod results;
pub mod run;
pub mod server;
pub mod udp_discard;

use covey_proto::Duration;
use covey_sim::sim::splitmix64;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::framework::{Accepts, Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::LabError;
pub use error_model::ErrorModel;
pub use loss_probe::LossCell;
pub use results::GoodputPoint;
pub use run::{RunPoint, RunResult};

/// The scenario's name.
pub const NAME: &str = "fading-goodput";

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct FadingGoodput;

/// The parameters of the experiment, as `--set` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// The error models to sweep, in report order.
    pub models: Vec<ErrorModel>,
    /// Consecutive transactions per run.
    pub transactions: u32,
    /// ACK_TIMEOUT, the fixed initial retransmission timeout, ms.
    pub ack_timeout_ms: u64,
    /// MAX_RETRANSMIT.
    pub max_retransmit: u8,
    /// Frames each node's MAC queue holds.
    pub queue: usize,
    /// Datagrams per Table 4 cell in the Monte-Carlo measurement.
    pub probe: u64,
    /// Virtual time after which a run is stopped, ms.
    pub time_limit_ms: u64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            models: ErrorModel::ALL.to_vec(),
            transactions: 100,
            ack_timeout_ms: 1000,
            max_retransmit: 4,
            queue: 12,
            probe: 4000,
            time_limit_ms: 4 * 3600 * 1000,
        }
    }
}

impl Params {
    /// ACK_TIMEOUT, the fixed initial retransmission timeout.
    pub fn ack_timeout(&self) -> Duration {
        Duration::from_millis(self.ack_timeout_ms)
    }

    /// Virtual time after which a run is stopped.
    pub fn time_limit(&self) -> Duration {
        Duration::from_millis(self.time_limit_ms)
    }
}

/// The parameter table.
const PARAMS: &[Param] = &[
    Param {
        name: "models",
        help: "the error models to sweep",
        accepts: Accepts::ListOf(&Accepts::OneOf(ErrorModel::NAMES)),
    },
    Param {
        name: "transactions",
        help: "consecutive CON GETs per run",
        accepts: Accepts::Integer {
            min: 1,
            max: 100_000,
            unit: "",
        },
    },
    Param {
        name: "ack_timeout_ms",
        help: "ACK_TIMEOUT, the fixed initial retransmission timeout",
        accepts: Accepts::Integer {
            min: 1,
            max: 60_000,
            unit: "ms",
        },
    },
    Param {
        name: "max_retransmit",
        help: "MAX_RETRANSMIT",
        accepts: Accepts::Integer {
            min: 0,
            max: 20,
            unit: "",
        },
    },
    Param {
        name: "queue",
        help: "frames each node's MAC queue holds",
        accepts: Accepts::Integer {
            min: 1,
            max: 1024,
            unit: "frames",
        },
    },
    Param {
        name: "probe",
        help: "datagrams per Table 4 cell in the Monte-Carlo measurement",
        accepts: Accepts::Integer {
            min: 0,
            max: 1_000_000,
            unit: "datagrams",
        },
    },
    Param {
        name: "time_limit_ms",
        help: "virtual time after which a run is stopped",
        accepts: Accepts::Integer {
            min: 1,
            max: 7 * 24 * 3_600_000,
            unit: "ms",
        },
    },
];

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

    /// The quick or the full sweep of `models`.
    pub fn of(quick: bool, models: Vec<ErrorModel>, seeds: usize) -> Sweep {
        if quick {
            Sweep::quick(models, seeds)
        } else {
            Sweep::full(models, seeds)
        }
    }

    /// The sweep's points: models, then SNRs, then payloads.
    pub fn points(&self) -> Vec<Point> {
        let mut points = Vec::new();
        for &model in &self.models {
            for &snr_db in &self.snrs_db {
                for &payload in &self.payloads {
                    points.push(Point {
                        model,
                        snr_db,
                        payload,
                    });
                }
            }
        }
        points
    }
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// How traffic is corrupted.
    pub model: ErrorModel,
    /// The SNR in dB.
    pub snr_db: f64,
    /// Bytes of the representation fetched.
    pub payload: usize,
}

/// The Table 4 measurement's seed: one for every cell, from the base seed alone (the probe
/// is not a seeded run of a point, so the aggregate makes it).
pub fn probe_seed(base_seed: u64) -> u64 {
    splitmix64(base_seed ^ 0x7461_626c_6534)
}

/// Table 4 under every model of `sweep`, closed form and Monte Carlo, f = 1..=12 at each
/// SNR, measured with `params.probe` datagrams per cell.
///
/// The cells are measured in parallel: together they take longer than the quick sweep's
/// runs, and the aggregate (where they belong, seeded by the base seed alone) is one
/// thread. Each cell is its own deterministic computation, collected in order.
pub fn table_4(params: &Params, sweep: &Sweep, base_seed: u64) -> Vec<LossCell> {
    let seed = probe_seed(base_seed);
    let mut cells = Vec::new();
    for &model in &sweep.models {
        for &snr in &sweep.snrs_db {
            for f in 1..=12 {
                cells.push((model, snr, f));
            }
        }
    }
    cells
        .into_par_iter()
        .map(|(model, snr, f)| loss_probe::measure(model, snr, f, params.probe, params, seed))
        .collect()
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
}

impl Scenario for FadingGoodput {
    type Params = Params;
    type Point = Point;
    type RunResult = RunResult;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "CoAP goodput over one 802.15.4 hop under Rayleigh fading (Table 4, Fig 10)",
            paper: super::TINYCOAP_PAPER,
        }
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    /// The paper's parameters; the quick sweep measures Table 4 with 1000 datagrams a cell.
    fn defaults(&self, quick: bool) -> Params {
        Params {
            probe: if quick { 1000 } else { 4000 },
            ..Params::default()
        }
    }

    fn check(&self, params: &Params) -> Result<(), LabError> {
        for (i, model) in params.models.iter().enumerate() {
            if params.models[..i].contains(model) {
                return Err(LabError::InvalidOption(format!(
                    "{NAME}: `models` names `{}` twice",
                    model.name()
                )));
            }
        }
        Ok(())
    }

    fn default_seeds(&self, quick: bool) -> usize {
        if quick {
            2
        } else {
            10
        }
    }

    fn points(&self, params: &Params, quick: bool) -> Vec<Point> {
        Sweep::of(quick, params.models.clone(), 0).points()
    }

    fn run_point(&self, params: &Params, trial: &Trial<Point>) -> Result<RunResult, LabError> {
        let point = RunPoint {
            model: trial.point.model,
            snr_db: trial.point.snr_db,
            payload: trial.point.payload,
            seed_index: trial.seed_index,
            run_seed: trial.seed,
        };
        Ok(run::run_point(&point, params))
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<RunResult>) -> Result<Outcome, LabError> {
        let params = plan.params;
        let sweep = Sweep::of(plan.quick, params.models.clone(), plan.seeds);
        let token_length = run::endpoint_config(params).token_length;
        let mut points = results::aggregate(&runs);
        for p in &mut points {
            p.goodput_closed_form =
                expected::expected_goodput(p.model, p.snr_db, p.payload, params, token_length);
        }
        Ok(Outcome {
            params: params.clone(),
            table_4: table_4(params, &sweep, plan.seed),
            sweep,
            seed: plan.seed,
            points,
            runs,
        })
    }

    fn report(&self, outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
        report::write(outcome, folder)
    }
}
