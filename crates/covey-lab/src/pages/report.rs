//! `covey lab report`: every scenario, one page each, and an index linking them.

use std::path::{Path, PathBuf};

use super::estimate::{self, Estimate};
use super::index_page::{self, Entry};
use super::{data_files, out_dir, scenario_page};
use crate::framework::registry;
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
    /// Run only these scenarios. Empty: every scenario.
    pub only: Vec<String>,
    /// Leave these scenarios out.
    pub skip: Vec<String>,
}

/// What a report tells as it goes (the command line draws a progress bar and prints a
/// line per scenario).
pub trait ReportProgress {
    /// The report is about to start: what it runs and about how long it takes.
    fn planned(&mut self, estimate: &Estimate) -> Result<(), LabError>;
    /// Scenario `name` starts; its sweep reports its runs to the callback returned.
    fn started(&mut self, name: &'static str) -> Option<ProgressFn>;
    /// Scenario `name`'s sweep ended, well or not.
    fn finished(&mut self, name: &'static str);
    /// The scenario's page is written.
    fn page_written(&mut self, summary: &Summary) -> Result<(), LabError>;
}

/// What a report will do, checked before anything runs or is written.
struct Plan {
    /// The scenarios to run.
    run: Vec<&'static str>,
    /// The rows of the existing index kept for the scenarios not run that it lists; a
    /// scenario neither run nor listed is left out of the index.
    kept: Vec<(&'static str, String)>,
    /// What running them takes.
    estimate: Estimate,
}

/// What the report `options` asks for would run and about how long it takes, checking
/// the names and the folder first; runs and writes nothing.
pub fn estimate_report(options: &ReportOptions) -> Result<Estimate, LabError> {
    Ok(plan(options)?.estimate)
}

/// Runs the scenarios `options` names into `out/NAME/`, writes each page there as
/// README.md, and the index as `out/README.md`, whose path it returns. The index lists the
/// scenarios run and those the existing index lists; each row says which sweep made its page.
pub fn write_report(
    options: &ReportOptions,
    progress: &mut dyn ReportProgress,
) -> Result<PathBuf, LabError> {
    let plan = plan(options)?;
    progress.planned(&plan.estimate)?;
    let quick_flag = if options.quick { " --quick" } else { "" };
    let mut entries = Vec::new();
    for info in scenarios::list() {
        if let Some((_, row)) = plan.kept.iter().find(|(name, _)| *name == info.name) {
            entries.push(Entry {
                name: info.name,
                title: info.title,
                paper: info.paper,
                page: format!("{}/README.md", info.name),
                runs: 0,
                wall_s: 0.0,
                quick: options.quick,
                seed: options.seed,
                kept_row: Some(row.clone()),
            });
            continue;
        }
        if !plan.run.contains(&info.name) {
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
            quick: options.quick,
            seed: options.seed,
            kept_row: None,
        });
    }
    let present: Vec<&str> = index_page::HAND_WRITTEN
        .iter()
        .map(|(file, _)| *file)
        .filter(|file| options.out.join(file).is_file())
        .collect();
    let index = options.out.join("README.md");
    write(&index, &index_page::render(&entries, &present))?;
    Ok(index)
}

/// The report `options` asks for, checked: known names, a writable folder for the index and
/// every scenario run (so that no sweep dies at its end on a file in the way).
fn plan(options: &ReportOptions) -> Result<Plan, LabError> {
    for name in options.only.iter().chain(&options.skip) {
        if !scenarios::list().iter().any(|s| s.name == name) {
            return Err(LabError::InvalidOption(format!(
                "no scenario named {name} (see `covey lab list`)"
            )));
        }
    }
    let named = |list: &[String], name: &str| list.iter().any(|n| n == name);
    let run: Vec<&'static str> = scenarios::list()
        .iter()
        .map(|s| s.name)
        .filter(|name| options.only.is_empty() || named(&options.only, name))
        .filter(|name| !named(&options.skip, name))
        .collect();
    if run.is_empty() {
        return Err(LabError::InvalidOption(
            "--skip leaves no scenario to run".to_string(),
        ));
    }
    out_dir::check_writable(&options.out)?;
    for name in &run {
        out_dir::check_writable(&options.out.join(name))?;
    }
    let index = read_index(&options.out.join("README.md"))?;
    let row = |name: &str| {
        index
            .as_deref()
            .and_then(|i| index_page::existing_row(i, name))
    };
    let kept = scenarios::list()
        .iter()
        .filter(|s| !run.contains(&s.name))
        .filter_map(|s| Some((s.name, row(s.name)?)))
        .collect();
    let mut estimates = Vec::new();
    for name in &run {
        let scenario = registry::find(name)?;
        estimates.push(estimate::of(scenario, options.quick, row(name).as_deref()));
    }
    Ok(Plan {
        run,
        kept,
        estimate: Estimate {
            quick: options.quick,
            scenarios: estimates,
        },
    })
}

/// The index an earlier report wrote at `path`, if there is one.
fn read_index(path: &Path) -> Result<Option<String>, LabError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LabError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn write(path: &Path, text: &str) -> Result<(), LabError> {
    crate::report::write_text(path, text)
}
