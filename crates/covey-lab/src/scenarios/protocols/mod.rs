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
//! effort beside reliable, and reliable DDS over TCP (004's OpenDDS transport) beside UDP.
//! Capped links are tc-tbf token buckets, as 004's were (`shaper`, `tbf_burst`,
//! `tbf_latency_ms`); `protocols` and `conditions` pick part of the sweep.
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
    link_config, skip_reason, tbf_link_config_with, TestbedNetwork, TBF_BURST_BYTES, TBF_LATENCY,
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
    /// The virtual environment with Cyclone DDS for Python built with the TCP transport.
    pub dds_tcp_venv: PathBuf,
    /// How a capped link holds its rate: `serialiser`, every packet spaced by size/rate
    /// (netem's `rate`), or `tbf`, the token bucket 004 used (tc-tbf(8), docs/lab/tbf.md).
    pub shaper: String,
    /// tbf buckets to run, bytes: the first is the main setting, the others are each run
    /// with the first latency (a one-at-a-time sweep, as the paper varies its conditions).
    pub tbf_burst: Vec<u64>,
    /// tbf queue lengths to run as tc's `latency`, ms (`limit = rate × latency + burst`):
    /// the first is the main setting, the others are each run with the first burst.
    pub tbf_latency_ms: Vec<u64>,
    /// The protocols to run, by [`protocol::NAMES`].
    pub protocols: Vec<String>,
    /// The sweeps to run: `loss`, `latency`, `bandwidth`, `low-quality`.
    pub conditions: Vec<String>,
    /// Whether Mosquitto sets TCP_NODELAY on its client sockets (`set_tcp_nodelay`).
    pub broker_nodelay: bool,
}

/// tbf's two free parameters, as one trial ran them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TbfSetting {
    /// The bucket, bytes.
    pub burst_bytes: u64,
    /// The queue as tc's `latency`, ms.
    pub latency_ms: u64,
}

impl TbfSetting {
    /// The lab's default: [`TBF_BURST_BYTES`] and [`TBF_LATENCY`].
    pub const DEFAULT: TbfSetting = TbfSetting {
        burst_bytes: TBF_BURST_BYTES,
        latency_ms: TBF_LATENCY.as_millis() as u64,
    };

    /// The queue limit tc derives for a cap of `rate_bytes_per_s`, bytes.
    pub fn limit_bytes(&self, rate_bytes_per_s: f64) -> u64 {
        covey_emu::stacks::testbed_network::tbf_at(
            rate_bytes_per_s,
            self.burst_bytes,
            covey_proto::Duration::from_millis(self.latency_ms),
        )
        .limit_bytes
    }

    /// A short label: `burst 4096 B, latency 200 ms`.
    pub fn label(&self) -> String {
        format!(
            "burst {} B, latency {} ms",
            self.burst_bytes, self.latency_ms
        )
    }
}

/// The sweeps `--set conditions=` names.
pub const CONDITION_NAMES: &[&str] = &["loss", "latency", "bandwidth", "low-quality"];

impl Default for Params {
    fn default() -> Params {
        Params {
            messages: 100,
            rate_hz: paper::RATE_HZ,
            size: paper::MESSAGE_BYTES,
            cc: "cocoa".into(),
            drain_s: 15.0,
            dds_venv: PathBuf::from(programs::DDS_VENV),
            dds_tcp_venv: PathBuf::from(programs::DDS_TCP_VENV),
            shaper: "tbf".into(),
            tbf_burst: vec![TbfSetting::DEFAULT.burst_bytes],
            tbf_latency_ms: vec![TbfSetting::DEFAULT.latency_ms],
            protocols: protocol::NAMES.iter().map(|s| s.to_string()).collect(),
            conditions: CONDITION_NAMES.iter().map(|s| s.to_string()).collect(),
            // 004's broker, HiveMQ, runs on Netty, which sets TCP_NODELAY by default;
            // Mosquitto does not (report.rs, "How this differs from the paper").
            broker_nodelay: true,
        }
    }
}

impl Params {
    /// The full run's parameters, or the quick run's (12 messages). Both wait up to 15 s
    /// after the last send, so "lost" means the same in both; the wait ends as soon as every
    /// message arrived, and under tbf a TCP stream can stall for seconds after a loss.
    pub fn defaults(quick: bool) -> Params {
        if quick {
            Params {
                messages: 12,
                conditions: vec!["low-quality".into()],
                ..Params::default()
            }
        } else {
            Params::default()
        }
    }

    /// The tbf settings to run, main one first; none (one serialiser run) with
    /// `shaper=serialiser`.
    pub fn tbf_settings(&self) -> Vec<Option<TbfSetting>> {
        if self.shaper == "serialiser" {
            return vec![None];
        }
        let burst = self.tbf_burst.first().copied().unwrap_or(TBF_BURST_BYTES);
        let latency_ms = self
            .tbf_latency_ms
            .first()
            .copied()
            .unwrap_or(TbfSetting::DEFAULT.latency_ms);
        let mut all = vec![TbfSetting {
            burst_bytes: burst,
            latency_ms,
        }];
        for &b in self.tbf_burst.iter().skip(1) {
            all.push(TbfSetting {
                burst_bytes: b,
                latency_ms,
            });
        }
        for &l in self.tbf_latency_ms.iter().skip(1) {
            all.push(TbfSetting {
                burst_bytes: burst,
                latency_ms: l,
            });
        }
        let mut seen = Vec::new();
        all.retain(|s| {
            let new = !seen.contains(s);
            seen.push(*s);
            new
        });
        all.into_iter().map(Some).collect()
    }

    /// The conditions to run, in sweep order.
    pub fn conditions(&self) -> Vec<Condition> {
        Condition::full()
            .into_iter()
            .filter(|c| self.conditions.iter().any(|n| n == c.axis.name()))
            .collect()
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
        name: "tbf_burst",
        help: "tbf buckets, bytes; the first is the main one, each other is run with the \
               first latency",
        accepts: Accepts::ListOf(&Accepts::Integer {
            min: 64,
            max: 1_000_000,
            unit: "bytes",
        }),
    },
    Param {
        name: "tbf_latency_ms",
        help: "tbf queue as tc's latency (limit = rate × latency + burst); the first is the \
               main one, each other is run with the first burst",
        accepts: Accepts::ListOf(&Accepts::Integer {
            min: 1,
            max: 60_000,
            unit: "ms",
        }),
    },
    Param {
        name: "protocols",
        help: "the protocols to run",
        accepts: Accepts::ListOf(&Accepts::OneOf(protocol::NAMES)),
    },
    Param {
        name: "conditions",
        help: "the sweeps to run (low-quality alone in --quick)",
        accepts: Accepts::ListOf(&Accepts::OneOf(CONDITION_NAMES)),
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
        name: "broker_nodelay",
        help: "Mosquitto sets TCP_NODELAY (no Nagle) on its client sockets, as 004's HiveMQ (Netty) did",
        accepts: Accepts::Bool,
    },
    Param {
        name: "dds_venv",
        help: "virtual environment with Cyclone DDS for Python",
        accepts: Accepts::Text,
    },
    Param {
        name: "dds_tcp_venv",
        help: "virtual environment with Cyclone DDS for Python whose library has TCP (dds-tcp)",
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
    /// The tbf's burst and latency, or none for the serialiser.
    pub tbf: Option<TbfSetting>,
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
    /// Each protocol at each condition over its trials at the main shaper setting: medians
    /// with their 95 % intervals.
    pub points: Vec<PointSummary>,
    /// The tbf settings run, main one first (none for the serialiser).
    pub tbf_settings: Vec<Option<TbfSetting>>,
    /// With more than one tbf setting, each setting's point summaries, in setting order.
    pub tbf_sweep: Vec<(TbfSetting, Vec<PointSummary>)>,
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
        dds_tcp_python: programs::dds_python(&params.dds_tcp_venv).ok(),
        broker_nodelay: params.broker_nodelay,
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
                match point.tbf {
                    None => link_config(&point.condition.link),
                    Some(t) => tbf_link_config_with(
                        &point.condition.link,
                        t.burst_bytes,
                        covey_proto::Duration::from_millis(t.latency_ms),
                    ),
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

    /// One trial per point, as before: a quick run's nine trials take about a minute and a
    /// half, a full run's 135 about an hour; `--runs 3` is the paper's three repetitions.
    fn default_seeds(&self, _quick: bool) -> usize {
        1
    }

    /// Conditions in sweep order; at each, every tbf setting (main first); at each, the
    /// protocols in [`protocol::NAMES`] order.
    fn points(&self, params: &Params, _quick: bool) -> Vec<Point> {
        let protocols: Vec<Protocol> = protocol::NAMES
            .iter()
            .filter(|n| params.protocols.iter().any(|p| p == *n))
            .map(|n| Protocol::named(n, &params.cc))
            .collect();
        let settings = params.tbf_settings();
        let mut points = Vec::new();
        for condition in params.conditions() {
            // An uncapped link has no shaper: its tbf settings would all be the same run.
            let here: &[Option<TbfSetting>] = if condition.link.rate_bytes_per_s.is_some() {
                &settings
            } else {
                &settings[..1]
            };
            for &tbf in here {
                for protocol in &protocols {
                    points.push(Point {
                        condition,
                        protocol: protocol.clone(),
                        tbf,
                    });
                }
            }
        }
        points
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
                tbf: trial.point.tbf,
                repetition: trial.seed_index,
                seed: trial.seed,
                metrics: run.metrics,
                latencies_s: run.latencies_s,
                error: run.error,
                setup_failures: run.setup_failures,
            });
        }
        let conditions = plan.params.conditions();
        let tbf_settings = plan.params.tbf_settings();
        let main = tbf_settings[0];
        // Uncapped conditions ran once, under the main setting.
        let at = |s: Option<TbfSetting>| -> Vec<TrialRow> {
            rows.iter()
                .filter(|r| {
                    r.tbf == s || (r.condition.link.rate_bytes_per_s.is_none() && s == main)
                })
                .cloned()
                .collect()
        };
        let tbf_sweep = if tbf_settings.len() > 1 {
            tbf_settings
                .iter()
                .flatten()
                .map(|s| (*s, results::summarise(&at(Some(*s)))))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Outcome {
            params: plan.params.clone(),
            trials_per_point: plan.seeds,
            points: results::summarise(&at(main)),
            tbf_settings,
            tbf_sweep,
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

    fn trial_seconds(&self) -> f64 {
        // The committed full report: 4137 s for 135 trials, one at a time on real time.
        31.0
    }

    fn needs(&self) -> Option<&'static str> {
        Some("root and the real stacks (scripts/lab-stacks.sh installs them)")
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
        assert_eq!(points.len(), 15 * 9);
        assert_eq!(points[0].condition, Condition::full()[0]);
        assert_eq!(points[9].condition, Condition::full()[1]);
        assert_eq!(points[1].protocol.label(), "CoAP CON (cocoa)");
        assert!(points.iter().all(|p| p.tbf == Some(TbfSetting::DEFAULT)));
        let quick = Protocols.points(&Params::defaults(true), true);
        assert!(quick
            .iter()
            .all(|p| p.condition == Condition::low_quality()));
        assert_eq!(quick.len(), 9);
    }
}

#[cfg(test)]
mod selection_tests {
    use super::*;
    use crate::framework::param_table;

    fn points(pairs: &[(&str, &str)]) -> Result<Vec<Point>, String> {
        let sets: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let p = param_table::apply(NAME, PARAMS, &Params::defaults(false), &sets)
            .map_err(|e| e.to_string())?;
        Ok(Protocols.points(&p, false))
    }

    #[test]
    fn protocols_and_conditions_pick_points_in_the_pages_order() {
        let p = points(&[
            ("protocols", "dds-tcp,mqtt-qos0"),
            ("conditions", "low-quality"),
        ])
        .unwrap();
        let labels: Vec<String> = p.iter().map(|p| p.protocol.label()).collect();
        assert_eq!(labels, ["MQTT QoS 0", "DDS reliable (TCP)"]);
        assert!(p.iter().all(|p| p.condition == Condition::low_quality()));
        let bw = points(&[("protocols", "dds-reliable"), ("conditions", "bandwidth")]).unwrap();
        let caps: Vec<f64> = bw.iter().map(|p| p.condition.x()).collect();
        assert_eq!(caps, [50.0, 25.0, 12.5, 6.25]);
        assert!(points(&[("protocols", "amqp")])
            .unwrap_err()
            .contains("has an item `amqp` that is not one of coap-non"));
        assert!(points(&[("conditions", "lowquality")]).is_err());
    }

    #[test]
    fn a_tbf_sweep_varies_burst_and_latency_one_at_a_time_on_capped_links_only() {
        let p = points(&[
            ("protocols", "mqtt-qos1"),
            ("conditions", "loss,low-quality"),
            ("tbf_burst", "4096,1600,10000"),
            ("tbf_latency_ms", "50,200,1000"),
        ])
        .unwrap();
        let settings: Vec<(f64, u64, u64)> = p
            .iter()
            .map(|p| {
                let t = p.tbf.unwrap();
                (p.condition.link.loss, t.burst_bytes, t.latency_ms)
            })
            .collect();
        // Six loss points, uncapped: the main setting alone. Then the low-quality point with
        // the main setting first, each other burst, each other latency.
        assert_eq!(settings.len(), 6 + 5);
        assert!(settings[..6].iter().all(|s| (s.1, s.2) == (4096, 50)));
        assert_eq!(
            settings[6..],
            [
                (0.1, 4096, 50),
                (0.1, 1600, 50),
                (0.1, 10000, 50),
                (0.1, 4096, 200),
                (0.1, 4096, 1000)
            ]
        );
        let serialiser = points(&[("shaper", "serialiser"), ("tbf_burst", "1600,4096")]).unwrap();
        assert!(serialiser.iter().all(|p| p.tbf.is_none()));
        assert!(points(&[("tbf_burst", "10")])
            .unwrap_err()
            .contains("is out of range (bytes, 64 to 1000000)"));
    }

    #[test]
    fn tc_derives_the_limit_from_the_latency() {
        // limit = rate × latency + burst: 6250 B/s × 50 ms + 4096 B.
        assert_eq!(TbfSetting::DEFAULT.limit_bytes(6250.0), 4408);
        let t = TbfSetting {
            burst_bytes: 1600,
            latency_ms: 1000,
        };
        assert_eq!(t.limit_bytes(6250.0), 7850);
        assert_eq!(t.label(), "burst 1600 B, latency 1000 ms");
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
