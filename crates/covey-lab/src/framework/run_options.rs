//! How the runner is asked to run a scenario, and what a run produced.

use std::path::PathBuf;
use std::sync::Arc;

use crate::LabError;

/// How far a run has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Runs finished.
    pub done: usize,
    /// Runs in the sweep (or the shard).
    pub total: usize,
}

/// A progress callback, called from worker threads as runs finish.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// One part of a sweep split across processes: the runs whose index is `index` modulo
/// `count`, so that every shard gets a share of the expensive points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 0 (as Slurm's array task ids and Kubernetes' completion indexes).
    pub index: usize,
    /// Parts in all.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = LabError;

    /// Parses `i/n`.
    fn from_str(text: &str) -> Result<Shard, LabError> {
        let bad = || {
            LabError::InvalidOption(format!(
                "shard `{text}` is not i/n with 0 <= i < n (e.g. 0/4 .. 3/4)"
            ))
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether run `trial` of the sweep belongs to this shard.
    pub fn owns(&self, trial: usize) -> bool {
        trial % self.count == self.index
    }
}

/// How to run a scenario.
#[derive(Clone)]
pub struct RunOptions {
    /// The small, CI-sized sweep.
    pub quick: bool,
    /// The base seed: the same seed gives the same results.
    pub seed: u64,
    /// Seeds per sweep point (`None`: the scenario's default).
    pub runs: Option<usize>,
    /// Where the CSV, JSON, SVG and Markdown files go (created if missing).
    pub out_dir: PathBuf,
    /// Scenario parameters to override, as `(name, value)` pairs (e.g. `("queue", "10")`),
    /// checked against the scenario's parameter table.
    pub params: Vec<(String, String)>,
    /// Run only this part of the sweep and write its results as a shard file for
    /// `covey lab merge`, instead of the report.
    pub shard: Option<Shard>,
    /// Called as runs finish.
    pub progress: Option<ProgressFn>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            quick: false,
            seed: 1,
            runs: None,
            out_dir: PathBuf::from("lab-results"),
            params: Vec::new(),
            shard: None,
            progress: None,
        }
    }
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("quick", &self.quick)
            .field("seed", &self.seed)
            .field("runs", &self.runs)
            .field("out_dir", &self.out_dir)
            .field("params", &self.params)
            .field("shard", &self.shard)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What a scenario run produced.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The scenario.
    pub scenario: &'static str,
    /// Simulation runs made.
    pub runs: usize,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// The Markdown report (also written to a file), for printing; empty for a shard.
    pub markdown: String,
}
