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

use std::path::PathBuf;
use std::sync::Arc;

use crate::LabError;

/// A scenario's name and what it reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioInfo {
    /// The name to run it by.
    pub name: &'static str,
    /// What it measures.
    pub title: &'static str,
    /// The paper it reproduces.
    pub paper: &'static str,
}

/// The group-communication paper (seeds 000/001).
const GROUP_PAPER: &str = "Ishaq, Hoebeke, Moerman, Demeester: Experimental Evaluation of \
                           Unicast and Multicast CoAP Group Communication (Sensors 2016)";

/// Every scenario the lab can run.
pub fn list() -> &'static [ScenarioInfo] {
    &[
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
            name: group_delay::NAME,
            title: "Entity response time against the delay between the EM's unicast requests \
                    (Figs 7-9, Table 7)",
            paper: GROUP_PAPER,
        },
        ScenarioInfo {
            name: group_interference::NAME,
            title: "Unicast against multicast entities under Wi-Fi interference (Figs 10-12, \
                    14, Table 8)",
            paper: GROUP_PAPER,
        },
        ScenarioInfo {
            name: group_nested::NAME,
            title: "One 20-member entity against two nested 10-member entities on two gateways \
                    (Fig 13)",
            paper: GROUP_PAPER,
        },
        ScenarioInfo {
            name: object_download::NAME,
            title: "Object download time and bytes: CoAP against HTTP/TCP, persistent HTTP, \
                    HTTP/2 and HTTP/UDP on real stacks over a Zigbee-like emulated link",
            paper: "Daniel, Kojo, Latvala: Experimental Evaluation of the CoAP, HTTP and SPDY \
                    Transport Services for Internet of Things (IDCS 2014)",
        },
        ScenarioInfo {
            name: protocols::NAME,
            title: "CoAP (NON, CON, Observe) against MQTT, DDS and JSON/UDP on real stacks over \
                    emulated lossy, slow links",
            paper: "Chen, Kunz: Performance Evaluation of IoT Protocols under a Constrained \
                    Wireless Access Network (MoWNeT 2016)",
        },
        ScenarioInfo {
            name: server_workload::NAME,
            title: "Share of NON requests a server answers against the client's rate (Fig 9)",
            paper: "Ludovici, Moreno, Calveras: TinyCoAP: A Novel Constrained Application \
                    Protocol (CoAP) Implementation for Embedding RESTful Web Services in \
                    Wireless Sensor Networks Based on TinyOS (JSAN 2013)",
        },
    ]
}

/// A scenario parameter that a run overrides by name (`--set name=value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The name to set it by.
    pub name: &'static str,
    /// Its value when not set: the paper's, or ours where the paper names none.
    pub default: String,
    /// The values it accepts.
    pub accepts: &'static str,
    /// What it sets.
    pub help: &'static str,
}

/// The parameters scenario `name` accepts, with their defaults (empty for a scenario that
/// describes none).
pub fn params(name: &str) -> Result<Vec<ParamInfo>, LabError> {
    match name {
        cc_bottleneck::NAME => Ok(cc_bottleneck::Params::describe()),
        fading_goodput::NAME => Ok(fading_goodput::Params::describe()),
        server_workload::NAME => Ok(server_workload::Params::describe()),
        group_delay::NAME | group_interference::NAME | group_nested::NAME => {
            Ok(group::GroupParams::describe())
        }
        protocols::NAME => Ok(protocols::Params::describe()),
        object_download::NAME => Ok(object_download::Params::describe()),
        _ if list().iter().any(|s| s.name == name) => Ok(Vec::new()),
        _ => Err(LabError::UnknownScenario(name.to_string())),
    }
}

/// How far a run has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Runs finished.
    pub done: usize,
    /// Runs in the sweep.
    pub total: usize,
}

/// A progress callback, called from worker threads as runs finish.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// How to run a scenario.
#[derive(Clone)]
pub struct RunOptions {
    /// The small, CI-sized sweep.
    pub quick: bool,
    /// The base seed: the same seed gives the same results.
    pub seed: u64,
    /// Seeds per sweep point (`None`: the scenario's default).
    pub runs: Option<usize>,
    /// Where the CSV, JSON, SVG and Markdown files go (created if missing).
    pub out_dir: PathBuf,
    /// Scenario parameters to override, as `(name, value)` pairs (e.g. `("queue", "10")`);
    /// each scenario documents the names it knows and rejects the others.
    pub params: Vec<(String, String)>,
    /// Called as runs finish.
    pub progress: Option<ProgressFn>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            quick: false,
            seed: 1,
            runs: None,
            out_dir: PathBuf::from("lab-results"),
            params: Vec::new(),
            progress: None,
        }
    }
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("quick", &self.quick)
            .field("seed", &self.seed)
            .field("runs", &self.runs)
            .field("out_dir", &self.out_dir)
            .field("params", &self.params)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What a scenario run produced.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The scenario.
    pub scenario: &'static str,
    /// Simulation runs made.
    pub runs: usize,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// The Markdown report (also written to a file), for printing.
    pub markdown: String,
}

/// Runs scenario `name`.
pub fn run(name: &str, options: &RunOptions) -> Result<Summary, LabError> {
    match name {
        cc_bottleneck::NAME => cc_bottleneck::run(options),
        fading_goodput::NAME => fading_goodput::run(options),
        server_workload::NAME => server_workload::run(options),
        group_delay::NAME => group_delay::run(options),
        group_interference::NAME => group_interference::run(options),
        group_nested::NAME => group_nested::run(options),
        protocols::NAME => protocols::run(options),
        object_download::NAME => object_download::run(options),
        _ => Err(LabError::UnknownScenario(name.to_string())),
    }
}
