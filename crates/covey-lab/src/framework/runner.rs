//! The one runner every scenario goes through: parameters from the table, seeds per point,
//! the runs in parallel with progress, and either the report or one shard's results.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant as WallClock;

use rayon::prelude::*;

use super::param_table;
use super::run_options::{Progress, RunOptions, Shard, Summary};
use super::scenario::{Plan, Scenario, Trial};
use super::shard_file::{self, ShardFile};
use crate::report::folder::ReportFolder;
use crate::LabError;

/// The seed of seed index `k` under base seed `base`: the same k gives the same seed at every
/// point of a sweep, so that points differ by their parameters and not by their luck.
pub fn trial_seed(base: u64, k: usize) -> u64 {
    covey_sim::sim::splitmix64(base.wrapping_add(k as u64))
}

/// The parameters `options` asks for: the defaults with its `--set`s applied and checked.
pub fn resolve_params<S: Scenario>(
    scenario: &S,
    options: &RunOptions,
) -> Result<S::Params, LabError> {
    let defaults = scenario.defaults(options.quick);
    let params = param_table::apply(
        scenario.info().name,
        scenario.params(),
        &defaults,
        &options.params,
    )?;
    scenario.check(&params)?;
    Ok(params)
}

/// Every run of the sweep, in order: each point's seeds one after the other.
pub fn trials<S: Scenario>(
    scenario: &S,
    params: &S::Params,
    quick: bool,
    seed: u64,
    seeds: usize,
) -> Vec<Trial<S::Point>> {
    let mut trials = Vec::new();
    for point in scenario.points(params, quick) {
        for seed_index in 0..scenario.seeds_at(&point, seeds).min(seeds) {
            trials.push(Trial {
                point: point.clone(),
                seed_index,
                seed: trial_seed(seed, seed_index),
            });
        }
    }
    trials
}

/// The sweep `options` asks for: parameters, seeds per point and every run.
struct Sweep<S: Scenario> {
    params: S::Params,
    seeds: usize,
    trials: Vec<Trial<S::Point>>,
}

impl<S: Scenario> Sweep<S> {
    fn of(scenario: &S, options: &RunOptions) -> Result<Sweep<S>, LabError> {
        let params = resolve_params(scenario, options)?;
        let seeds = options
            .runs
            .unwrap_or(scenario.default_seeds(options.quick));
        if seeds == 0 {
            return Err(LabError::InvalidOption(format!(
                "{}: runs must be at least 1",
                scenario.info().name
            )));
        }
        let trials = trials(scenario, &params, options.quick, options.seed, seeds);
        Ok(Sweep {
            params,
            seeds,
            trials,
        })
    }

    fn plan<'a>(&'a self, options: &RunOptions) -> Plan<'a, S> {
        Plan {
            params: &self.params,
            quick: options.quick,
            seed: options.seed,
            seeds: self.seeds,
            trials: &self.trials,
        }
    }
}

/// Runs `scenario` as `options` asks: the whole sweep and its report, or one shard.
pub fn run<S: Scenario>(scenario: &S, options: &RunOptions) -> Result<Summary, LabError> {
    let started = WallClock::now();
    let sweep = Sweep::of(scenario, options)?;
    let shard = options.shard.unwrap_or(Shard { index: 0, count: 1 });
    let owned: Vec<usize> = (0..sweep.trials.len()).filter(|&i| shard.owns(i)).collect();
    let results = run_trials(scenario, &sweep.params, &sweep.trials, &owned, options)?;
    if options.shard.is_none() {
        return report(
            scenario,
            &sweep.plan(options),
            results,
            &options.out_dir,
            started,
        );
    }
    let file = ShardFile::<S> {
        format: shard_file::FORMAT,
        scenario: scenario.info().name.to_string(),
        params: sweep.params.clone(),
        quick: options.quick,
        seed: options.seed,
        seeds: sweep.seeds,
        trials: sweep.trials.len(),
        index: shard.index,
        count: shard.count,
        results: owned.into_iter().zip(results).collect(),
    };
    let path = shard_file::write(&file, &options.out_dir)?;
    Ok(Summary {
        scenario: scenario.info().name,
        runs: file.results.len(),
        wall_s: started.elapsed().as_secs_f64(),
        files: vec![path],
        markdown: String::new(),
    })
}

/// Runs the whole sweep `options` asks for and returns its aggregate, writing nothing: for
/// tests, and for using a scenario as a library.
pub fn outcome<S: Scenario>(scenario: &S, options: &RunOptions) -> Result<S::Outcome, LabError> {
    let sweep = Sweep::of(scenario, options)?;
    let all: Vec<usize> = (0..sweep.trials.len()).collect();
    let results = run_trials(scenario, &sweep.params, &sweep.trials, &all, options)?;
    scenario.aggregate(&sweep.plan(options), results)
}

/// Joins the shard files at `paths` (files, or folders holding them) into the report a
/// single run writes, byte for byte.
pub fn merge<S: Scenario>(
    scenario: &S,
    paths: &[PathBuf],
    out_dir: &Path,
) -> Result<Summary, LabError> {
    let started = WallClock::now();
    let joined = shard_file::join::<S>(scenario.info().name, paths)?;
    let trials = trials(
        scenario,
        &joined.params,
        joined.quick,
        joined.seed,
        joined.seeds,
    );
    if trials.len() != joined.results.len() {
        return Err(LabError::InvalidOption(format!(
            "the shards hold {} runs but these parameters make {}: they come from another \
             version of the scenario",
            joined.results.len(),
            trials.len()
        )));
    }
    let plan = Plan {
        params: &joined.params,
        quick: joined.quick,
        seed: joined.seed,
        seeds: joined.seeds,
        trials: &trials,
    };
    report(scenario, &plan, joined.results, out_dir, started)
}

/// Runs `trials[i]` for every `i` of `owned`, results in that order.
fn run_trials<S: Scenario>(
    scenario: &S,
    params: &S::Params,
    trials: &[Trial<S::Point>],
    owned: &[usize],
    options: &RunOptions,
) -> Result<Vec<S::RunResult>, LabError> {
    let total = owned.len();
    let done = AtomicUsize::new(0);
    let one = |&i: &usize| {
        let result = scenario.run_point(params, &trials[i]);
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(progress) = &options.progress {
            progress(Progress { done: n, total });
        }
        result
    };
    if scenario.parallel() {
        owned.par_iter().map(one).collect()
    } else {
        owned.iter().map(one).collect()
    }
}

/// Aggregates `results` and writes every report file.
fn report<S: Scenario>(
    scenario: &S,
    plan: &Plan<'_, S>,
    results: Vec<S::RunResult>,
    out_dir: &Path,
    started: WallClock,
) -> Result<Summary, LabError> {
    let info = scenario.info();
    let runs = results.len();
    let outcome = scenario.aggregate(plan, results)?;
    let mut folder = ReportFolder::create(out_dir, info.name)?;
    folder.json(&outcome)?;
    let mut markdown = scenario.report(&outcome, &mut folder)?;
    if !markdown.ends_with("\n\n") {
        markdown.push('\n');
    }
    markdown +=
        &param_table::markdown_section(scenario.params(), plan.params, &scenario.defaults(false));
    folder.finish(runs, started.elapsed().as_secs_f64(), markdown)
}
