//! `covey lab report`: every scenario, one page each, and an index linking them.

use std::path::{Path, PathBuf};

use super::index_page::{self, Entry};
use super::{data_files, out_dir, scenario_page};
use crate::scenarios::{self, ProgressFn, RunOptions, Summary};
use crate::LabError;

/// What a report runs and where it writes.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The small, CI-sized sweeps instead of the papers' full ones.
    pub quick: bool,
    /// Base seed of every scenario.
    pub seed: u64,
    /// The report folder: README.md (the index) and one folder per scenario.
    pub out: PathBuf,
    /// Run only these scenarios; the others keep their pages and their rows of the
    /// existing index. Empty: every scenario.
    pub only: Vec<String>,
}

/// What a report tells as it goes (the command line draws a progress bar and prints a
/// line per scenario).
pub trait ReportProgress {
    /// Scenario `name` starts; its sweep reports its runs to the callback returned.
    fn started(&mut self, name: &'static str) -> Option<ProgressFn>;
    /// Scenario `name`'s sweep ended, well or not.
    fn finished(&mut self, name: &'static str);
    /// The scenario's page is written.
    fn page_written(&mut self, summary: &Summary) -> Result<(), LabError>;
}

/// Runs every scenario into `out/NAME/`, writes its page there as README.md, and the
/// index as `out/README.md`, whose path it returns.
pub fn write_report(
    options: &ReportOptions,
    progress: &mut dyn ReportProgress,
) -> Result<PathBuf, LabError> {
    // Every scenario's folder, so that no sweep dies at its end on a file in the way.
    out_dir::check_writable(&options.out)?;
    for info in scenarios::list() {
        out_dir::check_writable(&options.out.join(info.name))?;
    }
    let index = options.out.join("README.md");
    let kept_rows = kept_rows(options, &index)?;
    let quick_flag = if options.quick { " --quick" } else { "" };
    let mut entries = Vec::new();
    for info in scenarios::list() {
        if let Some(row) = kept_rows.iter().find(|(name, _)| *name == info.name) {
            entries.push(Entry {
                name: info.name,
                title: info.title,
                paper: info.paper,
                page: format!("{}/README.md", info.name),
                runs: 0,
                wall_s: 0.0,
                kept_row: Some(row.1.clone()),
            });
            continue;
        }
        let dir = options.out.join(info.name);
        let run_options = RunOptions {
            quick: options.quick,
            seed: options.seed,
            runs: None,
            out_dir: dir.clone(),
            params: Vec::new(),
            shard: None,
            progress: progress.started(info.name),
        };
        let result = scenarios::run(info.name, &run_options);
        progress.finished(info.name);
        let summary = result?;

        let files = data_files::sort(&summary)?;
        let regenerate = format!(
            "covey lab run {}{quick_flag} --seed {} --out target/lab/{}",
            info.name, options.seed, info.name
        );
        let page = scenario_page::render(&summary.markdown, &files, &regenerate);
        write(&dir.join("README.md"), &page)?;
        progress.page_written(&summary)?;
        entries.push(Entry {
            name: info.name,
            title: info.title,
            paper: info.paper,
            page: format!("{}/README.md", info.name),
            runs: summary.runs,
            wall_s: summary.wall_s,
            kept_row: None,
        });
    }
    let present: Vec<&str> = index_page::HAND_WRITTEN
        .iter()
        .map(|(file, _)| *file)
        .filter(|file| options.out.join(file).is_file())
        .collect();
    write(
        &index,
        &index_page::render(&entries, options.quick, options.seed, &present),
    )?;
    Ok(index)
}

/// With `only`: the existing index's row of every scenario not named, checked before
/// anything runs (an unknown name, or no earlier row to keep, is refused).
///
/// The rows come from the index itself: the runs and wall time it shows are kept nowhere
/// else (a scenario's JSON holds its results, not how long it took, and may be left out of
/// the report as too large).
fn kept_rows(
    options: &ReportOptions,
    index: &Path,
) -> Result<Vec<(&'static str, String)>, LabError> {
    if options.only.is_empty() {
        return Ok(Vec::new());
    }
    for name in &options.only {
        if !scenarios::list().iter().any(|s| s.name == name) {
            return Err(LabError::InvalidOption(format!(
                "no scenario named {name} (see `covey lab list`)"
            )));
        }
    }
    let existing = std::fs::read_to_string(index).map_err(|e| {
        LabError::Index(format!(
            "--only keeps the other rows of {}, which cannot be read: {e}; run the whole report once",
            index.display()
        ))
    })?;
    let mut kept = Vec::new();
    for info in scenarios::list() {
        if options.only.iter().any(|n| n == info.name) {
            continue;
        }
        let row = index_page::existing_row(&existing, info.name).ok_or_else(|| {
            LabError::Index(format!(
                "{} has no row for {}: run the whole report, or name it with --only",
                index.display(),
                info.name
            ))
        })?;
        kept.push((info.name, row));
    }
    Ok(kept)
}

fn write(path: &Path, text: &str) -> Result<(), LabError> {
    crate::report::write_text(path, text)
}
