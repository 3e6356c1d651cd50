//! The experiments of the seed papers, one file (or folder) per scenario, each runnable by
//! name with [`run`].

pub mod cc_bottleneck;
pub mod fading_goodput;
pub mod group;
pub mod group_delay;
pub mod group_interference;
pub mod group_nested;
pub mod object_download;
pub mod one_hop;
pub mod protocols;
pub mod server_workload;
pub mod sim_vs_emu;

use std::path::{Path, PathBuf};

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

fn legacy_scenarios() -> Vec<Legacy> {
    let infos = [
        ScenarioInfo {
            name: cc_bottleneck::NAME,
            title: "CoAP congestion control algorithms behind a 20 kbit/s bottleneck",
            paper: "Järvinen, Daniel, Kojo: Experimental Evaluation of Alternative Congestion \
                    Control Algorithms for CoAP (WF-IoT 2015)",
        },
        ScenarioInfo {
            name: fading_goodput::NAME,
            title: "CoAP goodput over one 802.15.4 hop under Rayleigh fading (Table 4, Fig 10)",
            paper: "Ludovici, Moreno, Calveras: TinyCoAP: A Novel Constrained Application \
                    Protocol (CoAP) Implementation for Embedding RESTful Web Services in \
                    Wireless Sensor Networks Based on TinyOS (JSAN 2013)",
        },
        ScenarioInfo {
            name: server_workload::NAME,
            title: "Share of NON requests a server answers against the client's rate (Fig 9)",
            paper: "Ludovici, Moreno, Calveras: TinyCoAP: A Novel Constrained Application \
                    Protocol (CoAP) Implementation for Embedding RESTful Web Services in \
                    Wireless Sensor Networks Based on TinyOS (JSAN 2013)",
        },
    ];
    infos
        .into_iter()
        .filter_map(|info| {
            let (run, describe): (RunFn, fn() -> Vec<ParamInfo>) = match info.name {
                cc_bottleneck::NAME => (cc_bottleneck::run, cc_bottleneck::Params::describe),
                fading_goodput::NAME => (fading_goodput::run, fading_goodput::Params::describe),
                _ => return None,
            };
            Some(Legacy {
                info,
                run,
                describe,
            })
        })
        .collect()
}

/// Every scenario the lab can run, in `covey lab list` order: the one registry.
pub fn all() -> &'static [&'static dyn LabScenario] {
    static ALL: std::sync::OnceLock<Vec<&'static dyn LabScenario>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let legacy: &'static [Legacy] = Box::leak(legacy_scenarios().into_boxed_slice());
        let mut all: Vec<&'static dyn LabScenario> =
            legacy.iter().map(|s| s as &dyn LabScenario).collect();
        all.extend([
            &group_delay::GroupDelay as &dyn LabScenario,
            &group_interference::GroupInterference,
            &group_nested::GroupNested,
            &object_download::ObjectDownload,
            &protocols::Protocols,
            &server_workload::ServerWorkload,
        ]);
        all.sort_by_key(|s| s.info().name);
        all
    })
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

/// A legacy scenario's run function.
type RunFn = fn(&RunOptions) -> Result<Summary, LabError>;

/// A scenario not yet on the [`crate::framework::Scenario`] trait: its own run function.
struct Legacy {
    info: ScenarioInfo,
    run: RunFn,
    describe: fn() -> Vec<ParamInfo>,
}

impl LabScenario for Legacy {
    fn info(&self) -> ScenarioInfo {
        self.info
    }

    fn describe(&self) -> Vec<ParamInfo> {
        (self.describe)()
    }

    fn run(&self, options: &RunOptions) -> Result<Summary, LabError> {
        if options.shard.is_some() {
            return Err(LabError::InvalidOption(format!(
                "{} cannot run in shards yet",
                self.info.name
            )));
        }
        (self.run)(options)
    }

    fn merge(&self, _: &[PathBuf], _: &Path) -> Result<Summary, LabError> {
        Err(LabError::InvalidOption(format!(
            "{} cannot run in shards yet",
            self.info.name
        )))
    }

    fn table_problems(&self) -> Vec<String> {
        Vec::new()
    }

    fn reproducible(&self) -> bool {
        false
    }

    fn on_runner(&self) -> bool {
        false
    }
}
