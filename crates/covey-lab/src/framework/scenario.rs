//! What a scenario is to the lab: its parameters, its sweep points, one simulation per point
//! and seed, the aggregate of those runs, and the report written from the aggregate.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::param_table::Param;
use crate::report::folder::ReportFolder;
use crate::LabError;

/// A scenario's name and what it reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioInfo {
    /// The name to run it by.
    pub name: &'static str,
    /// What it measures.
    pub title: &'static str,
    /// The paper it reproduces.
    pub paper: &'static str,
}

/// One run of a sweep: a point and one of its seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trial<P> {
    /// The sweep point.
    pub point: P,
    /// Which of the point's seeds, from 0.
    pub seed_index: usize,
    /// The run's seed, the same for seed index k at every point (common random numbers).
    pub seed: u64,
}

/// What a sweep was run with, as [`Scenario::aggregate`] sees it.
#[derive(Debug, Clone)]
pub struct Plan<'a, S: Scenario + ?Sized> {
    /// The parameters after `--set`.
    pub params: &'a S::Params,
    /// The CI-sized sweep.
    pub quick: bool,
    /// The base seed.
    pub seed: u64,
    /// Seeds per point.
    pub seeds: usize,
    /// Every run, in sweep order: each point's seeds one after the other.
    pub trials: &'a [Trial<S::Point>],
}

/// An experiment the lab runs by name. The runner ([`super::runner`]) does everything else:
/// `--set` parsing and validation from [`Scenario::params`], seeds, parallel runs, progress,
/// shards, the JSON of the aggregate and the report's parameter section.
pub trait Scenario: Sync + 'static {
    /// Every parameter `--set` can change; serialised field names are the parameter names.
    type Params: Serialize + DeserializeOwned + Clone + Send + Sync;
    /// One point of the sweep (without its seed).
    type Point: Serialize + Clone + Send + Sync;
    /// What one run measured; shards carry it between processes.
    type RunResult: Serialize + DeserializeOwned + Send;
    /// The runs of a sweep combined: written as `<name>.json` and read by [`Scenario::report`].
    type Outcome: Serialize;

    /// Its name, title and paper.
    fn info(&self) -> ScenarioInfo;

    /// The parameter table: what each parameter sets and what values it accepts.
    fn params(&self) -> &'static [Param];

    /// The parameters before `--set`: the paper's, or the quick sweep's.
    fn defaults(&self, quick: bool) -> Self::Params;

    /// Checks that involve more than one parameter (each value's own range is checked from
    /// the table already).
    fn check(&self, _params: &Self::Params) -> Result<(), LabError> {
        Ok(())
    }

    /// Seeds per point when the run does not say.
    fn default_seeds(&self, quick: bool) -> usize;

    /// Seeds to run at `point` when the sweep runs `seeds` per point: fewer for points that
    /// need fewer (a side study), never more.
    fn seeds_at(&self, _point: &Self::Point, seeds: usize) -> usize {
        seeds
    }

    /// The sweep's points, in report order.
    fn points(&self, params: &Self::Params, quick: bool) -> Vec<Self::Point>;

    /// Runs one point with one seed.
    fn run_point(
        &self,
        params: &Self::Params,
        trial: &Trial<Self::Point>,
    ) -> Result<Self::RunResult, LabError>;

    /// Combines every run, given in the order of [`Plan::trials`].
    fn aggregate(
        &self,
        plan: &Plan<'_, Self>,
        runs: Vec<Self::RunResult>,
    ) -> Result<Self::Outcome, LabError>;

    /// Writes the CSV and SVG files of `outcome` into `folder` and returns the Markdown page
    /// (the runner adds the parameter section and writes it).
    fn report(
        &self,
        outcome: &Self::Outcome,
        folder: &mut ReportFolder,
    ) -> Result<String, LabError>;

    /// Whether runs may go in parallel (the emulator's runs share the machine's network and
    /// clock, so they go one at a time).
    fn parallel(&self) -> bool {
        true
    }

    /// Whether the same seed gives the same bytes: true on the simulator, false for runs on
    /// real stacks in real time.
    fn reproducible(&self) -> bool {
        true
    }

    /// About how many wall-clock seconds one trial takes, for the estimate `covey lab report`
    /// prints before it starts when no earlier report recorded the scenario's times. A
    /// simulated trial takes milliseconds (the recorded full reports: 0.004 to 0.06 s per
    /// trial with the trials in parallel); 0.05 s rounds that up.
    fn trial_seconds(&self) -> f64 {
        0.05
    }

    /// What the machine needs beyond the build for the trials to run (root, real stacks),
    /// said before a report starts; `None` for the simulator's scenarios.
    fn needs(&self) -> Option<&'static str> {
        None
    }
}
