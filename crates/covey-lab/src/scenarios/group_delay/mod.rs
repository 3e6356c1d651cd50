//! `group-delay`: the delay D between the Entity Manager's unicast requests (seeds 000/001,
//! §5.2.1, Figs 7–9, Table 7; spec `lab-experiments.md` §2).
//!
//! Method, as the paper's: a client asks a unicast CON entity of G members behind one
//! gateway (the RPL trees of Table 7) 50 times per point; the EM sends its requests to the
//! members D apart, for D in {0, 25, 50, 75, 100, 150, 200, 300, 500} ms and `delay=auto`.
//! The metric is the entity response time (the client's query to the combined reply), with
//! member and group reliability. No interference.
//!
//! Nothing is fitted: the D = 0 penalty comes from what the medium models, G requests
//! leaving the gateway back to back, the replies of the members they reach meeting at the
//! gateway (collisions, hidden terminals, MAC retries given up), the gateway's 8-frame MAC
//! queue overflowing for large G, and CoAP's retransmissions after ACK_TIMEOUT repairing
//! what was lost. For `delay=auto` the EM computes D from the reply sizes it measured; the
//! report sets that D beside the swept optimum of each G.

pub mod paper;
pub mod report;

use covey_group::delay::auto_delay;
use covey_proto::Duration;
use serde::{Deserialize, Serialize};

use super::group::sweep_outcome::{PointRun, SweepOutcome};
use super::group::testbed::{addr, sensor_uris};
use super::group::{
    Creation, GroupParams, GroupPoint, HopProfile, QueryPlan, RunOutcome, Testbed, TestbedSpec,
};
use crate::framework::{Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::LabError;

/// The scenario's name.
pub const NAME: &str = "group-delay";

/// The entity's name.
const ENTITY: &str = "room";

/// The fixed parameters of the experiment.
pub type Params = GroupParams;

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupDelay;

/// The delay the EM inserts: a number of ms, or its own `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DelayChoice {
    /// A fixed delay, ms.
    Millis(u64),
    /// `delay=auto`.
    Auto,
}

/// The sizes, delays and seeds of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Group sizes.
    pub sizes: Vec<usize>,
    /// Fixed delays, ms.
    pub delays_ms: Vec<u64>,
    /// Whether `delay=auto` is run too.
    pub auto: bool,
    /// Seeds per point.
    pub seeds: usize,
}

impl Sweep {
    /// The paper's sweep: Table 7's group sizes, nine delays, and `auto`.
    pub fn full(seeds: usize) -> Sweep {
        Sweep {
            sizes: vec![5, 10, 20, 29, 40],
            delays_ms: vec![0, 25, 50, 75, 100, 150, 200, 300, 500],
            auto: true,
            seeds,
        }
    }

    /// A CI-sized sweep.
    pub fn quick(seeds: usize) -> Sweep {
        Sweep {
            sizes: vec![5, 10],
            delays_ms: vec![0, 50, 100, 300],
            auto: true,
            seeds,
        }
    }

    /// The quick or the full sweep.
    pub fn of(quick: bool, seeds: usize) -> Sweep {
        if quick {
            Sweep::quick(seeds)
        } else {
            Sweep::full(seeds)
        }
    }

    /// Every point, in report order: each G at each delay, then `auto`.
    pub fn points(&self) -> Vec<SweepPoint> {
        let mut delays: Vec<DelayChoice> = self
            .delays_ms
            .iter()
            .map(|&d| DelayChoice::Millis(d))
            .collect();
        if self.auto {
            delays.push(DelayChoice::Auto);
        }
        self.sizes
            .iter()
            .flat_map(|&members| {
                delays
                    .iter()
                    .map(move |&delay| SweepPoint { members, delay })
            })
            .collect()
    }
}

/// One point of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SweepPoint {
    /// G.
    pub members: usize,
    /// D.
    pub delay: DelayChoice,
}

/// One run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunPoint {
    /// G.
    pub members: usize,
    /// D.
    pub delay: DelayChoice,
    /// Which seed of the point.
    pub seed_index: usize,
    /// The run seed.
    pub run_seed: u64,
}

/// One run's result: the outcome, and for `auto` the delay the EM computed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The run.
    pub point: RunPoint,
    /// What it measured.
    pub outcome: RunOutcome,
    /// For `delay=auto`: the EM's D at the end of the run, ms.
    pub auto_delay_ms: Option<f64>,
}

/// Runs `point`.
pub fn run_point(point: &RunPoint, params: &Params) -> Result<RunResult, LabError> {
    let profile = HopProfile::for_group(point.members).ok_or_else(|| {
        LabError::InvalidOption(format!("{NAME}: no hop profile for G = {}", point.members))
    })?;
    let spec = TestbedSpec {
        islands: vec![profile],
        queue_frames: params.queue,
        ack_timeout: params.ack_timeout(),
        wifi: None,
        reception: params.reception.model(),
        run_seed: point.run_seed,
    };
    let delay = match point.delay {
        DelayChoice::Millis(ms) => serde_json::json!(ms),
        DelayChoice::Auto => serde_json::json!("auto"),
    };
    let mut testbed = Testbed::build(&spec, |gateways, members| {
        let body = serde_json::json!({
            "name": ENTITY,
            "er": sensor_uris(&members[0]),
            "delay": delay,
        });
        QueryPlan {
            creations: vec![Creation {
                em: addr(gateways[0]),
                profile: body.to_string(),
            }],
            em: addr(gateways[0]),
            path: vec!["e".into(), ENTITY.into()],
            query: Vec::new(),
            queries: params.queries,
            gap: params.gap(),
        }
    })?;
    testbed.run(Duration::from_secs(u64::from(params.queries) * 200 + 3600));
    let outcome = RunOutcome::of(&testbed, point.members);
    let auto_delay_ms = (point.delay == DelayChoice::Auto)
        .then(|| {
            let em = testbed.ems.first()?.borrow();
            let e = em.entity(ENTITY)?;
            let d = auto_delay(
                point.members,
                e.response_size.value(),
                em.config().target_rate,
            );
            Some(d.as_nanos() as f64 / 1e6)
        })
        .flatten();
    Ok(RunResult {
        point: *point,
        outcome,
        auto_delay_ms,
    })
}

/// Everything a sweep produced; per (G, D) point `x` is D in ms (for `auto`, the EM's mean
/// D over the point's runs) and the variant `fixed` or `auto`.
pub type Outcome = SweepOutcome<Sweep, RunResult>;

impl PointRun for RunResult {
    fn key(&self) -> (usize, f64, String) {
        match self.point.delay {
            DelayChoice::Millis(ms) => (self.point.members, ms as f64, "fixed".into()),
            DelayChoice::Auto => (self.point.members, f64::NAN, "auto".into()),
        }
    }

    fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }
}

impl Outcome {
    /// The merged point for G = `members` at fixed D = `delay_ms`.
    pub fn at(&self, members: usize, delay_ms: u64) -> Option<&GroupPoint> {
        self.points
            .iter()
            .find(|p| p.members == members && p.variant == "fixed" && p.x == delay_ms as f64)
    }

    /// The merged `delay=auto` point for G = `members`.
    pub fn auto(&self, members: usize) -> Option<&GroupPoint> {
        self.points
            .iter()
            .find(|p| p.members == members && p.variant == "auto")
    }

    /// The fixed delay with the lowest mean response time for G = `members`.
    pub fn optimum(&self, members: usize) -> Option<&GroupPoint> {
        self.points
            .iter()
            .filter(|p| p.members == members && p.variant == "fixed")
            .filter(|p| p.outcome.mean_response_s().is_finite())
            .min_by(|a, b| {
                a.outcome
                    .mean_response_s()
                    .total_cmp(&b.outcome.mean_response_s())
            })
    }

    /// The mean of the EM's `auto` delays for G = `members`, ms.
    pub fn auto_delay_ms(&self, members: usize) -> Option<f64> {
        let ds: Vec<f64> = self
            .runs
            .iter()
            .filter(|r| r.point.members == members)
            .filter_map(|r| r.auto_delay_ms)
            .collect();
        crate::stats::mean(&ds)
    }
}

impl Scenario for GroupDelay {
    type Params = Params;
    type Point = SweepPoint;
    type RunResult = RunResult;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "Entity response time against the delay between the EM's unicast requests \
                    (Figs 7-9, Table 7)",
            paper: super::GROUP_PAPER,
        }
    }

    fn params(&self) -> &'static [Param] {
        super::group::PARAMS
    }

    fn defaults(&self, quick: bool) -> Params {
        Params::defaults(quick)
    }

    fn default_seeds(&self, _quick: bool) -> usize {
        super::group::DEFAULT_SEEDS
    }

    fn points(&self, _: &Params, quick: bool) -> Vec<SweepPoint> {
        // The seeds per point do not change the points.
        Sweep::of(quick, super::group::DEFAULT_SEEDS).points()
    }

    fn run_point(&self, params: &Params, trial: &Trial<SweepPoint>) -> Result<RunResult, LabError> {
        let point = RunPoint {
            members: trial.point.members,
            delay: trial.point.delay,
            seed_index: trial.seed_index,
            run_seed: trial.seed,
        };
        run_point(&point, params)
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<RunResult>) -> Result<Outcome, LabError> {
        let sweep = Sweep::of(plan.quick, plan.seeds);
        let mut outcome = Outcome::new(plan.params, sweep, plan.seed, runs);
        // An `auto` point is placed at the EM's mean D over its runs.
        let auto: Vec<(usize, Option<f64>)> = outcome
            .points
            .iter()
            .filter(|p| p.variant == "auto")
            .map(|p| (p.members, outcome.auto_delay_ms(p.members)))
            .collect();
        for (members, d) in auto {
            if let Some(p) = outcome
                .points
                .iter_mut()
                .find(|p| p.variant == "auto" && p.members == members)
            {
                p.x = d.unwrap_or(f64::NAN);
            }
        }
        Ok(outcome)
    }

    fn report(&self, outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
        report::write(outcome, folder)
    }
}
