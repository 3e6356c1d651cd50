//! `covey lab merge SHARD...`: the shards of a sweep run on several processes or machines,
//! joined into the files a single run writes.

use std::path::PathBuf;

use clap::Args;
use covey_lab::framework::registry;

use covey_lab::pages::{headline, out_dir};

use super::lab_failure;
use crate::exit::Failure;
use crate::output::print;

/// Arguments of `covey lab merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard files (`NAME.shard-I-of-N.cbor`), or folders holding them.
    #[arg(value_name = "SHARD", required = true)]
    shards: Vec<PathBuf>,

    /// Where the files go [default: target/lab/NAME].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Joins the shards and writes the report.
pub fn run(args: &MergeArgs) -> Result<(), Failure> {
    let files = covey_lab::framework::shard_file::expand(&args.shards).map_err(lab_failure)?;
    let name = covey_lab::framework::shard_file::scenario_of(&files[0]).map_err(lab_failure)?;
    let scenario = registry::find(&name).map_err(lab_failure)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/lab").join(&name));
    out_dir::check_writable(&out).map_err(lab_failure)?;
    let summary = scenario.merge(&files, &out).map_err(lab_failure)?;
    let done = format!("{} runs from {} shard files", summary.runs, files.len());
    print(&headline::files_and_table(&summary, &done, &out)).map_err(Failure::from)
}
