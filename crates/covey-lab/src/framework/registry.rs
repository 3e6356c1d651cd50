//! Scenarios as the command line sees them: by name, behind one object-safe trait, so that
//! the registry is one list.

use std::path::{Path, PathBuf};

use super::param_table::{self, ParamInfo};
use super::run_options::{RunOptions, Summary};
use super::runner;
use super::scenario::{Scenario, ScenarioInfo};
use crate::LabError;

/// A scenario, whatever its parameter and result types.
pub trait LabScenario: Sync {
    /// Its name, title and paper.
    fn info(&self) -> ScenarioInfo;
    /// Its parameters with the paper's defaults.
    fn describe(&self) -> Vec<ParamInfo>;
    /// Runs it (the whole sweep, or the shard `options` names).
    fn run(&self, options: &RunOptions) -> Result<Summary, LabError>;
    /// Joins shard files into its report in `out_dir`.
    fn merge(&self, shards: &[PathBuf], out_dir: &Path) -> Result<Summary, LabError>;
    /// What is wrong with its parameter table (empty when sound).
    fn table_problems(&self) -> Vec<String>;
    /// Whether the same seed gives the same bytes.
    fn reproducible(&self) -> bool;
    /// The trials of its sweep with its default parameters and seeds.
    fn planned_trials(&self, quick: bool) -> usize;
    /// About how many seconds one trial takes ([`Scenario::trial_seconds`]).
    fn trial_seconds(&self) -> f64;
    /// What the machine needs for it to run ([`Scenario::needs`]).
    fn needs(&self) -> Option<&'static str>;
}

impl<S: Scenario> LabScenario for S {
    fn info(&self) -> ScenarioInfo {
        Scenario::info(self)
    }

    fn describe(&self) -> Vec<ParamInfo> {
        param_table::describe(self.params(), &self.defaults(false))
    }

    fn run(&self, options: &RunOptions) -> Result<Summary, LabError> {
        runner::run(self, options)
    }

    fn merge(&self, shards: &[PathBuf], out_dir: &Path) -> Result<Summary, LabError> {
        runner::merge(self, shards, out_dir)
    }

    fn table_problems(&self) -> Vec<String> {
        let mut problems = param_table::table_problems(self.params(), &self.defaults(false));
        problems.extend(param_table::table_problems(
            self.params(),
            &self.defaults(true),
        ));
        problems.dedup();
        problems
    }

    fn reproducible(&self) -> bool {
        Scenario::reproducible(self)
    }

    fn planned_trials(&self, quick: bool) -> usize {
        let params = self.defaults(quick);
        runner::trials(self, &params, quick, 1, self.default_seeds(quick)).len()
    }

    fn trial_seconds(&self) -> f64 {
        Scenario::trial_seconds(self)
    }

    fn needs(&self) -> Option<&'static str> {
        Scenario::needs(self)
    }
}

/// The scenario called `name`.
pub fn find(name: &str) -> Result<&'static dyn LabScenario, LabError> {
    crate::scenarios::all()
        .iter()
        .copied()
        .find(|s| s.info().name == name)
        .ok_or_else(|| LabError::UnknownScenario(name.to_string()))
}
