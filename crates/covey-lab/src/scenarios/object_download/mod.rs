//! `object-download`: download time and bytes per object for CoAP against HTTP over TCP,
//! persistent HTTP, HTTP/2 and HTTP over UDP, on real stacks over a Zigbee-like emulated link
//! (seed 003 part 2: Daniel, Kojo, Latvala, CoAP against HTTP and SPDY; HTTP/2 stands in for
//! SPDY; seed 002 compared HTTP/UDP).
//!
//! Method: a client and a server joined by one emulated link with the `cc-bottleneck`
//! scenario's parameters (20 kbit/s, 20 ms one way, a drop-tail queue of 1000 packets, no
//! loss). For each service and object size the client downloads the object `repeats` times
//! one after the other, with a fresh client process (so persistent connections are set up
//! once per size and their set-up is shared by its objects). Time is request to last byte;
//! bytes are every IP byte on the link in both directions, divided by the objects.
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
use covey_emu::stacks::testbed_network::{skip_reason, QUEUE_PACKETS};
use covey_emu::stacks::RunFor;
use covey_emu::{emulated_link, EmuError, Testbed};
use covey_sim::media::{LossSpec, PropagationDelay};
use serde::Serialize;

use crate::scenarios::{Progress, RunOptions, Summary};
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

/// How long one size's downloads may take before the rest count as failed.
const SIZE_TIMEOUT: Duration = Duration::from_secs(300);

/// The parameters of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Params {
    /// Object sizes, bytes.
    pub sizes: Vec<u64>,
    /// Downloads per size and service.
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

impl Params {
    /// Applies `--set` overrides (`sizes`, `cc`); an unknown name or a bad value is refused.
    pub fn apply_overrides(&mut self, overrides: &[(String, String)]) -> Result<(), LabError> {
        for (name, value) in overrides {
            match name.as_str() {
                "cc" => {
                    covey_emu::stacks::coap::config(value)?;
                    self.cc = value.clone();
                }
                "sizes" => {
                    let sizes: Result<Vec<u64>, _> =
                        value.split(',').map(|s| s.trim().parse::<u64>()).collect();
                    self.sizes = sizes
                        .ok()
                        .filter(|s| !s.is_empty() && s.iter().all(|&n| (1..=60_000).contains(&n)))
                        .ok_or_else(|| {
                            LabError::InvalidOption(format!(
                                "{NAME}: sizes are 1 to 60000 bytes, comma-separated, not `{value}`"
                            ))
                        })?;
                }
                _ => {
                    return Err(LabError::InvalidOption(format!(
                        "{NAME} has no parameter `{name}` (sizes, cc; --runs sets the repeats)"
                    )))
                }
            }
        }
        Ok(())
    }

    /// The parameters `--set` overrides, with their full-run defaults.
    pub fn describe() -> Vec<crate::scenarios::ParamInfo> {
        let d = Params::full();
        vec![
            crate::scenarios::ParamInfo {
                name: "sizes",
                default: d
                    .sizes
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                accepts: "comma-separated bytes, 1 to 60000".into(),
                help: "object sizes (10,400,1200 in --quick); --runs sets downloads per size",
            },
            crate::scenarios::ParamInfo {
                name: "cc",
                default: d.cc,
                accepts: "default, cocoa, cocoa-strong, linux, peakhopper, rfc6298".into(),
                help: "CoAP congestion control",
            },
        ]
    }
}

/// One service at one size.
#[derive(Debug, Clone, Serialize)]
pub struct SizePoint {
    /// The service's label.
    pub transfer: String,
    /// Object size, bytes.
    pub size: u64,
    /// Objects downloaded.
    pub downloaded: usize,
    /// Objects that failed.
    pub failed: usize,
    /// Each download's time, seconds.
    pub times_s: Vec<f64>,
    /// IP traffic of the size's downloads (both directions).
    pub traffic: Traffic,
    /// Why it did not run.
    pub error: Option<String>,
}

impl SizePoint {
    /// The mean download time, seconds.
    pub fn mean_s(&self) -> f64 {
        if self.times_s.is_empty() {
            f64::NAN
        } else {
            self.times_s.iter().sum::<f64>() / self.times_s.len() as f64
        }
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
    /// One point per service and size.
    pub points: Vec<SizePoint>,
    /// Why the sweep did not run at all (not root).
    pub skipped: Option<String>,
    /// Wall-clock seconds.
    pub wall_s: f64,
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

/// Downloads every size with `transfer` on a fresh testbed.
fn run_transfer(
    params: &Params,
    transfer: Transfer,
    seed: u64,
    launcher: &Launcher,
    mut on_size: impl FnMut(SizePoint),
) -> Result<(), LabError> {
    let network = covey_emu::stacks::testbed_network::TestbedNetwork::from_testbed(
        testbed(seed).map_err(|e| LabError::Stack(format!("emulator: {e}")))?,
    );
    let server_ip = network.address("server")?;
    let run_for = RunFor::secs(SIZE_TIMEOUT.as_secs_f64() * params.sizes.len() as f64);
    let mut server = launcher.agent(&network, "server", &transfer.server(server_ip, run_for))?;
    server.wait_ready(Duration::from_secs(30))?;
    for &size in &params.sizes {
        let before = network.traffic()?;
        let agent = transfer.client(server_ip, vec![size; params.repeats], &params.cc);
        let mut client = launcher.agent(&network, "client", &agent)?;
        let repeats = params.repeats;
        client.wait_for(SIZE_TIMEOUT, |events| {
            events
                .iter()
                .filter(|e| matches!(e, AgentEvent::Downloaded { .. } | AgentEvent::Failed { .. }))
                .count()
                >= repeats
        });
        let events = client.stop();
        let traffic = network.traffic()?.since(&before);
        let times_s: Vec<f64> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Downloaded { elapsed_ns, .. } => Some(*elapsed_ns as f64 / 1e9),
                _ => None,
            })
            .collect();
        on_size(SizePoint {
            transfer: transfer.label().into(),
            size,
            downloaded: times_s.len(),
            failed: repeats - times_s.len().min(repeats),
            times_s,
            traffic,
            error: None,
        });
    }
    Ok(())
}

/// Runs every service over every size, one at a time (the emulator runs in real time).
pub fn run_sweep(
    params: &Params,
    seed: u64,
    work_dir: &std::path::Path,
    progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> Result<Outcome, LabError> {
    let started = Instant::now();
    let mut outcome = Outcome {
        params: params.clone(),
        points: Vec::new(),
        skipped: skip_reason(),
        wall_s: 0.0,
    };
    if outcome.skipped.is_some() {
        return Ok(outcome);
    }
    let launcher = Launcher::from_current_exe(work_dir)?;
    let total = Transfer::ALL.len() * params.sizes.len();
    for transfer in Transfer::ALL {
        let mut points = Vec::new();
        let result = run_transfer(params, transfer, seed, &launcher, |p| {
            points.push(p);
            if let Some(progress) = progress {
                progress(Progress {
                    done: outcome.points.len() + points.len(),
                    total,
                });
            }
        });
        let ran = points.len();
        outcome.points.extend(points);
        if let Err(e) = result {
            // The sizes not reached are reported with the reason.
            for &size in &params.sizes[ran..] {
                outcome.points.push(SizePoint {
                    transfer: transfer.label().into(),
                    size,
                    downloaded: 0,
                    failed: params.repeats,
                    times_s: Vec::new(),
                    traffic: Traffic::default(),
                    error: Some(e.to_string()),
                });
            }
        }
    }
    outcome.wall_s = started.elapsed().as_secs_f64();
    Ok(outcome)
}

/// Runs the scenario as `options` asks and writes its reports.
pub fn run(options: &RunOptions) -> Result<Summary, LabError> {
    let mut params = if options.quick {
        Params::quick()
    } else {
        Params::full()
    };
    if let Some(runs) = options.runs {
        params.repeats = runs.clamp(1, 1000);
    }
    params.apply_overrides(&options.params)?;
    let work_dir = options.out_dir.join(".work");
    let outcome = run_sweep(
        &params,
        options.seed,
        &work_dir,
        options.progress.as_deref(),
    )?;
    let _ = std::fs::remove_dir_all(&work_dir);
    report::write(&outcome, &options.out_dir)
}
