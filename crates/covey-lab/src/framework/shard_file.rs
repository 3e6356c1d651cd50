//! Shard files: one part of a sweep's run results, in CBOR (which keeps every float's bits),
//! and joining them back into the whole sweep.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::scenario::Scenario;
use crate::LabError;

/// The shard file format's version; files of another version are refused.
pub const FORMAT: u32 = 1;

/// One shard's results and everything needed to check that shards belong together.
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct ShardFile<S: Scenario> {
    /// [`FORMAT`].
    pub format: u32,
    /// The scenario's name.
    pub scenario: String,
    /// The parameters after `--set`.
    pub params: S::Params,
    /// The CI-sized sweep.
    pub quick: bool,
    /// The base seed.
    pub seed: u64,
    /// Seeds per point.
    pub seeds: usize,
    /// Runs in the whole sweep.
    pub trials: usize,
    /// This shard, from 0.
    pub index: usize,
    /// Shards in all.
    pub count: usize,
    /// (run index in the sweep, its result) for every run of this shard.
    pub results: Vec<(usize, S::RunResult)>,
}

/// Just the scenario's name, to pick the scenario before reading a whole file.
#[derive(Deserialize)]
struct ShardHeader {
    format: u32,
    scenario: String,
}

/// The whole sweep, joined from its shards.
pub struct Joined<S: Scenario> {
    /// The parameters every shard ran with.
    pub params: S::Params,
    /// The CI-sized sweep.
    pub quick: bool,
    /// The base seed.
    pub seed: u64,
    /// Seeds per point.
    pub seeds: usize,
    /// Every run's result, in sweep order.
    pub results: Vec<S::RunResult>,
}

/// The file name of shard `index` of `count` of `scenario`.
pub fn file_name(scenario: &str, index: usize, count: usize) -> String {
    format!("{scenario}.shard-{index}-of-{count}.cbor")
}

/// Writes `file` into `dir` under its [`file_name`].
pub fn write<S: Scenario>(file: &ShardFile<S>, dir: &Path) -> Result<PathBuf, LabError> {
    crate::report::ensure_dir(dir)?;
    let path = dir.join(file_name(&file.scenario, file.index, file.count));
    let mut bytes = Vec::new();
    ciborium::into_writer(file, &mut bytes)
        .map_err(|e| LabError::Shard(format!("cannot encode {}: {e}", path.display())))?;
    std::fs::write(&path, bytes).map_err(|source| LabError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// The shard files `paths` names: files as given, folders' `*.shard-*-of-*.cbor` files.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LabError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|source| LabError::Io {
                path: path.clone(),
                source,
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    name.contains(".shard-") && name.ends_with(".cbor")
                })
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        return Err(LabError::Shard(
            "no shard files given (pass the files, or folders holding *.shard-*-of-*.cbor)".into(),
        ));
    }
    Ok(files)
}

/// The scenario the shard file at `path` belongs to.
pub fn scenario_of(path: &Path) -> Result<String, LabError> {
    let header: ShardHeader = decode(path)?;
    if header.format != FORMAT {
        return Err(LabError::Shard(format!(
            "{} is shard format {}, this covey reads {FORMAT}",
            path.display(),
            header.format
        )));
    }
    Ok(header.scenario)
}

fn decode<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, LabError> {
    let bytes = std::fs::read(path).map_err(|source| LabError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    ciborium::from_reader(bytes.as_slice())
        .map_err(|e| LabError::Shard(format!("{} is not a lab shard file: {e}", path.display())))
}

/// Reads every shard of `paths` and joins them, checking that they are the shards of one
/// sweep of `scenario`, each exactly once and none missing.
pub fn join<S: Scenario>(scenario: &str, paths: &[PathBuf]) -> Result<Joined<S>, LabError> {
    let files = expand(paths)?;
    let mut first: Option<(PathBuf, ShardFile<S>)> = None;
    let mut seen: Vec<bool> = Vec::new();
    let mut results: Vec<Option<S::RunResult>> = Vec::new();
    for path in files {
        let found = scenario_of(&path)?;
        if found != scenario {
            return Err(LabError::Shard(format!(
                "{} belongs to {found}, not {scenario}",
                path.display()
            )));
        }
        let mut shard: ShardFile<S> = decode(&path)?;
        match &first {
            None => {
                seen = vec![false; shard.count];
                results = (0..shard.trials).map(|_| None).collect();
            }
            Some((first_path, f)) => {
                let same = f.quick == shard.quick
                    && f.seed == shard.seed
                    && f.seeds == shard.seeds
                    && f.trials == shard.trials
                    && f.count == shard.count
                    && serde_json::to_string(&f.params).ok()
                        == serde_json::to_string(&shard.params).ok();
                if !same {
                    return Err(LabError::Shard(format!(
                        "{} and {} come from different sweeps (parameters, seed, runs or \
                         shard count differ)",
                        first_path.display(),
                        path.display()
                    )));
                }
            }
        }
        if shard.index >= seen.len() || std::mem::replace(&mut seen[shard.index], true) {
            return Err(LabError::Shard(format!(
                "{} repeats shard {}/{}",
                path.display(),
                shard.index,
                shard.count
            )));
        }
        for (i, r) in std::mem::take(&mut shard.results) {
            match results.get_mut(i) {
                Some(slot @ None) => *slot = Some(r),
                _ => {
                    return Err(LabError::Shard(format!(
                        "{} holds run {i}, which is out of the sweep or already given",
                        path.display()
                    )))
                }
            }
        }
        if first.is_none() {
            first = Some((path, shard));
        }
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| !**s)
        .map(|(i, _)| format!("{i}/{}", seen.len()))
        .collect();
    if !missing.is_empty() {
        return Err(LabError::Shard(format!(
            "shards missing: {}",
            missing.join(", ")
        )));
    }
    let Some((_, f)) = first else {
        return Err(LabError::Shard("no shard files given".into()));
    };
    let results: Option<Vec<S::RunResult>> = results.into_iter().collect();
    let results = results
        .ok_or_else(|| LabError::Shard("the shards do not cover every run of the sweep".into()))?;
    Ok(Joined {
        params: f.params,
        quick: f.quick,
        seed: f.seed,
        seeds: f.seeds,
        results,
    })
}
