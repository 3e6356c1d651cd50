//! `covey lab`: list, describe, run and report the lab's scenarios, the seed papers'
//! experiments on the simulator.

mod merge;
mod progress;
mod report;
mod run;
mod set_param;

use clap::{Args, Subcommand};
use covey_lab::scenarios;
use covey_lab::LabError;

use crate::exit::{ExitKind, Failure};
use crate::output::print;

/// Arguments of `covey lab`.
#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
}

/// The `covey lab` subcommands.
#[derive(Debug, Subcommand)]
enum LabCommand {
    /// List the scenarios: name, what it measures and the paper it reproduces.
    List,
    /// List a scenario's parameters (`run --set name=value`) with their defaults.
    Params {
        /// The scenario (see `covey lab list`).
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Run one scenario and write its CSV, JSON, SVG and Markdown files.
    Run(run::RunArgs),
    /// Join the shard files of a sweep run with `run --shard i/n` into the files one run
    /// writes.
    Merge(merge::MergeArgs),
    /// Run the scenarios and write one page each plus an index (README.md), saying first
    /// which scenarios run and about how long they take.
    Report(report::ReportArgs),
    /// Run one emulator agent (a real stack's role) inside a namespace; the emulator
    /// scenarios start it.
    #[command(hide = true)]
    Agent {
        /// The agent as JSON (stack and role).
        #[arg(value_name = "JSON")]
        agent: String,
    },
}

/// Runs `covey lab ...`.
pub fn run(args: LabArgs) -> Result<(), Failure> {
    match args.command {
        LabCommand::List => list(),
        LabCommand::Params { name } => params(&name),
        LabCommand::Run(a) => run::run(&a),
        LabCommand::Merge(a) => merge::run(&a),
        LabCommand::Report(a) => report::run(&a),
        LabCommand::Agent { agent } => covey_emu::stacks::Agent::from_arg(&agent)
            .and_then(|a| a.run())
            .map_err(|e| lab_failure(LabError::from(e))),
    }
}

fn list() -> Result<(), Failure> {
    let all = scenarios::list();
    let width = all.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for s in &all {
        out += &format!("{:width$}  {}. Reproduces {}\n", s.name, s.title, s.paper);
    }
    print(&out).map_err(Failure::from)
}

fn params(name: &str) -> Result<(), Failure> {
    let described = scenarios::params(name).map_err(lab_failure)?;
    if described.is_empty() {
        let text = format!("{name} does not describe its parameters.\n");
        return print(&text).map_err(Failure::from);
    }
    let cell =
        |f: &dyn Fn(&scenarios::ParamInfo) -> usize| described.iter().map(f).max().unwrap_or(0);
    let (w_name, w_default, w_accepts) = (
        cell(&|p| p.name.len()).max("name".len()),
        cell(&|p| p.default.chars().count()).max("default".len()),
        cell(&|p| p.accepts.chars().count()).max("accepts".len()),
    );
    let mut out = format!(
        "Parameters of {name}; set with `covey lab run {name} --set name=value`.\n\
         {:w_name$}  {:w_default$}  {:w_accepts$}  what it sets\n",
        "name", "default", "accepts"
    );
    for p in &described {
        out += &format!(
            "{:w_name$}  {:w_default$}  {:w_accepts$}  {}\n",
            p.name, p.default, p.accepts, p.help
        );
    }
    print(&out).map_err(Failure::from)
}

/// The scenario called `name`, or a usage error naming the valid ones.
fn known_scenario(name: &str) -> Result<scenarios::ScenarioInfo, Failure> {
    scenarios::list()
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| lab_failure(LabError::UnknownScenario(name.to_string())))
}

/// A lab error as a one-line failure: bad names and values are usage errors (exit 2).
fn lab_failure(e: LabError) -> Failure {
    match e {
        LabError::UnknownScenario(name) => Failure::new(
            ExitKind::Usage,
            format!(
                "unknown scenario `{name}` (choose from {})",
                scenario_names().join(", ")
            ),
        ),
        LabError::InvalidOption(message) => Failure::new(ExitKind::Usage, message),
        other => Failure::new(ExitKind::Other, other.to_string()),
    }
}

fn scenario_names() -> Vec<&'static str> {
    scenarios::list().iter().map(|s| s.name).collect()
}
