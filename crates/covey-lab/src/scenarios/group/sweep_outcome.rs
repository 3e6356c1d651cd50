//! What a group scenario's sweep produced, and how it is run: every point in parallel, then
//! the runs of each point merged.

use std::time::Instant as WallClock;

use serde::Serialize;

use super::outcome::{GroupPoint, RunOutcome};
use super::parallel::run_all;
use super::params::GroupParams;
use crate::scenarios::Progress;
use crate::LabError;

/// Everything a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct SweepOutcome<S, R> {
    /// The experiment's parameters.
    pub params: GroupParams,
    /// The sweep.
    pub sweep: S,
    /// The base seed.
    pub seed: u64,
    /// Every run, in sweep order.
    pub runs: Vec<R>,
    /// Per point: its runs merged.
    pub points: Vec<GroupPoint>,
    /// Wall-clock seconds the sweep took.
    pub wall_s: f64,
}

/// A run that belongs to a point of a sweep.
pub trait PointRun {
    /// The point's members, swept value and variant.
    fn key(&self) -> (usize, f64, String);
    /// What the run measured.
    fn outcome(&self) -> &RunOutcome;
}

/// Runs `run` on every point in parallel and merges the runs of each point.
pub fn run_sweep<S: Clone, P: Sync, R: PointRun + Send>(
    params: &GroupParams,
    sweep: &S,
    seed: u64,
    points: &[P],
    run: impl Fn(&P) -> Result<R, LabError> + Sync,
    progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> Result<SweepOutcome<S, R>, LabError> {
    let started = WallClock::now();
    let runs = run_all(points, run, progress)?;
    Ok(SweepOutcome {
        params: params.clone(),
        sweep: sweep.clone(),
        seed,
        points: merge(&runs),
        runs,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// The runs merged per (members, swept value, variant), in first-seen order.
fn merge<R: PointRun>(runs: &[R]) -> Vec<GroupPoint> {
    let mut points: Vec<GroupPoint> = Vec::new();
    for r in runs {
        let (members, x, variant) = r.key();
        let same = |p: &&mut GroupPoint| {
            p.members == members && p.variant == variant && (p.x == x || x.is_nan())
        };
        match points.iter_mut().find(same) {
            Some(p) => p.outcome.merge(r.outcome()),
            None => points.push(GroupPoint {
                members,
                x,
                variant,
                outcome: r.outcome().clone(),
            }),
        }
    }
    points
}
