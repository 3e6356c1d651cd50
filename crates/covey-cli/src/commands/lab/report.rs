//! `covey lab report`: every scenario, one page each, and an index linking them
//! ([`covey_lab::pages::write_report`]), with a progress bar and a line per scenario.

use std::path::PathBuf;

use clap::Args;
use covey_lab::pages::{write_report, ReportOptions, ReportProgress};
use covey_lab::scenarios::{ProgressFn, Summary};
use covey_lab::LabError;
use indicatif::ProgressBar;

use super::{lab_failure, progress};
use crate::exit::Failure;
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

/// Writes the report, then prints where its index is.
pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    let options = ReportOptions {
        quick: args.quick,
        seed: args.seed,
        out: args.out.clone(),
        only: args.only.clone(),
    };
    let index = write_report(&options, &mut Shown { bar: None }).map_err(lab_failure)?;
    print(&format!("report in {}\n", index.display())).map_err(Failure::from)
}

/// The report's progress on the terminal: a bar while a scenario runs, a line as it ends.
struct Shown {
    /// The bar of the scenario under way.
    bar: Option<ProgressBar>,
}

impl ReportProgress for Shown {
    fn started(&mut self, name: &'static str) -> Option<ProgressFn> {
        let bar = progress::bar(name);
        let callback = progress::callback(&bar);
        self.bar = Some(bar);
        Some(callback)
    }

    fn finished(&mut self, _name: &'static str) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn page_written(&mut self, summary: &Summary) -> Result<(), LabError> {
        // One line per scenario as it ends, so a long report shows where it is.
        let line = format!(
            "{}: {} runs in {:.1} s\n",
            summary.scenario, summary.runs, summary.wall_s
        );
        print(&line).map_err(|e| LabError::Output(format!("{e:#}")))
    }
}
