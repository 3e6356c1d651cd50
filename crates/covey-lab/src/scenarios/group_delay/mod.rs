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
use covey_sim::sim::splitmix64;
use serde::Serialize;

use super::group::sweep_outcome::{self, PointRun, SweepOutcome};
use super::group::testbed::{addr, sensor_uris};
use super::group::{
    Creation, GroupParams, GroupPoint, HopProfile, QueryPlan, RunOutcome, Testbed, TestbedSpec,
};
use crate::scenarios::{RunOptions, Summary};
use crate::LabError;

/// The scenario's name.
pub const NAME: &str = "group-delay";

/// The entity's name.
const ENTITY: &str = "room";

/// The fixed parameters of the experiment.
pub type Params = GroupParams;

/// The delay the EM inserts: a number of ms, or its own `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

    /// Every run: (G, delay, seed index, run seed).
    pub fn points(&self, base_seed: u64) -> Vec<RunPoint> {
        let mut delays: Vec<DelayChoice> = self
            .delays_ms
            .iter()
            .map(|&d| DelayChoice::Millis(d))
            .collect();
        if self.auto {
            delays.push(DelayChoice::Auto);
        }
        let mut points = Vec::new();
        for &members in &self.sizes {
            for &delay in &delays {
                for seed_index in 0..self.seeds {
                    points.push(RunPoint {
                        members,
                        delay,
                        seed_index,
                        run_seed: splitmix64(base_seed.wrapping_add(seed_index as u64)),
                    });
                }
            }
        }
        points
    }
}

/// One run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
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
        queue_frames: params.queue_frames,
        ack_timeout: params.ack_timeout,
        wifi: None,
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
            gap: params.gap,
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
        (!ds.is_empty()).then(|| ds.iter().sum::<f64>() / ds.len() as f64)
    }
}

/// Runs `sweep` with `params`, in parallel.
pub fn run_sweep(
    params: &Params,
    sweep: &Sweep,
    seed: u64,
    progress: Option<&(dyn Fn(crate::scenarios::Progress) + Send + Sync)>,
) -> Result<Outcome, LabError> {
    let points = sweep.points(seed);
    let run = |p: &RunPoint| run_point(p, params);
    let mut outcome = sweep_outcome::run_sweep(params, sweep, seed, &points, run, progress)?;
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

/// Runs the scenario as `options` asks and writes its reports.
pub fn run(options: &RunOptions) -> Result<Summary, LabError> {
    let (params, seeds) = GroupParams::for_run(NAME, options)?;
    let sweep = if options.quick {
        Sweep::quick(seeds)
    } else {
        Sweep::full(seeds)
    };
    let outcome = run_sweep(&params, &sweep, options.seed, options.progress.as_deref())?;
    report::write(&outcome, &options.out_dir)
}
