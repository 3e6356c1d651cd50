//! The experiments of the seed papers, one file (or folder) per scenario, each runnable by
//! name with [`run`].

pub mod cc_bottleneck;
pub mod fading_goodput;
pub mod group;
pub mod group_delay;
pub mod group_interference;
pub mod group_nested;
pub mod mac_contention;
pub mod object_download;
pub mod one_hop;
pub mod protocols;
pub mod server_workload;
pub mod sim_vs_emu;

use crate::framework::{registry, LabScenario};
pub use crate::framework::{ParamInfo, Progress, ProgressFn, RunOptions, ScenarioInfo, Summary};
use crate::LabError;

/// The TinyCoAP paper (seed 002).
const TINYCOAP_PAPER: &str = "Ludovici, Moreno, Calveras: TinyCoAP: A Novel Constrained \
                              Application Protocol (CoAP) Implementation for Embedding RESTful \
                              Web Services in Wireless Sensor Networks Based on TinyOS (JSAN 2013)";

/// The group-communication paper (seeds 000/001).
const GROUP_PAPER: &str = "Ishaq, Hoebeke, Moerman, Demeester: Experimental Evaluation of \
                           Unicast and Multicast CoAP Group Communication (Sensors 2016)";

/// Every scenario the lab can run, in `covey lab list` order (by name): the one registry.
/// Adding a scenario is one line here.
static ALL: [&dyn LabScenario; 9] = [
    &cc_bottleneck::CcBottleneck,
    &fading_goodput::FadingGoodput,
    &group_delay::GroupDelay,
    &group_interference::GroupInterference,
    &group_nested::GroupNested,
    &mac_contention::MacContention,
    &object_download::ObjectDownload,
    &protocols::Protocols,
    &server_workload::ServerWorkload,
];

/// Every scenario the lab can run, in `covey lab list` order.
pub fn all() -> &'static [&'static dyn LabScenario] {
    &ALL
}

/// Every scenario's name, title and paper.
pub fn list() -> Vec<ScenarioInfo> {
    all().iter().map(|s| s.info()).collect()
}

/// The parameters scenario `name` accepts, with their defaults.
pub fn params(name: &str) -> Result<Vec<ParamInfo>, LabError> {
    Ok(registry::find(name)?.describe())
}

/// Runs scenario `name`.
pub fn run(name: &str, options: &RunOptions) -> Result<Summary, LabError> {
    registry::find(name)?.run(options)
}
