//! What a group scenario's sweep produced: every run in sweep order, and the runs of each
//! point merged.

use serde::Serialize;

use super::outcome::{GroupPoint, RunOutcome};
use super::params::GroupParams;

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
}

/// A run that belongs to a point of a sweep.
pub trait PointRun {
    /// The point's members, swept value and variant.
    fn key(&self) -> (usize, f64, String);
    /// What the run measured.
    fn outcome(&self) -> &RunOutcome;
}

impl<S, R: PointRun> SweepOutcome<S, R> {
    /// The outcome of `runs` (in sweep order), each point's runs merged.
    pub fn new(params: &GroupParams, sweep: S, seed: u64, runs: Vec<R>) -> SweepOutcome<S, R> {
        SweepOutcome {
            params: params.clone(),
            sweep,
            seed,
            points: merge(&runs),
            runs,
        }
    }
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
