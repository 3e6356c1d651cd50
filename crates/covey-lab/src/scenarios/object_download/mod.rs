//! `object-download`: download time and bytes per object for CoAP against HTTP over TCP,
//! persistent HTTP, HTTP/2 and HTTP over UDP, on real stacks over a Zigbee-like emulated link
//! (seed 003 part 2: Daniel, Kojo, Latvala, CoAP against HTTP and SPDY; HTTP/2 stands in for
//! SPDY; seed 002 compared HTTP/UDP).
//!
//! Method: a client and a server joined by one emulated link with the `cc-bottleneck`
//! scenario's parameters (20 kbit/s, 20 ms one way, a drop-tail queue of 1000 packets, no
//! loss). A sweep point is one service at one object size; each trial of it builds a fresh
//! link, starts the service's server, and has one fresh client process download the object
//! `repeats` times one after the other (so a persistent connection is set up once per trial
//! and its set-up is shared by the trial's objects). Time is request to last byte; bytes are
//! every IP byte on the link in both directions, from the client's start until the link has
//! gone quiet after it stopped, divided by the objects.
//!
//! The emulator carries whole IP packets with an MTU of at least 576 bytes (the TUN device's
//! floor for IPv4 here), not the 127-byte frames of 802.15.4; larger datagrams are fragmented
//! by IP, not by 6LoWPAN.

pub mod report;
pub mod transfer;

use std::time::{Duration, Instant};

use covey_emu::stacks::launcher::Launcher;
use covey_emu::stacks::network::{Network, Traffic};
use covey_emu::stacks::telemetry::AgentEvent;
use covey_emu::stacks::testbed_network::{skip_reason, TestbedNetwork, QUEUE_PACKETS};
use covey_emu::stacks::RunFor;
use covey_emu::{emulated_link, EmuError, MessageCounts, Testbed};
use covey_sim::media::{LossSpec, PropagationDelay};
use serde::{Deserialize, Serialize};

use super::protocols::work_dir::WorkDir;
use super::protocols::CONGESTION_CONTROLS;
use crate::framework::{Accepts, Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::stats;
use crate::LabError;
use transfer::Transfer;

/// The scenario's name.
pub const NAME: &str = "object-download";

/// The link: the `cc-bottleneck` scenario's Zigbee-like bottleneck.
pub const RATE_BPS: u64 = 20_000;

/// One-way delay of the link.
pub const ONE_WAY_DELAY: Duration = Duration::from_millis(20);

/// The TUN devices' MTU (the emulator's floor).
pub const MTU: u16 = 576;

/// How long one trial's downloads may take before the rest count as failed.
const SIZE_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the server may take to say it is ready.
const SERVER_READY: Duration = Duration::from_secs(30);

/// How long the link must carry nothing new before a trial's traffic is read, so that what
/// is still on its way when the client stops (the last acknowledgements, a connection's
/// closing) counts in the trial that sent it: several times a small packet's time on the
/// link (52 bytes at 20 kbit/s, 21 ms, and 20 ms of delay).
const QUIET: Duration = Duration::from_millis(300);

/// The longest wait for the link to go quiet.
const QUIET_LIMIT: Duration = Duration::from_secs(3);

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObjectDownload;

/// The parameters of a sweep, as `--set` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Object sizes, bytes.
    pub sizes: Vec<u64>,
    /// Downloads per trial, one after the other on one client.
    pub repeats: usize,
    /// CoAP congestion control.
    pub cc: String,
}

impl Params {
    /// 10 to 1200 bytes, 10 downloads each.
    pub fn full() -> Params {
        Params {
            sizes: vec![10, 50, 100, 200, 400, 600, 800, 1000, 1200],
            repeats: 10,
            cc: "default".into(),
        }
    }

    /// Three sizes, two downloads each.
    pub fn quick() -> Params {
        Params {
            sizes: vec![10, 400, 1200],
            repeats: 2,
            cc: "default".into(),
        }
    }
}

/// The parameter table.
const PARAMS: &[Param] = &[
    Param {
        name: "sizes",
        help: "object sizes (10,400,1200 in --quick)",
        accepts: Accepts::ListOf(&Accepts::Integer {
            min: 1,
            max: 60_000,
            unit: "bytes",
        }),
    },
    Param {
        name: "repeats",
        help: "downloads per trial, one after the other on one client (2 in --quick); \
               --runs sets the trials",
        accepts: Accepts::Integer {
            min: 1,
            max: 1000,
            unit: "",
        },
    },
    Param {
        name: "cc",
        help: "CoAP congestion control",
        accepts: Accepts::OneOf(CONGESTION_CONTROLS),
    },
];

/// One point of the sweep: a service at an object size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Point {
    /// The service.
    pub transfer: Transfer,
    /// Object size, bytes.
    pub size: u64,
}

/// [`Traffic`] for serde both ways (shards carry it).
#[derive(Serialize, Deserialize)]
#[serde(remote = "Traffic")]
struct TrafficDef {
    packets: u64,
    bytes: u64,
    #[serde(with = "MessageCountsDef")]
    messages: MessageCounts,
}

/// [`MessageCounts`] for serde both ways.
#[derive(Serialize, Deserialize)]
#[serde(remote = "MessageCounts")]
struct MessageCountsDef {
    first: u64,
    repeats: u64,
    unlabelled: u64,
}

/// What one trial measured, as shards carry it (the point is the trial's).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRun {
    /// Each download's time, seconds.
    pub times_s: Vec<f64>,
    /// Objects that failed.
    pub failed: usize,
    /// IP traffic of the trial's downloads (both directions).
    #[serde(with = "TrafficDef")]
    pub traffic: Traffic,
    /// Why the trial did not run (its link or server did not come up).
    pub error: Option<String>,
    /// Why no trial can run on this machine (not root).
    pub not_run: Option<String>,
}

/// One service at one size, over its trials.
#[derive(Debug, Clone, Serialize)]
pub struct SizePoint {
    /// The service's label.
    pub transfer: String,
    /// Object size, bytes.
    pub size: u64,
    /// Trials run.
    pub trials: usize,
    /// Objects downloaded.
    pub downloaded: usize,
    /// Objects that failed.
    pub failed: usize,
    /// Each download's time, seconds, trial after trial.
    pub times_s: Vec<f64>,
    /// IP traffic of the downloads (both directions), summed over the trials.
    pub traffic: Traffic,
    /// Why a trial did not run (the first such reason).
    pub error: Option<String>,
}

impl SizePoint {
    /// The mean download time, seconds.
    pub fn mean_s(&self) -> f64 {
        stats::mean(&self.times_s).unwrap_or(f64::NAN)
    }

    /// IP bytes per downloaded object.
    pub fn bytes_per_object(&self) -> f64 {
        if self.downloaded == 0 {
            f64::NAN
        } else {
            self.traffic.bytes as f64 / self.downloaded as f64
        }
    }
}

/// Everything a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The parameters.
    pub params: Params,
    /// Trials per point (`--runs`).
    pub trials_per_point: usize,
    /// One point per service and size.
    pub points: Vec<SizePoint>,
    /// Why the sweep did not run at all (not root).
    pub skipped: Option<String>,
}

/// A two-node testbed joined by the Zigbee-like link.
fn testbed(seed: u64) -> Result<Testbed, EmuError> {
    let link = emulated_link(
        RATE_BPS,
        PropagationDelay::Fixed(covey_proto::Duration::from_nanos(
            ONE_WAY_DELAY.as_nanos() as u64
        )),
        LossSpec::None,
        QUEUE_PACKETS * 10,
    );
    Testbed::builder()
        .seed(seed)
        .mtu(MTU)
        .node("client")
        .node("server")
        .symmetric_link("client", "server", link)
        .build()
}

/// The link's traffic once it has carried nothing new for [`QUIET`] (or after
/// [`QUIET_LIMIT`]).
fn quiet_traffic(network: &dyn Network) -> Result<Traffic, LabError> {
    let deadline = Instant::now() + QUIET_LIMIT;
    let mut last = network.traffic()?;
    loop {
        std::thread::sleep(QUIET);
        let now = network.traffic()?;
        if now == last || Instant::now() >= deadline {
            return Ok(now);
        }
        last = now;
    }
}

/// Downloads `repeats` objects of `point.size` with `point.transfer` on a fresh link seeded
/// with `seed`: the server first, then one client for every object.
fn download(
    params: &Params,
    point: &Point,
    seed: u64,
    launcher: &Launcher,
) -> Result<TrialRun, LabError> {
    let network = TestbedNetwork::from_testbed(
        testbed(seed).map_err(|e| LabError::Stack(format!("emulator: {e}")))?,
    );
    let server_ip = network.address("server")?;
    let run_for = RunFor::secs((SERVER_READY + SIZE_TIMEOUT).as_secs_f64());
    let mut server = launcher.agent(
        &network,
        "server",
        &point.transfer.server(server_ip, run_for),
    )?;
    server.wait_ready(SERVER_READY)?;
    let before = network.traffic()?;
    let repeats = params.repeats;
    let agent = point
        .transfer
        .client(server_ip, vec![point.size; repeats], &params.cc);
    let mut client = launcher.agent(&network, "client", &agent)?;
    client.wait_for(SIZE_TIMEOUT, |events| {
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::Downloaded { .. } | AgentEvent::Failed { .. }))
            .count()
            >= repeats
    });
    let events = client.stop();
    let traffic = quiet_traffic(&network)?.since(&before);
    let times_s: Vec<f64> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Downloaded { elapsed_ns, .. } => Some(*elapsed_ns as f64 / 1e9),
            _ => None,
        })
        .collect();
    Ok(TrialRun {
        failed: repeats - times_s.len().min(repeats),
        times_s,
        traffic,
        error: None,
        not_run: None,
    })
}

/// Runs one trial of `point`: a failure to set up is the trial's result, with its reason.
pub fn run_trial(params: &Params, point: &Point, seed: u64) -> Result<TrialRun, LabError> {
    let failed = |error: Option<String>, not_run: Option<String>| TrialRun {
        times_s: Vec::new(),
        failed: params.repeats,
        traffic: Traffic::default(),
        error,
        not_run,
    };
    if let Some(reason) = skip_reason() {
        return Ok(failed(None, Some(reason)));
    }
    let work = WorkDir::new(NAME)?;
    let launcher = Launcher::from_current_exe(work.path())?;
    Ok(download(params, point, seed, &launcher)
        .unwrap_or_else(|e| failed(Some(e.to_string()), None)))
}

/// The trials of each point pooled, in sweep order.
fn pool(plan: &Plan<'_, ObjectDownload>, runs: Vec<TrialRun>) -> Vec<SizePoint> {
    let mut points: Vec<SizePoint> = Vec::new();
    for (trial, run) in plan.trials.iter().zip(runs) {
        let label = trial.point.transfer.label();
        let same = |p: &SizePoint| p.transfer == label && p.size == trial.point.size;
        if !points.last().is_some_and(same) {
            points.push(SizePoint {
                transfer: label.into(),
                size: trial.point.size,
                trials: 0,
                downloaded: 0,
                failed: 0,
                times_s: Vec::new(),
                traffic: Traffic::default(),
                error: None,
            });
        }
        let Some(p) = points.last_mut() else {
            continue;
        };
        p.trials += 1;
        p.downloaded += run.times_s.len();
        p.failed += run.failed;
        p.times_s.extend(run.times_s);
        p.traffic = Traffic {
            packets: p.traffic.packets + run.traffic.packets,
            bytes: p.traffic.bytes + run.traffic.bytes,
            messages: p.traffic.messages.plus(&run.traffic.messages),
        };
        if p.error.is_none() {
            p.error = run.error;
        }
    }
    points
}

impl Scenario for ObjectDownload {
    type Params = Params;
    type Point = Point;
    type RunResult = TrialRun;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "Object download time and bytes: CoAP against HTTP/TCP, persistent HTTP, \
                    HTTP/2 and HTTP/UDP on real stacks over a Zigbee-like emulated link",
            paper: "Daniel, Kojo, Latvala: Experimental Evaluation of the CoAP, HTTP and SPDY \
                    Transport Services for Internet of Things (IDCS 2014)",
        }
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn defaults(&self, quick: bool) -> Params {
        if quick {
            Params::quick()
        } else {
            Params::full()
        }
    }

    /// One trial of `repeats` downloads per service and size, as before.
    fn default_seeds(&self, _quick: bool) -> usize {
        1
    }

    fn points(&self, params: &Params, _quick: bool) -> Vec<Point> {
        Transfer::ALL
            .iter()
            .flat_map(|&transfer| {
                params
                    .sizes
                    .iter()
                    .map(move |&size| Point { transfer, size })
            })
            .collect()
    }

    fn run_point(&self, params: &Params, trial: &Trial<Point>) -> Result<TrialRun, LabError> {
        run_trial(params, &trial.point, trial.seed)
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<TrialRun>) -> Result<Outcome, LabError> {
        let skipped = runs.iter().find_map(|r| r.not_run.clone());
        let all_skipped = runs.iter().all(|r| r.not_run.is_some());
        let mut points = pool(plan, runs);
        if all_skipped {
            points.clear();
        }
        Ok(Outcome {
            params: plan.params.clone(),
            trials_per_point: plan.seeds,
            points,
            skipped: if all_skipped { skipped } else { None },
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
        // The committed full report: 179 s for 45 trials, one at a time on real time.
        4.0
    }

    fn needs(&self) -> Option<&'static str> {
        Some("root and the real stacks (scripts/lab-stacks.sh installs them)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{param_table, runner};

    fn apply(pairs: &[(&str, &str)]) -> Result<Params, String> {
        let sets: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        param_table::apply(NAME, PARAMS, &Params::full(), &sets).map_err(|e| e.to_string())
    }

    #[test]
    fn the_table_matches_the_parameters_and_refuses_what_it_used_to_clamp() {
        for p in [Params::full(), Params::quick()] {
            let problems = param_table::table_problems(PARAMS, &p);
            assert!(problems.is_empty(), "{problems:?}");
        }
        let p = apply(&[("sizes", "10, 2000"), ("repeats", "3"), ("cc", "cocoa")]).unwrap();
        assert_eq!(
            p,
            Params {
                sizes: vec![10, 2000],
                repeats: 3,
                cc: "cocoa".into()
            }
        );
        assert!(apply(&[("sizes", "10,0")])
            .unwrap_err()
            .contains("has an item `0` that is out of range (bytes, 1 to 60000)"));
        assert!(apply(&[("repeats", "1001")])
            .unwrap_err()
            .contains("`repeats=1001` is out of range (1 to 1000)"));
        assert!(apply(&[("cc", "reno")])
            .unwrap_err()
            .contains("is not one of"));
    }

    fn trial_run(times_s: &[f64], bytes: u64, error: Option<&str>) -> TrialRun {
        TrialRun {
            times_s: times_s.to_vec(),
            failed: 2 - times_s.len(),
            traffic: Traffic {
                packets: bytes / 100,
                bytes,
                messages: MessageCounts::default(),
            },
            error: error.map(str::to_string),
            not_run: None,
        }
    }

    #[test]
    fn a_point_pools_its_trials_downloads_and_bytes() {
        let params = Params {
            sizes: vec![10, 400],
            ..Params::quick()
        };
        let points = ObjectDownload.points(&params, true);
        assert_eq!(points.len(), 10);
        assert_eq!(
            (points[1].transfer, points[1].size, points[2].transfer),
            (Transfer::Coap, 400, Transfer::HttpClose)
        );
        let trials = runner::trials(&ObjectDownload, &params, true, 1, 2);
        let runs: Vec<TrialRun> = trials
            .iter()
            .map(|t| match (t.point.transfer, t.seed_index) {
                (Transfer::Coap, 0) => trial_run(&[0.1, 0.3], 1000, None),
                (Transfer::Coap, _) => trial_run(&[0.2], 600, None),
                _ => trial_run(&[], 0, Some("server did not start")),
            })
            .collect();
        let plan = Plan {
            params: &params,
            quick: true,
            seed: 1,
            seeds: 2,
            trials: &trials,
        };
        let outcome = ObjectDownload.aggregate(&plan, runs).unwrap();
        assert_eq!(outcome.points.len(), 10);
        let coap = &outcome.points[0];
        assert_eq!(
            (
                coap.trials,
                coap.downloaded,
                coap.failed,
                coap.traffic.bytes
            ),
            (2, 3, 1, 1600)
        );
        assert!((coap.mean_s() - 0.2).abs() < 1e-12);
        assert!((coap.bytes_per_object() - 1600.0 / 3.0).abs() < 1e-9);
        let http = &outcome.points[2];
        assert_eq!((http.downloaded, http.failed), (0, 4));
        assert_eq!(http.error.as_deref(), Some("server did not start"));
        assert!(outcome.skipped.is_none());
    }

    #[test]
    fn a_trial_run_crosses_a_shard_file_whole() {
        let run = trial_run(&[0.25], 1234, Some("x"));
        let mut bytes = Vec::new();
        ciborium::into_writer(&run, &mut bytes).unwrap();
        let back: TrialRun = ciborium::from_reader(bytes.as_slice()).unwrap();
        assert_eq!(back.traffic, run.traffic);
        assert_eq!((back.times_s, back.error), (run.times_s, run.error));
    }
}
