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
pub mod report;
pub mod results;
pub mod run;
pub mod serial;
pub mod server;

use covey_proto::Duration;
use serde::{Deserialize, Serialize};

use crate::framework::{Accepts, Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::scenarios::one_hop::LinkFormat;
use crate::LabError;
pub use capacity::Capacity;
pub use results::RatePoint;
pub use run::{RunPoint, RunResult};

/// The scenario's name.
pub const NAME: &str = "server-workload";

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerWorkload;

/// The parameters of the experiment, as `--set` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Requests per run.
    pub requests: u32,
    /// Frames each node's MAC queue holds.
    pub queue: usize,
    /// How long the client's engine waits for the response to a NON request, ms.
    pub response_timeout_ms: u64,
    /// Whether the headline curve puts the PC's USB serial line to the base station (paper
    /// 002 §5, Figure 5) in front of the client's radio; the other setting runs beside it.
    #[serde(default)]
    pub serial_line: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            requests: 1000,
            queue: 8,
            response_timeout_ms: 2000,
            serial_line: false,
        }
    }
}

impl Params {
    /// How long the client's engine waits for the response to a NON request.
    pub fn response_timeout(&self) -> Duration {
        Duration::from_millis(self.response_timeout_ms)
    }
}

/// The parameter table.
const PARAMS: &[Param] = &[
    Param {
        name: "requests",
        help: "NON requests per run",
        accepts: Accepts::Integer {
            min: 1,
            max: 1_000_000,
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
        name: "response_timeout_ms",
        help: "how long the client waits for the response to a NON request",
        accepts: Accepts::Integer {
            min: 1,
            max: 3_600_000,
            unit: "ms",
        },
    },
    Param {
        name: "serial_line",
        help: "the headline curve crosses the base station's 115 200-baud serial line (the \
               other setting runs beside it)",
        accepts: Accepts::Bool,
    },
];

/// The rates and seeds of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Requests per second.
    pub rates: Vec<f64>,
    /// Seeds per rate.
    pub seeds: usize,
}

/// 10 to 200 requests/s in steps of 10; the quick sweep keeps the paper's knee and
/// flattening.
pub fn rates(quick: bool) -> Vec<f64> {
    if quick {
        vec![10.0, 50.0, 80.0, 100.0, 150.0, 200.0]
    } else {
        (1..=20).map(|k| f64::from(k) * 10.0).collect()
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
    /// The answered share per rate, with the serial line as `params.serial_line` says.
    pub points: Vec<RatePoint>,
    /// The answered share per rate with the other setting of the serial line.
    pub side_points: Vec<RatePoint>,
}

/// One point of the sweep: a rate, with or without the serial line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Requests per second.
    pub rate: f64,
    /// Whether requests and responses cross the base station's serial line.
    pub serial_line: bool,
}

impl Scenario for ServerWorkload {
    type Params = Params;
    type Point = SweepPoint;
    type RunResult = RunResult;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "Share of NON requests a server answers against the client's rate (Fig 9)",
            paper: super::TINYCOAP_PAPER,
        }
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn defaults(&self, quick: bool) -> Params {
        Params {
            requests: if quick { 300 } else { 1000 },
            ..Params::default()
        }
    }

    fn default_seeds(&self, quick: bool) -> usize {
        if quick {
            2
        } else {
            10
        }
    }

    // The headline setting first, then the other one beside it.
    fn points(&self, params: &Params, quick: bool) -> Vec<SweepPoint> {
        [params.serial_line, !params.serial_line]
            .into_iter()
            .flat_map(|serial_line| {
                rates(quick)
                    .into_iter()
                    .map(move |rate| SweepPoint { rate, serial_line })
            })
            .collect()
    }

    fn run_point(&self, params: &Params, trial: &Trial<SweepPoint>) -> Result<RunResult, LabError> {
        let point = RunPoint {
            rate: trial.point.rate,
            serial_line: trial.point.serial_line,
            seed_index: trial.seed_index,
            run_seed: trial.seed,
        };
        Ok(run::run_point(&point, params))
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<RunResult>) -> Result<Outcome, LabError> {
        let params = plan.params;
        let link = LinkFormat::default();
        let token = run::endpoint_config(params).token_length;
        let response_udp = run::response_udp_bytes(&link, token);
        let (headline, side): (Vec<RunResult>, Vec<RunResult>) = runs
            .iter()
            .cloned()
            .partition(|r| r.point.serial_line == params.serial_line);
        Ok(Outcome {
            params: params.clone(),
            sweep: Sweep {
                rates: rates(plan.quick),
                seeds: plan.seeds,
            },
            seed: plan.seed,
            capacity: Capacity::of(&link, run::request_udp_bytes(token), response_udp),
            points: results::aggregate(&headline),
            side_points: results::aggregate(&side),
            runs,
        })
    }

    fn report(&self, outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
        report::write(outcome, folder)
    }
}
