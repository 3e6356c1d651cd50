//! `group-nested`: one 20-member entity against a nested entity of two 10-member entities
//! on two gateways (seeds 000/001, §5.2.4, Fig 13; spec `lab-experiments.md` §4).
//!
//! Method, as the paper's: two gateways joined by Ethernet, each the root of its own
//! 802.15.4 network of 10 members on its own channel (26 and 25; the networks overlap in
//! space and both sit under the Wi-Fi interferer on channel 13). Each gateway's EM holds a
//! unicast entity of its 10 members (D = 100 ms); the first EM also holds the outer entity
//! whose members are the two inner entities, `coap://<gw1>/e/a` (resolved locally) and
//! `coap://<gw2>/e/b` (over the wire), 100 ms between the sub-requests. The client creates
//! all three through `/e` and queries the outer one; the same run also queries one 10-member
//! and one 20-member entity on a single gateway (Table 7's trees) at the same loads.
//!
//! Not modelled: the "small amount of interference" between the two neighbouring 802.15.4
//! channels the paper mentions (each network is its own medium), and any processing time of
//! the EMs. For the nested entity the reliability columns count the two inner entities, not
//! the 20 members.

pub mod paper;
pub mod report;

use covey_proto::Duration;
use serde::{Deserialize, Serialize};

use super::group::sweep_outcome::{PointRun, SweepOutcome};
use super::group::testbed::{addr, sensor_uris, uri};
use super::group::{
    Creation, GroupParams, GroupPoint, HopProfile, QueryPlan, RunOutcome, Testbed, TestbedSpec,
    WifiSetup,
};
use crate::framework::{Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::LabError;

/// The scenario's name.
pub const NAME: &str = "group-nested";

/// The delay between an inner EM's requests to its members, ms.
pub const MEMBER_DELAY_MS: u64 = 100;

/// The fixed parameters of the experiment.
pub type Params = GroupParams;

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupNested;

/// The three entities compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// One 10-member entity on one gateway.
    Single10,
    /// One 20-member entity on one gateway.
    Single20,
    /// Two nested 10-member entities on two gateways.
    Nested2x10,
}

impl Layout {
    /// Every layout, in the order of the report.
    pub const ALL: [Layout; 3] = [Layout::Single10, Layout::Single20, Layout::Nested2x10];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Single10 => "one 10-member entity",
            Layout::Single20 => "one 20-member entity",
            Layout::Nested2x10 => "two nested 10-member entities",
        }
    }
}

/// One point of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Which entity.
    pub layout: Layout,
    /// Wi-Fi load, Mbit/s.
    pub load_mbps: f64,
}

/// One run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunPoint {
    /// Which entity.
    pub layout: Layout,
    /// Wi-Fi load, Mbit/s.
    pub load_mbps: f64,
    /// Which seed of the point.
    pub seed_index: usize,
    /// The run seed.
    pub run_seed: u64,
}

/// The loads and seeds of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Wi-Fi loads, Mbit/s.
    pub loads_mbps: Vec<f64>,
    /// Seeds per point.
    pub seeds: usize,
}

impl Sweep {
    /// The paper's loads.
    pub fn full(seeds: usize) -> Sweep {
        Sweep {
            loads_mbps: vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 28.5],
            seeds,
        }
    }

    /// A CI-sized sweep.
    pub fn quick(seeds: usize) -> Sweep {
        Sweep {
            loads_mbps: vec![0.0, 15.0, 28.5],
            seeds,
        }
    }

    /// The quick or the full sweep.
    pub fn of(quick: bool, seeds: usize) -> Sweep {
        if quick {
            Sweep::quick(seeds)
        } else {
            Sweep::full(seeds)
        }
    }

    /// Every point, in report order: each layout at each load.
    pub fn points(&self) -> Vec<SweepPoint> {
        Layout::ALL
            .iter()
            .flat_map(|&layout| {
                self.loads_mbps
                    .iter()
                    .map(move |&load_mbps| SweepPoint { layout, load_mbps })
            })
            .collect()
    }
}

/// One run's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The run.
    pub point: RunPoint,
    /// What it measured.
    pub outcome: RunOutcome,
}

fn profile(members: usize) -> Result<HopProfile, LabError> {
    HopProfile::for_group(members)
        .ok_or_else(|| LabError::InvalidOption(format!("{NAME}: no hop profile for G = {members}")))
}

/// Runs `point`.
pub fn run_point(point: &RunPoint, params: &Params) -> Result<RunResult, LabError> {
    let islands = match point.layout {
        Layout::Single10 => vec![profile(10)?],
        Layout::Single20 => vec![profile(20)?],
        Layout::Nested2x10 => vec![profile(10)?, profile(10)?],
    };
    let spec = TestbedSpec {
        islands,
        queue_frames: params.queue,
        ack_timeout: params.ack_timeout(),
        wifi: Some(WifiSetup::open_room(point.load_mbps)),
        reception: params.reception.model(),
        run_seed: point.run_seed,
    };
    let nested = point.layout == Layout::Nested2x10;
    let mut testbed = Testbed::build(&spec, |gateways, members| {
        let inner = |i: usize, name: &str| Creation {
            em: addr(gateways[i]),
            profile: serde_json::json!({
                "name": name, "er": sensor_uris(&members[i]), "delay": MEMBER_DELAY_MS,
            })
            .to_string(),
        };
        let (creations, queried) = if nested {
            let outer = Creation {
                em: addr(gateways[0]),
                profile: serde_json::json!({
                    "name": "both",
                    "er": [uri(gateways[0], "e/a"), uri(gateways[1], "e/b")],
                    "delay": paper::SUB_REQUEST_DELAY_MS,
                })
                .to_string(),
            };
            (vec![inner(0, "a"), inner(1, "b"), outer], "both")
        } else {
            (vec![inner(0, "a")], "a")
        };
        QueryPlan {
            creations,
            em: addr(gateways[0]),
            path: vec!["e".into(), queried.into()],
            query: Vec::new(),
            queries: params.queries,
            gap: params.gap(),
        }
    })?;
    testbed.run(Duration::from_secs(u64::from(params.queries) * 300 + 3600));
    let members = match point.layout {
        Layout::Single10 => 10,
        Layout::Single20 => 20,
        Layout::Nested2x10 => 2,
    };
    Ok(RunResult {
        point: *point,
        outcome: RunOutcome::of(&testbed, members),
    })
}

/// Everything a sweep produced; per (layout, load) `x` is the load, the variant the
/// layout's name.
pub type Outcome = SweepOutcome<Sweep, RunResult>;

impl PointRun for RunResult {
    fn key(&self) -> (usize, f64, String) {
        let l = self.point.layout;
        (self.outcome.members, self.point.load_mbps, l.name().into())
    }

    fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }
}

impl Outcome {
    /// The merged point of `layout` at `load`.
    pub fn at(&self, layout: Layout, load: f64) -> Option<&GroupPoint> {
        self.points
            .iter()
            .find(|p| p.variant == layout.name() && p.x == load)
    }
}

impl Scenario for GroupNested {
    type Params = Params;
    type Point = SweepPoint;
    type RunResult = RunResult;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "One 20-member entity against two nested 10-member entities on two gateways \
                    (Fig 13)",
            paper: super::GROUP_PAPER,
        }
    }

    fn params(&self) -> &'static [Param] {
        super::group::PARAMS
    }

    fn defaults(&self, quick: bool) -> Params {
        Params::defaults(quick)
    }

    fn default_seeds(&self, _quick: bool) -> usize {
        super::group::DEFAULT_SEEDS
    }

    fn points(&self, _: &Params, quick: bool) -> Vec<SweepPoint> {
        // The seeds per point do not change the points.
        Sweep::of(quick, super::group::DEFAULT_SEEDS).points()
    }

    fn run_point(&self, params: &Params, trial: &Trial<SweepPoint>) -> Result<RunResult, LabError> {
        let point = RunPoint {
            layout: trial.point.layout,
            load_mbps: trial.point.load_mbps,
            seed_index: trial.seed_index,
            run_seed: trial.seed,
        };
        run_point(&point, params)
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<RunResult>) -> Result<Outcome, LabError> {
        let sweep = Sweep::of(plan.quick, plan.seeds);
        Ok(Outcome::new(plan.params, sweep, plan.seed, runs))
    }

    fn report(&self, outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
        report::write(outcome, folder)
    }
}
