//! `protocols`: CoAP against MQTT, DDS and a custom JSON-over-UDP pub/sub on real stacks
//! (seed 004: Chen and Kunz, "Performance evaluation of IoT protocols under a constrained
//! wireless access network"; spec `lab-experiments.md` §7).
//!
//! Method, as the paper's: a patient gateway sends 409-byte JSON telemetry, 4 messages/s,
//! through a central server to a caregiver; the server relays (CoAP, DDS), brokers (MQTT:
//! Mosquitto; the custom protocol: a small UDP broker) or holds an observed resource (CoAP
//! Observe). Loss, latency (uniform 80–120 % of the target) and the bandwidth cap are varied
//! one at a time on both links, plus the paper's low-quality network (10 %, 100 ± 20 ms,
//! 6.25 kB/s). The links are the emulator's: the simulator's link models on real time, with
//! every IP packet counted (what the paper used Wireshark for). Gateway and caregiver share
//! the host clock, so latency needs no synchronisation, as the paper's round trip did.
//!
//! Beyond the paper, which ran CoAP NON only: CoAP CON and CoAP Observe (CON notifications)
//! with a chosen congestion control (CoCoA by default), MQTT QoS 1 beside QoS 0, DDS best
//! effort beside reliable.
//!
//! A sweep point is one protocol at one condition; the runner runs `--runs` trials of each
//! (one by default, as before), one at a time, each on fresh links in fresh namespaces. Trial
//! k of every point draws its links' losses and delays from the runner's seed for k.

pub mod condition;
pub mod paper;
pub mod protocol;
pub mod report;
pub mod results;
pub mod trial;
pub mod work_dir;

use std::path::PathBuf;
use std::time::Duration;

use covey_emu::stacks::launcher::Launcher;
use covey_emu::stacks::programs;
use covey_emu::stacks::schedule::Schedule;
use covey_emu::stacks::testbed_network::{
    link_config, skip_reason, tbf_link_config, TestbedNetwork,
};
use covey_sim::sim::splitmix64;
use serde::{Deserialize, Serialize};

use crate::framework::{Accepts, Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::LabError;
use condition::Condition;
use protocol::Protocol;
use results::{Metrics, PointSummary, TrialRow};
use trial::{Externals, NODES};
use work_dir::WorkDir;

/// The scenario's name.
pub const NAME: &str = "protocols";

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct Protocols;

/// The congestion controls CoAP can run with, as `--set cc=` names them (covey-proto's
/// `Algorithm` names; a test keeps the two lists together).
pub const CONGESTION_CONTROLS: &[&str] = &[
    "default",
    "cocoa",
    "cocoa-strong",
    "linux",
    "peakhopper",
    "rfc6298",
];

/// The fixed parameters of the experiment, as `--set` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Messages per trial (the paper: 10 minutes, 2400).
    pub messages: u64,
    /// Messages per second.
    pub rate_hz: f64,
    /// Bytes of JSON per message.
    pub size: usize,
    /// CoAP congestion control for CON and Observe.
    pub cc: String,
    /// How long the caregiver may still receive after the last message was sent, seconds.
    pub drain_s: f64,
    /// The virtual environment with Cyclone DDS for Python.
    pub dds_venv: PathBuf,
    /// How a capped link holds its rate: `serialiser`, every packet spaced by size/rate
    /// (netem's `rate`), or `tbf`, the token bucket 004 used (tc-tbf(8), docs/lab/tbf.md).
    pub shaper: String,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            messages: 100,
            rate_hz: paper::RATE_HZ,
            size: paper::MESSAGE_BYTES,
            cc: "cocoa".into(),
            drain_s: 15.0,
            dds_venv: PathBuf::from(programs::DDS_VENV),
            // tbf is 004's shaper, but its burst and limit are not in the paper and the
            // page's numbers come from the serialiser: tbf becomes the default with the full
            // run and the sweep over burst and limit (docs/lab/tbf.md).
            shaper: "serialiser".into(),
        }
    }
}

impl Params {
    /// The full run's parameters, or the quick run's (12 messages, 8 s of drain).
    pub fn defaults(quick: bool) -> Params {
        if quick {
            Params {
                messages: 12,
                drain_s: 8.0,
                ..Params::default()
            }
        } else {
            Params::default()
        }
    }
}

/// The parameter table.
const PARAMS: &[Param] = &[
    Param {
        name: "shaper",
        help: "how a capped link holds its rate: 004's tbf token bucket, or a serialiser",
        accepts: Accepts::OneOf(&["tbf", "serialiser"]),
    },
    Param {
        name: "messages",
        help: "telemetry messages per trial (12 in --quick)",
        accepts: Accepts::Integer {
            min: 1,
            max: 100_000,
            unit: "",
        },
    },
    Param {
        name: "rate_hz",
        help: "messages per second",
        accepts: Accepts::Number {
            min: 0.01,
            max: 1000.0,
            unit: "Hz",
        },
    },
    Param {
        name: "size",
        help: "bytes of JSON per message",
        accepts: Accepts::Integer {
            min: 96,
            max: 60_000,
            unit: "bytes",
        },
    },
    Param {
        name: "cc",
        help: "CoAP congestion control of the CON and Observe runs",
        accepts: Accepts::OneOf(CONGESTION_CONTROLS),
    },
    Param {
        name: "drain_s",
        help: "seconds the caregiver may still receive after the last send (8 in --quick)",
        accepts: Accepts::Number {
            min: 0.0,
            max: 600.0,
            unit: "s",
        },
    },
    Param {
        name: "dds_venv",
        help: "virtual environment with Cyclone DDS for Python",
        accepts: Accepts::Text,
    },
];

/// One point of the sweep: a protocol at a network condition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The network condition.
    pub condition: Condition,
    /// The protocol.
    pub protocol: Protocol,
}

/// The conditions of the full sweep or the quick one.
pub fn conditions(quick: bool) -> Vec<Condition> {
    if quick {
        Condition::quick()
    } else {
        Condition::full()
    }
}

/// What one trial measured, as shards carry it (the point is the trial's).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRun {
    /// The metrics, when the trial ran.
    pub metrics: Option<Metrics>,
    /// Each received message's latency, seconds, in sequence order.
    pub latencies_s: Vec<f64>,
    /// Why it did not run (a missing package, a stack that never became ready).
    pub error: Option<String>,
    /// Earlier attempts whose stacks did not become ready, and why.
    pub setup_failures: Vec<String>,
    /// Why no trial can run on this machine (not root): the trial makes no row.
    pub not_run: Option<String>,
}

/// Everything a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The experiment's parameters.
    pub params: Params,
    /// Trials per point (`--runs`).
    pub trials_per_point: usize,
    /// The conditions, in sweep order.
    pub conditions: Vec<Condition>,
    /// Every trial, in sweep order: each point's trials one after the other.
    pub rows: Vec<TrialRow>,
    /// Each protocol at each condition over its trials: medians with their 95 % intervals.
    pub points: Vec<PointSummary>,
    /// Why the sweep did not run at all (not root).
    pub skipped: Option<String>,
}

/// Attempts a trial gets when its stacks do not become ready (discovery or connection
/// through the lossy link took too long): the experimenter starts the trial again on fresh
/// links, and the page reports every failed attempt.
pub const SETUP_ATTEMPTS: usize = 3;

/// Runs `attempt` with the links' seed until its stacks become ready, at most
/// [`SETUP_ATTEMPTS`] times; returns the last result and why earlier attempts failed. Each
/// retry draws its own losses: with the same seed the same set-up packets would be lost again.
fn with_setup_retries<T>(
    seed: u64,
    mut attempt: impl FnMut(u64) -> Result<T, LabError>,
) -> (Result<T, LabError>, Vec<String>) {
    let mut failures = Vec::new();
    loop {
        let link_seed = match failures.len() {
            0 => seed,
            n => splitmix64(seed ^ n as u64),
        };
        match attempt(link_seed) {
            Err(e) if trial::is_setup_timeout(&e) && failures.len() + 1 < SETUP_ATTEMPTS => {
                failures.push(e.to_string())
            }
            other => return (other, failures),
        }
    }
}

/// Runs `protocol` at `condition` once, on links seeded with `seed`, in fresh namespaces.
pub fn run_trial(params: &Params, point: &Point, seed: u64) -> Result<TrialRun, LabError> {
    if let Some(reason) = skip_reason() {
        return Ok(TrialRun {
            metrics: None,
            latencies_s: Vec::new(),
            error: None,
            setup_failures: Vec::new(),
            not_run: Some(reason),
        });
    }
    let work = WorkDir::new(NAME)?;
    let launcher = Launcher::from_current_exe(work.path())?;
    let mosquitto = programs::mosquitto();
    let externals = Externals {
        dds_python: programs::dds_python(&params.dds_venv).ok(),
    };
    let schedule = Schedule {
        count: params.messages,
        rate_hz: params.rate_hz,
        size: params.size,
    };
    let drain = Duration::from_secs_f64(params.drain_s);
    let (result, setup_failures) =
        with_setup_retries(seed, |link_seed| match (&point.protocol, &mosquitto) {
            (Protocol::Mqtt { .. }, Err(e)) => Err(LabError::Stack(e.to_string())),
            _ => TestbedNetwork::star_with_link(
                NODES[1],
                &[NODES[0], NODES[2]],
                match params.shaper.as_str() {
                    "serialiser" => link_config(&point.condition.link),
                    _ => tbf_link_config(&point.condition.link),
                },
                link_seed,
            )
            .map_err(LabError::from)
            .and_then(|network| {
                trial::run(
                    &network,
                    &launcher,
                    &externals,
                    &point.protocol,
                    schedule,
                    drain,
                )
            }),
        });
    Ok(TrialRun {
        metrics: result.as_ref().ok().map(|o| Metrics::of(o, params.size)),
        latencies_s: result
            .as_ref()
            .map(|o| o.latencies_s.clone())
            .unwrap_or_default(),
        error: result.err().map(|e| e.to_string()),
        setup_failures,
        not_run: None,
    })
}

impl Scenario for Protocols {
    type Params = Params;
    type Point = Point;
    type RunResult = TrialRun;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "CoAP (NON, CON, Observe) against MQTT, DDS and JSON/UDP on real stacks over \
                    emulated lossy, slow links",
            paper: "Chen, Kunz: Performance Evaluation of IoT Protocols under a Constrained \
                    Wireless Access Network (MoWNeT 2016)",
        }
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn defaults(&self, quick: bool) -> Params {
        Params::defaults(quick)
    }

    /// One trial per point, as before: a quick run's eight trials take about a minute and a
    /// half, a full run's 120 about an hour; `--runs 3` is the paper's three repetitions.
    fn default_seeds(&self, _quick: bool) -> usize {
        1
    }

    fn points(&self, params: &Params, quick: bool) -> Vec<Point> {
        let protocols = Protocol::all(&params.cc);
        conditions(quick)
            .into_iter()
            .flat_map(|condition| {
                protocols.iter().map(move |protocol| Point {
                    condition,
                    protocol: protocol.clone(),
                })
            })
            .collect()
    }

    fn run_point(&self, params: &Params, trial: &Trial<Point>) -> Result<TrialRun, LabError> {
        run_trial(params, &trial.point, trial.seed)
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<TrialRun>) -> Result<Outcome, LabError> {
        let mut skipped = None;
        let mut rows = Vec::new();
        for (trial, run) in plan.trials.iter().zip(runs) {
            if let Some(reason) = run.not_run {
                skipped.get_or_insert(reason);
                continue;
            }
            rows.push(TrialRow {
                condition: trial.point.condition,
                protocol: trial.point.protocol.label(),
                reliable: trial.point.protocol.reliable(),
                repetition: trial.seed_index,
                seed: trial.seed,
                metrics: run.metrics,
                latencies_s: run.latencies_s,
                error: run.error,
                setup_failures: run.setup_failures,
            });
        }
        let conditions = conditions(plan.quick);
        Ok(Outcome {
            params: plan.params.clone(),
            trials_per_point: plan.seeds,
            points: results::summarise(&rows),
            conditions,
            skipped: if rows.is_empty() { skipped } else { None },
            rows,
        })
    }

    fn report(&self, outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
        report::write(outcome, folder)
    }

    fn parallel(&self) -> bool {
        false
    }

    fn reproducible(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::param_table;

    fn apply(pairs: &[(&str, &str)]) -> Result<Params, String> {
        let sets: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        param_table::apply(NAME, PARAMS, &Params::defaults(false), &sets).map_err(|e| e.to_string())
    }

    #[test]
    fn the_table_matches_the_parameters_and_refuses_what_it_used_to_clamp() {
        for quick in [false, true] {
            let problems = param_table::table_problems(PARAMS, &Params::defaults(quick));
            assert!(problems.is_empty(), "{problems:?}");
        }
        let p = apply(&[("messages", "30"), ("cc", "linux"), ("dds_venv", "/v")]).unwrap();
        assert_eq!((p.messages, p.cc.as_str()), (30, "linux"));
        assert_eq!(p.dds_venv, PathBuf::from("/v"));
        assert!(apply(&[("cc", "reno")])
            .unwrap_err()
            .contains("is not one of default, cocoa"));
        assert!(apply(&[("rate_hz", "-1")])
            .unwrap_err()
            .contains("is out of range (Hz, 0.01 to 1000)"));
        assert_eq!(
            apply(&[("size", "50")]).unwrap_err(),
            "invalid option: protocols: `size=50` is out of range (bytes, 96 to 60000)"
        );
        assert!(apply(&[("drain_s", "601")])
            .unwrap_err()
            .contains("is out of range"));
        assert!(apply(&[("colour", "blue")])
            .unwrap_err()
            .contains("has no parameter `colour`"));
    }

    #[test]
    fn the_congestion_controls_are_the_engines() {
        let names: Vec<&str> = covey_proto::cc::Algorithm::ALL
            .iter()
            .map(|a| a.name())
            .collect();
        assert_eq!(names, CONGESTION_CONTROLS);
    }

    #[test]
    fn a_point_is_a_protocol_at_a_condition_in_condition_order() {
        let points = Protocols.points(&Params::defaults(false), false);
        assert_eq!(points.len(), 15 * 8);
        assert_eq!(points[0].condition, Condition::full()[0]);
        assert_eq!(points[8].condition, Condition::full()[1]);
        assert_eq!(points[1].protocol.label(), "CoAP CON (cocoa)");
        let quick = Protocols.points(&Params::defaults(true), true);
        assert!(quick
            .iter()
            .all(|p| p.condition == Condition::low_quality()));
        assert_eq!(quick.len(), 8);
    }
}

#[cfg(test)]
mod setup_retry_tests {
    use super::*;

    #[test]
    fn a_trial_whose_stacks_never_become_ready_is_retried_on_new_links_up_to_the_limit() {
        let never = || LabError::Stack("DDS relay did not become ready within 75 s".into());
        let mut seeds = Vec::new();
        let (result, failures) = with_setup_retries(7, |s| {
            seeds.push(s);
            Err::<(), _>(never())
        });
        assert!(result.is_err());
        assert_eq!(failures.len(), SETUP_ATTEMPTS - 1);
        assert_eq!(seeds.len(), SETUP_ATTEMPTS);
        assert_eq!(seeds[0], 7, "the first attempt keeps the trial's seed");
        seeds.dedup();
        assert_eq!(seeds.len(), SETUP_ATTEMPTS, "each retry draws new losses");

        // Other errors and successes end at once.
        let (r, f) = with_setup_retries(7, |_| Err::<(), _>(LabError::Stack("no broker".into())));
        assert!(r.is_err() && f.is_empty());
        let mut calls = 0;
        let (r, f) = with_setup_retries(7, |_| {
            calls += 1;
            if calls == 1 {
                Err(never())
            } else {
                Ok(calls)
            }
        });
        assert_eq!((r.unwrap(), f.len()), (2, 1));
    }
}
