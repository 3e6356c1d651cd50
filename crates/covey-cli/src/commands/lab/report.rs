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
}

/// Runs every scenario into `out/NAME/`, writes its page there as README.md, and the
/// index as `out/README.md`.
pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    // Every scenario's folder, so that no sweep dies at its end on a file in the way.
    out_dir::check_writable(&args.out)?;
    for info in scenarios::list() {
        out_dir::check_writable(&args.out.join(info.name))?;
    }
    let quick_flag = if args.quick { " --quick" } else { "" };
    let mut entries = Vec::new();
    for info in scenarios::list() {
        let dir = args.out.join(info.name);
        let bar = progress::bar(info.name);
        let options = RunOptions {
            quick: args.quick,
            seed: args.seed,
            runs: None,
            out_dir: dir.clone(),
            params: Vec::new(),
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
        });
    }
    let index = args.out.join("README.md");
    let with_emulator_page = args.out.join(index_page::EMULATOR_PAGE).is_file();
    write(
        &index,
        &index_page::render(&entries, args.quick, args.seed, with_emulator_page),
    )?;
    print(&format!("report in {}\n", index.display())).map_err(Failure::from)
}

fn write(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| {
        Failure::new(
            ExitKind::Other,
            format!("cannot write {}: {e}", path.display()),
        )
    })
}
