//! The lab's framework: what a scenario implements ([`Scenario`]), its parameter table, the
//! one runner (seeds, parallel runs, progress, shards) and the registry the command line uses.
//!
//! A minimal scenario is a unit struct implementing [`Scenario`] and one line in
//! [`crate::scenarios::all`]; `examples/minimal_scenario.rs` shows one.

pub mod param_table;
pub mod registry;
pub mod run_options;
pub mod runner;
pub mod scenario;
pub mod shard_file;

pub use param_table::{Accepts, Param, ParamInfo};
pub use registry::LabScenario;
pub use run_options::{Progress, ProgressFn, RunOptions, Shard, Summary};
pub use scenario::{Plan, Scenario, ScenarioInfo, Trial};
