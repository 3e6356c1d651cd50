//! `group-interference`: unicast against multicast entities under Wi-Fi interference (seeds
//! 000/001, §5.2.2–5.2.5, Figs 10–12 and 14; §5.3, Table 8; spec `lab-experiments.md` §3).
//!
//! Method, as the paper's: entities of G = 10, 20 and 30 members behind one gateway (Table 7's
//! trees, G = 30 with one member more than the 29-member tree), queried 50 times each while
//! iperf traffic on Wi-Fi channel 13 runs at 0 to 28.5 Mbit/s in steps of 5 (and the
//! maximum). The unicast entity is CON with D = 100 ms between the EM's requests; the
//! multicast entity is created with `ect=multicast` through `/e`, so the EM assigns a group
//! and every member joins it through `/mc`, then each query is one NON request to the group
//! that members answer within the 5 s leisure. Metrics: member reliability, group
//! reliability, entity response time.
//!
//! Variants in the same run: Fig 14 (G = 10 unicast with ACK_TIMEOUT 0.5, 1 and 2 s on every
//! node; `--set ack_timeout_ms=` changes the main sweep's) and the office testbed of Table 8
//! (10 members, Wi-Fi at "low" and "normal" usage, see [`office`]); and a sensitivity sweep
//! of where the Wi-Fi sender stands ([`WIFI_DISTANCES_M`]), the one value of the setup the
//! paper does not give.
//!
//! The interference is modelled from the geometry ([`crate::scenarios::group::wifi`]); losses
//! come from the Wi-Fi bursts' SINR at each receiver, then CSMA/CA, MAC retries and CoAP's
//! retransmissions do what they do.

pub mod office;
pub mod paper;
pub mod report;

use covey_proto::Duration;
use serde::{Deserialize, Serialize};

use super::group::hop_profile::RING_STEP_M;
use super::group::outcome::deserialize_secs;
use super::group::params::Reception;
use super::group::sweep_outcome::{PointRun, SweepOutcome};
use super::group::testbed::{addr, sensor_uris};
use super::group::wifi::OPEN_ROOM_WIFI_M;
use super::group::{
    Creation, GroupParams, GroupPoint, HopProfile, QueryPlan, RunOutcome, Testbed, TestbedSpec,
    WifiSetup,
};
use crate::framework::{Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::LabError;

/// The scenario's name.
pub const NAME: &str = "group-interference";

/// The entity's name.
const ENTITY: &str = "room";

/// The delay between the EM's unicast requests, ms (the paper's).
pub const UNICAST_DELAY_MS: u64 = 100;

/// The fixed parameters of the experiment.
pub type Params = GroupParams;

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupInterference;

/// How the EM reaches the members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// CON requests, one per member, D apart.
    Unicast,
    /// One NON request to the entity's group.
    Multicast,
}

impl Mode {
    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Unicast => "unicast",
            Mode::Multicast => "multicast",
        }
    }
}

/// Which experiment a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Experiment {
    /// Figs 10–12: G, load, unicast or multicast.
    Main,
    /// Fig 14: G = 10 unicast, ACK_TIMEOUT varied.
    AckTimeout,
    /// Table 8: the office testbed.
    Office,
    /// Where the Wi-Fi sender stands: G = 20 and 30, both modes, the sender moved along its
    /// bearing ([`WIFI_DISTANCES_M`]).
    #[serde(rename = "wifi-position")]
    WifiPosition,
    /// The main sweep's G, loads and modes with capture: reception by SINR, the Wi-Fi bursts
    /// in the same sum (`reception=sinr`), beside the default overlap model.
    Capture,
}

/// The Wi-Fi sender's distances from the gateway of the position sweep, metres, along the
/// default's bearing: 3, 4, 5, 6 and 7.5 ring steps (60, 80, 100, 120 and 150 m). The paper
/// gives only "one point of the network"; 80 m ([`OPEN_ROOM_WIFI_M`], one ring step beyond
/// the largest group's farthest member) is the main sweep's and is not re-run: its points are
/// the main sweep's.
pub const WIFI_DISTANCES_M: [f64; 5] = [
    3.0 * RING_STEP_M,
    4.0 * RING_STEP_M,
    5.0 * RING_STEP_M,
    6.0 * RING_STEP_M,
    7.5 * RING_STEP_M,
];

/// The position sweep's distances in the quick run, metres: the default and one farther.
pub const QUICK_WIFI_DISTANCES_M: [f64; 2] = [4.0 * RING_STEP_M, 6.0 * RING_STEP_M];

/// The sizes, loads and distances of the position sweep.
#[derive(Debug, Clone, Serialize)]
pub struct PositionSweep {
    /// Group sizes.
    pub sizes: Vec<usize>,
    /// Wi-Fi loads, Mbit/s.
    pub loads_mbps: Vec<f64>,
    /// The Wi-Fi sender's distances from the gateway, metres; [`OPEN_ROOM_WIFI_M`] stands for
    /// the main sweep's points.
    pub distances_m: Vec<f64>,
}

/// One point of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Which experiment.
    pub experiment: Experiment,
    /// G.
    pub members: usize,
    /// Wi-Fi load, Mbit/s.
    pub load_mbps: f64,
    /// Unicast or multicast.
    pub mode: Mode,
    /// CoAP ACK_TIMEOUT on every node.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub ack_timeout: Duration,
    /// The Wi-Fi sender's distance from the gateway, metres, where the position sweep moves
    /// it (`None`: where its experiment puts it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wifi_m: Option<f64>,
}

/// One run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunPoint {
    /// Which experiment.
    pub experiment: Experiment,
    /// G.
    pub members: usize,
    /// Wi-Fi load, Mbit/s.
    pub load_mbps: f64,
    /// Unicast or multicast.
    pub mode: Mode,
    /// CoAP ACK_TIMEOUT on every node.
    #[serde(
        serialize_with = "crate::report::json::serialize_secs",
        deserialize_with = "deserialize_secs"
    )]
    pub ack_timeout: Duration,
    /// The Wi-Fi sender's distance from the gateway, metres, where the position sweep moves
    /// it (`None`: where its experiment puts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wifi_m: Option<f64>,
    /// Which seed of the point.
    pub seed_index: usize,
    /// The run seed.
    pub run_seed: u64,
}

/// The sizes, loads and variants of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Group sizes of the main experiment.
    pub sizes: Vec<usize>,
    /// Wi-Fi loads, Mbit/s.
    pub loads_mbps: Vec<f64>,
    /// ACK_TIMEOUT values of Fig 14, ms.
    pub ack_timeouts_ms: Vec<u64>,
    /// Whether the office variant runs.
    pub office: bool,
    /// The Wi-Fi position sweep.
    pub position: PositionSweep,
    /// Group sizes and loads run again with capture (SINR reception).
    pub capture: (Vec<usize>, Vec<f64>),
    /// Seeds per point.
    pub seeds: usize,
}

impl Sweep {
    /// The paper's sweep.
    pub fn full(seeds: usize) -> Sweep {
        Sweep {
            sizes: vec![10, 20, 30],
            loads_mbps: vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 28.5],
            ack_timeouts_ms: vec![500, 1000, 2000],
            office: true,
            position: PositionSweep {
                sizes: vec![20, 30],
                loads_mbps: vec![15.0, 28.5],
                distances_m: WIFI_DISTANCES_M.to_vec(),
            },
            capture: (vec![20, 30], vec![0.0, 15.0, 28.5]),
            seeds,
        }
    }

    /// A CI-sized sweep.
    pub fn quick(seeds: usize) -> Sweep {
        Sweep {
            sizes: vec![10, 20],
            loads_mbps: vec![0.0, 15.0, 28.5],
            ack_timeouts_ms: vec![500, 1000, 2000],
            office: true,
            position: PositionSweep {
                sizes: vec![20],
                loads_mbps: vec![28.5],
                distances_m: QUICK_WIFI_DISTANCES_M.to_vec(),
            },
            capture: (vec![20], vec![28.5]),
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

    /// Every point of the sweep, in report order; the main, office and position experiments
    /// run with `ack_timeout`. The position sweep comes last and skips the default distance,
    /// whose points are the main sweep's.
    pub fn points(&self, ack_timeout: Duration) -> Vec<SweepPoint> {
        let mut points = Vec::new();
        let mut push = |experiment, members, load_mbps, mode, ack_timeout| {
            points.push(SweepPoint {
                experiment,
                members,
                load_mbps,
                mode,
                ack_timeout,
                wifi_m: None,
            });
        };
        for &g in &self.sizes {
            for &load in &self.loads_mbps {
                for mode in [Mode::Unicast, Mode::Multicast] {
                    push(Experiment::Main, g, load, mode, ack_timeout);
                }
            }
        }
        for &ms in &self.ack_timeouts_ms {
            for &load in &self.loads_mbps {
                let t = Duration::from_millis(ms);
                push(Experiment::AckTimeout, 10, load, Mode::Unicast, t);
            }
        }
        if self.office {
            for usage in office::USAGES {
                for mode in [Mode::Unicast, Mode::Multicast] {
                    push(Experiment::Office, 10, usage.load_mbps, mode, ack_timeout);
                }
            }
        }
        let p = &self.position;
        for &d in p.distances_m.iter().filter(|&&d| d != OPEN_ROOM_WIFI_M) {
            for &g in &p.sizes {
                for &load in &p.loads_mbps {
                    for mode in [Mode::Unicast, Mode::Multicast] {
                        points.push(SweepPoint {
                            experiment: Experiment::WifiPosition,
                            members: g,
                            load_mbps: load,
                            mode,
                            ack_timeout,
                            wifi_m: Some(d),
                        });
                    }
                }
            }
        }
        let (sizes, loads) = &self.capture;
        for &g in sizes {
            for &load in loads {
                for mode in [Mode::Unicast, Mode::Multicast] {
                    points.push(SweepPoint {
                        experiment: Experiment::Capture,
                        members: g,
                        load_mbps: load,
                        mode,
                        ack_timeout,
                        wifi_m: None,
                    });
                }
            }
        }
        points
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

/// Runs `point`.
pub fn run_point(point: &RunPoint, params: &Params) -> Result<RunResult, LabError> {
    let profile = HopProfile::for_group(point.members).ok_or_else(|| {
        LabError::InvalidOption(format!("{NAME}: no hop profile for G = {}", point.members))
    })?;
    let wifi = match (point.experiment, point.wifi_m) {
        (Experiment::Office, _) => office::wifi(point.load_mbps),
        (_, Some(m)) => WifiSetup::open_room_at(point.load_mbps, m),
        (_, None) => WifiSetup::open_room(point.load_mbps),
    };
    let spec = TestbedSpec {
        islands: vec![profile],
        queue_frames: params.queue,
        ack_timeout: point.ack_timeout,
        wifi: Some(wifi),
        reception: if point.experiment == Experiment::Capture {
            Reception::Sinr.model()
        } else {
            params.reception.model()
        },
        run_seed: point.run_seed,
    };
    let mut testbed = Testbed::build(&spec, |gateways, members| {
        let er = sensor_uris(&members[0]);
        let body = match point.mode {
            Mode::Unicast => serde_json::json!({
                "name": ENTITY, "er": er, "delay": UNICAST_DELAY_MS,
            }),
            Mode::Multicast => serde_json::json!({
                "name": ENTITY, "er": er, "ect": "multicast",
            }),
        };
        QueryPlan {
            creations: vec![Creation {
                em: addr(gateways[0]),
                profile: body.to_string(),
            }],
            em: addr(gateways[0]),
            path: vec!["e".into(), ENTITY.into()],
            query: Vec::new(),
            queries: params.queries,
            gap: params.gap(),
        }
    })?;
    testbed.run(Duration::from_secs(u64::from(params.queries) * 300 + 3600));
    Ok(RunResult {
        point: *point,
        outcome: RunOutcome::of(&testbed, point.members),
    })
}

/// Everything a sweep produced; per point `x` is the load, the variant names experiment
/// and mode.
pub type Outcome = SweepOutcome<Sweep, RunResult>;

impl PointRun for RunResult {
    fn key(&self) -> (usize, f64, String) {
        (
            self.point.members,
            self.point.load_mbps,
            variant(&self.point),
        )
    }

    fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }
}

/// The variant label of a run.
pub fn variant(point: &RunPoint) -> String {
    match point.experiment {
        Experiment::Main => point.mode.name().to_string(),
        Experiment::AckTimeout => {
            format!("unicast, ACK_TIMEOUT {} s", point.ack_timeout.as_secs_f64())
        }
        Experiment::Office => format!("office {}", point.mode.name()),
        Experiment::WifiPosition => {
            position_variant(point.mode, point.wifi_m.unwrap_or(OPEN_ROOM_WIFI_M))
        }
        Experiment::Capture => capture_variant(point.mode),
    }
}

/// The variant label of the capture runs of `mode`.
pub fn capture_variant(mode: Mode) -> String {
    format!("{}, capture (SINR)", mode.name())
}

/// The variant label of the position sweep's `mode` with the Wi-Fi sender `wifi_m` metres
/// from the gateway.
pub fn position_variant(mode: Mode, wifi_m: f64) -> String {
    format!("{}, Wi-Fi at {wifi_m} m", mode.name())
}

impl Outcome {
    /// The merged point of `variant` for G = `members` at `load`.
    pub fn at(&self, variant: &str, members: usize, load: f64) -> Option<&GroupPoint> {
        self.points
            .iter()
            .find(|p| p.variant == variant && p.members == members && p.x == load)
    }

    /// The merged point of `mode` for G = `members` at `load` with the Wi-Fi sender `wifi_m`
    /// metres from the gateway: the main sweep's at the default distance.
    pub fn at_distance(
        &self,
        mode: Mode,
        members: usize,
        load: f64,
        wifi_m: f64,
    ) -> Option<&GroupPoint> {
        if wifi_m == OPEN_ROOM_WIFI_M {
            self.at(mode.name(), members, load)
        } else {
            self.at(&position_variant(mode, wifi_m), members, load)
        }
    }
}

impl Scenario for GroupInterference {
    type Params = Params;
    type Point = SweepPoint;
    type RunResult = RunResult;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "Unicast against multicast entities under Wi-Fi interference (Figs 10-12, \
                    14, Table 8)",
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

    fn points(&self, params: &Params, quick: bool) -> Vec<SweepPoint> {
        // The seeds per point do not change the points.
        Sweep::of(quick, super::group::DEFAULT_SEEDS).points(params.ack_timeout())
    }

    fn run_point(&self, params: &Params, trial: &Trial<SweepPoint>) -> Result<RunResult, LabError> {
        let p = trial.point;
        let point = RunPoint {
            experiment: p.experiment,
            members: p.members,
            load_mbps: p.load_mbps,
            mode: p.mode,
            ack_timeout: p.ack_timeout,
            wifi_m: p.wifi_m,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_sweep_comes_after_the_papers_runs_and_leaves_the_default_distance_to_the_main_sweep(
    ) {
        for quick in [true, false] {
            let sweep = Sweep::of(quick, 1);
            let points = sweep.points(Duration::from_secs(2));
            let first = points
                .iter()
                .position(|p| p.experiment == Experiment::WifiPosition)
                .expect("position points");
            assert!(points[..first].iter().all(|p| p.wifi_m.is_none()));
            // Then only the capture runs, added last so earlier points keep their seeds.
            let moved: Vec<&SweepPoint> = points[first..]
                .iter()
                .take_while(|p| p.experiment == Experiment::WifiPosition)
                .collect();
            let rest = &points[first + moved.len()..];
            assert!(rest.iter().all(|p| p.experiment == Experiment::Capture));
            let (sizes, loads) = &sweep.capture;
            assert_eq!(rest.len(), sizes.len() * loads.len() * 2);
            let p = &sweep.position;
            let others = p.distances_m.len() - 1;
            assert_eq!(moved.len(), others * p.sizes.len() * p.loads_mbps.len() * 2);
            assert!(moved.iter().all(|p| p.wifi_m != Some(OPEN_ROOM_WIFI_M)));
            // The main sweep has every point the default distance stands for.
            for &g in &p.sizes {
                for &load in &p.loads_mbps {
                    assert!(points[..first]
                        .iter()
                        .any(|q| q.experiment == Experiment::Main
                            && q.members == g
                            && q.load_mbps == load));
                }
            }
        }
        assert_eq!(WIFI_DISTANCES_M[1], OPEN_ROOM_WIFI_M);
    }
}
