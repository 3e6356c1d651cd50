//! `covey lab report`: every scenario, one page each, and an index linking them.

use std::path::PathBuf;

use clap::Args;
use covey_lab::scenarios::{self, RunOptions};

use super::index_page::{self, Entry};
use super::{data_files, lab_failure, out_dir, progress, scenario_page};
use crate::exit::{ExitKind, Failure};
use crate::output::print;

/// Arguments of `covey lab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The small, CI-sized sweeps instead of the papers' full ones.
    #[arg(long)]
    quick: bool,

    /// Base seed of every scenario.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,

    /// The report folder: README.md (the index) and one folder per scenario.
    #[arg(long, default_value = "docs/lab", value_name = "DIR")]
    out: PathBuf,

    /// Run only this scenario (repeatable); the other scenarios keep their pages and their
    /// rows of the existing index.
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
}

/// Runs every scenario into `out/NAME/`, writes its page there as README.md, and the
/// index as `out/README.md`.
pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    // Every scenario's folder, so that no sweep dies at its end on a file in the way.
    out_dir::check_writable(&args.out)?;
    for info in scenarios::list() {
        out_dir::check_writable(&args.out.join(info.name))?;
    }
    let index = args.out.join("README.md");
    let kept_rows = kept_rows(args, &index)?;
    let quick_flag = if args.quick { " --quick" } else { "" };
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
        let dir = args.out.join(info.name);
        let bar = progress::bar(info.name);
        let options = RunOptions {
            quick: args.quick,
            seed: args.seed,
            runs: None,
            out_dir: dir.clone(),
            params: Vec::new(),
            shard: None,
            progress: Some(progress::callback(&bar)),
        };
        let result = scenarios::run(info.name, &options);
        bar.finish_and_clear();
        let summary = result.map_err(lab_failure)?;

        let files = data_files::sort(&summary)?;
        let regenerate = format!(
            "covey lab run {}{quick_flag} --seed {} --out target/lab/{}",
            info.name, args.seed, info.name
        );
        let page = scenario_page::render(&summary.markdown, &files, &regenerate);
        write(&dir.join("README.md"), &page)?;
        // One line per scenario as it ends, so a long report shows where it is.
        print(&format!(
            "{}: {} runs in {:.1} s\n",
            info.name, summary.runs, summary.wall_s
        ))?;
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
        .filter(|file| args.out.join(file).is_file())
        .collect();
    write(
        &index,
        &index_page::render(&entries, args.quick, args.seed, &present),
    )?;
    print(&format!("report in {}\n", index.display())).map_err(Failure::from)
}

/// With `--only`: the existing index's row of every scenario not named, checked before
/// anything runs (an unknown name, or no earlier row to keep, is refused).
fn kept_rows(
    args: &ReportArgs,
    index: &std::path::Path,
) -> Result<Vec<(&'static str, String)>, Failure> {
    if args.only.is_empty() {
        return Ok(Vec::new());
    }
    for name in &args.only {
        if !scenarios::list().iter().any(|s| s.name == name) {
            return Err(Failure::new(
                ExitKind::Usage,
                format!("no scenario named {name} (see `covey lab list`)"),
            ));
        }
    }
    let existing = std::fs::read_to_string(index).map_err(|e| {
        Failure::new(
            ExitKind::Other,
            format!(
                "--only keeps the other rows of {}, which cannot be read: {e}; run the whole report once",
                index.display()
            ),
        )
    })?;
    let mut kept = Vec::new();
    for info in scenarios::list() {
        if args.only.iter().any(|n| n == info.name) {
            continue;
        }
        let row = index_page::existing_row(&existing, info.name).ok_or_else(|| {
            Failure::new(
                ExitKind::Other,
                format!(
                    "{} has no row for {}: run the whole report, or name it with --only",
                    index.display(),
                    info.name
                ),
            )
        })?;
        kept.push((info.name, row));
    }
    Ok(kept)
}

fn write(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| {
        Failure::new(
            ExitKind::Other,
            format!("cannot write {}: {e}", path.display()),
        )
    })
}
