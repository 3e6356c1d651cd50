//! `covey lab report`: the scenarios, one page each, and an index linking them
//! ([`covey_lab::pages::write_report`]), with what it will run and about how long it takes
//! first, then a progress bar and a line per scenario.

use std::path::PathBuf;

use clap::Args;
use covey_lab::pages::estimate::Estimate;
use covey_lab::pages::out_dir::default_report_dir;
use covey_lab::pages::{estimate_report, write_report, ReportOptions, ReportProgress};
use covey_lab::scenarios::{ProgressFn, Summary};
use covey_lab::LabError;
use indicatif::ProgressBar;

use super::{lab_failure, progress};
use crate::exit::{ExitKind, Failure};
use crate::output::print;

/// Arguments of `covey lab report`.
#[derive(Debug, Args)]
#[command(after_help = "\
Before it starts, the report says which scenarios it runs and about how long each takes \
(from the times the folder's index recorded, else from the scenario's cost per trial). The \
full report includes protocols, which needs root and runs for about an hour on the emulator: \
leave it out with --skip protocols.")]
pub struct ReportArgs {
    /// The small, CI-sized sweeps instead of the papers' full ones.
    #[arg(long)]
    quick: bool,

    /// Base seed of every scenario.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,

    /// The report folder: README.md (the index) and one folder per scenario. Without it, the
    /// Covey repository's docs/lab when run inside the repository; elsewhere it is required.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Run only this scenario (repeatable); the index keeps the rows it has of the others.
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,

    /// Leave this scenario out (repeatable); the index keeps the row it has of it.
    #[arg(long, value_name = "NAME")]
    skip: Vec<String>,

    /// Say what the report would run and about how long it takes, and stop.
    #[arg(long)]
    plan: bool,
}

/// Writes the report, then prints where its index is.
pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    let options = ReportOptions {
        quick: args.quick,
        seed: args.seed,
        out: report_dir(args)?,
        only: args.only.clone(),
        skip: args.skip.clone(),
    };
    if args.plan {
        let estimate = estimate_report(&options).map_err(lab_failure)?;
        return print(&estimate.render()).map_err(Failure::from);
    }
    let index = write_report(&options, &mut Shown { bar: None }).map_err(lab_failure)?;
    print(&format!("report in {}\n", index.display())).map_err(Failure::from)
}

/// `--out`, or the repository's docs/lab when run inside the repository.
fn report_dir(args: &ReportArgs) -> Result<PathBuf, Failure> {
    if let Some(out) = &args.out {
        return Ok(out.clone());
    }
    let cwd = std::env::current_dir().map_err(|e| {
        Failure::new(
            ExitKind::Other,
            format!("cannot read the current folder: {e}"),
        )
    })?;
    default_report_dir(&cwd).ok_or_else(|| {
        Failure::new(
            ExitKind::Usage,
            format!(
                "{} is not inside the Covey repository, whose docs/lab is the default report \
                 folder: name the folder with --out DIR",
                cwd.display()
            ),
        )
    })
}

/// The report's progress on the terminal: a bar while a scenario runs, a line as it ends.
struct Shown {
    /// The bar of the scenario under way.
    bar: Option<ProgressBar>,
}

impl ReportProgress for Shown {
    fn planned(&mut self, estimate: &Estimate) -> Result<(), LabError> {
        print(&estimate.render()).map_err(|e| LabError::Output(format!("{e:#}")))
    }

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
