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

pub mod condition;
pub mod paper;
mod parameters;
pub mod protocol;
pub mod report;
pub mod results;
pub mod trial;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use covey_emu::stacks::launcher::Launcher;
use covey_emu::stacks::programs;
use covey_emu::stacks::schedule::Schedule;
use covey_emu::stacks::testbed_network::{skip_reason, TestbedNetwork};
use covey_sim::sim::splitmix64;
use serde::Serialize;

use crate::scenarios::{Progress, RunOptions, Summary};
use crate::LabError;
use condition::Condition;
use protocol::Protocol;
use results::{Metrics, TrialRow};
use trial::{Externals, NODES};

/// The scenario's name.
pub const NAME: &str = "protocols";

/// The fixed parameters of the experiment.
#[derive(Debug, Clone, Serialize)]
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
        }
    }
}

/// Everything a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The experiment's parameters.
    pub params: Params,
    /// The conditions, in sweep order.
    pub conditions: Vec<Condition>,
    /// Every trial.
    pub rows: Vec<TrialRow>,
    /// Why the sweep did not run at all (not root).
    pub skipped: Option<String>,
    /// Wall-clock seconds.
    pub wall_s: f64,
}

/// Runs every protocol at every condition, `repetitions` times, one trial at a time (the
/// emulator runs in real time; trials in parallel would share its CPU).
pub fn run_sweep(
    params: &Params,
    conditions: &[Condition],
    repetitions: usize,
    seed: u64,
    work_dir: &std::path::Path,
    progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> Result<Outcome, LabError> {
    let started = Instant::now();
    let mut outcome = Outcome {
        params: params.clone(),
        conditions: conditions.to_vec(),
        rows: Vec::new(),
        skipped: skip_reason(),
        wall_s: 0.0,
    };
    if outcome.skipped.is_some() {
        return Ok(outcome);
    }
    let launcher = Launcher::from_current_exe(work_dir)?;
    let mosquitto = programs::mosquitto();
    let externals = Externals {
        dds_python: programs::dds_python(&params.dds_venv).ok(),
    };
    let protocols = Protocol::all(&params.cc);
    let schedule = Schedule {
        count: params.messages,
        rate_hz: params.rate_hz,
        size: params.size,
    };
    let drain = Duration::from_secs_f64(params.drain_s.clamp(0.0, 600.0));
    let total = conditions.len() * protocols.len() * repetitions;
    let mut done = 0;
    for (ci, condition) in conditions.iter().enumerate() {
        for repetition in 0..repetitions {
            for protocol in &protocols {
                let trial_seed =
                    splitmix64(seed ^ ((ci as u64) << 32) ^ ((repetition as u64) << 16));
                let (result, setup_failures) =
                    with_setup_retries(trial_seed, |link_seed| match (protocol, &mosquitto) {
                        (Protocol::Mqtt { .. }, Err(e)) => Err(LabError::Stack(e.to_string())),
                        _ => TestbedNetwork::star(
                            NODES[1],
                            &[NODES[0], NODES[2]],
                            &condition.link,
                            link_seed,
                        )
                        .map_err(LabError::from)
                        .and_then(|network| {
                            trial::run(&network, &launcher, &externals, protocol, schedule, drain)
                        }),
                    });
                outcome.rows.push(TrialRow {
                    condition: *condition,
                    protocol: protocol.label(),
                    reliable: protocol.reliable(),
                    repetition,
                    metrics: result.as_ref().ok().map(|o| Metrics::of(o, params.size)),
                    latencies_s: result
                        .as_ref()
                        .map(|o| o.latencies_s.clone())
                        .unwrap_or_default(),
                    error: result.err().map(|e| e.to_string()),
                    setup_failures,
                });
                done += 1;
                if let Some(p) = progress {
                    p(Progress { done, total });
                }
            }
        }
    }
    outcome.wall_s = started.elapsed().as_secs_f64();
    Ok(outcome)
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

/// Runs the scenario as `options` asks and writes its reports.
pub fn run(options: &RunOptions) -> Result<Summary, LabError> {
    let repetitions = options.runs.unwrap_or(1);
    if repetitions == 0 {
        return Err(LabError::InvalidOption("runs must be at least 1".into()));
    }
    let mut params = Params::with_overrides(&options.params)?;
    let set = |name: &str| options.params.iter().any(|(k, _)| k == name);
    if options.quick && !set("messages") {
        params.messages = 12;
    }
    if options.quick && !set("drain_s") {
        params.drain_s = 8.0;
    }
    let conditions = if options.quick {
        Condition::quick()
    } else {
        Condition::full()
    };
    let work_dir = options.out_dir.join(".work");
    let outcome = run_sweep(
        &params,
        &conditions,
        repetitions,
        options.seed,
        &work_dir,
        options.progress.as_deref(),
    )?;
    let _ = std::fs::remove_dir_all(&work_dir);
    report::write(&outcome, &options.out_dir)
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
