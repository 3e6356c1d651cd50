//! `covey lab run NAME`: one scenario, its files, and its headline table.

use std::path::PathBuf;

use clap::Args;
use covey_lab::framework::Shard;
use covey_lab::scenarios::{self, RunOptions};

use covey_lab::pages::{headline, out_dir};

use super::{known_scenario, lab_failure, progress, set_param};
use crate::exit::{ExitKind, Failure};
use crate::output::print;

/// Arguments of `covey lab run`.
#[derive(Debug, Args)]
#[command(after_help = parameters_help())]
pub struct RunArgs {
    /// The scenario (see `covey lab list`).
    #[arg(value_name = "NAME")]
    name: String,

    /// The small, CI-sized sweep instead of the paper's full one.
    #[arg(long)]
    quick: bool,

    /// Base seed: the same seed gives the same results.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,

    /// Seeds per sweep point (default: the scenario's).
    #[arg(long, value_name = "K")]
    runs: Option<usize>,

    /// Where the files go [default: target/lab/NAME].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// A scenario parameter beyond the paper's (e.g. queue=10); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,

    /// Run only part i of n of the sweep (0 <= i < n) and write its results as a shard file
    /// into the output folder; `covey lab merge` joins the shards into the report.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,

    /// CoAP's ACK_TIMEOUT in seconds on every node, for the scenarios that take
    /// `ack_timeout_ms` (the group scenarios; the paper's Fig 14 varies it).
    #[arg(long, value_name = "SECONDS")]
    ack_timeout: Option<f64>,
}

/// Every scenario's parameters with their defaults, for `--help`.
fn parameters_help() -> String {
    let mut help = String::from("Scenario parameters for --set, with their defaults:\n");
    for s in scenarios::list() {
        let described = scenarios::params(s.name).unwrap_or_default();
        let values: Vec<String> = described
            .iter()
            .map(|p| format!("{}={}", p.name, p.default))
            .collect();
        let values = if values.is_empty() {
            "(not described)".to_string()
        } else {
            values.join(" ")
        };
        help += &format!("  {}: {values}\n", s.name);
    }
    help + "`covey lab params NAME` says what each one sets and what it accepts."
}

/// Runs the scenario, then prints where its files are and its headline table.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let scenario = known_scenario(&args.name)?;
    let mut sets = args.set.clone();
    if let Some(secs) = args.ack_timeout {
        if !(secs.is_finite() && secs > 0.0) {
            return Err(Failure::new(
                ExitKind::Usage,
                format!("--ack-timeout {secs} is not a positive number of seconds"),
            ));
        }
        sets.push(format!("ack_timeout_ms={}", (secs * 1000.0).round() as u64));
    }
    let params = set_param::parse(scenario.name, &sets)?;
    let shard = args
        .shard
        .as_deref()
        .map(str::parse::<Shard>)
        .transpose()
        .map_err(lab_failure)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/lab").join(scenario.name));
    out_dir::check_writable(&out).map_err(lab_failure)?;

    let bar = progress::bar(scenario.name);
    let options = RunOptions {
        quick: args.quick,
        seed: args.seed,
        runs: args.runs,
        out_dir: out.clone(),
        params,
        shard,
        progress: Some(progress::callback(&bar)),
    };
    let result = scenarios::run(scenario.name, &options);
    bar.finish_and_clear();
    let summary = result.map_err(lab_failure)?;

    let done = format!("{} runs in {:.1} s", summary.runs, summary.wall_s);
    print(&headline::files_and_table(&summary, &done, &out)).map_err(Failure::from)
}
