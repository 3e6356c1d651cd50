//! One trial: one protocol at one link condition. The server side starts first, then the
//! caregiver, then the gateway sends its telemetry; the trial ends when the caregiver has
//! everything or the drain time is up, and every process is stopped.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use covey_emu::stacks::agent_process::AgentProcess;
use covey_emu::stacks::coap;
use covey_emu::stacks::dds;
use covey_emu::stacks::launcher::Launcher;
use covey_emu::stacks::network::{Network, Traffic};
use covey_emu::stacks::schedule::Schedule;
use covey_emu::stacks::telemetry::AgentEvent;
use covey_emu::stacks::{mqtt, udp_json, Agent, RunFor};
use serde::Serialize;

use super::protocol::Protocol;
use crate::LabError;

/// The gateway, server and caregiver nodes.
pub const NODES: [&str; 3] = ["gw", "srv", "cg"];

const COAP_PORT: u16 = 5683;
const UDP_JSON_PORT: u16 = 9000;

/// How long a process may take to say it is ready (DDS discovery, MQTT connect through a
/// lossy, slow link).
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a trial measured.
#[derive(Debug, Clone, Serialize)]
pub struct TrialOutcome {
    /// Messages the gateway sent.
    pub sent: u64,
    /// Distinct messages the caregiver received.
    pub received: u64,
    /// Copies received more than once.
    pub duplicates: u64,
    /// Gateway-to-caregiver latency of each received message, in seconds, in sequence order.
    pub latencies_s: Vec<f64>,
    /// IP traffic of the whole trial (set-up, discovery and tear-down included).
    pub traffic: Traffic,
}

/// The DDS interpreter, when the run has one.
#[derive(Debug, Clone)]
pub struct Externals {
    /// Python with `cyclonedds` (for DDS over UDP).
    pub dds_python: Option<std::path::PathBuf>,
    /// Python with a `cyclonedds` whose C library has the TCP transport (for DDS over TCP).
    pub dds_tcp_python: Option<std::path::PathBuf>,
    /// Whether Mosquitto sets TCP_NODELAY on its client sockets.
    pub broker_nodelay: bool,
}

/// A process to start: a covey agent or another program (the DDS script).
enum Launch {
    Agent(Agent),
    Program(&'static str, std::process::Command),
}

impl Launch {
    fn start(
        self,
        network: &dyn Network,
        launcher: &Launcher,
        node: &str,
    ) -> Result<AgentProcess, LabError> {
        Ok(match self {
            Launch::Agent(agent) => launcher.agent(network, node, &agent)?,
            Launch::Program(name, command) => launcher.program(network, node, name, command)?,
        })
    }
}

fn addr(ip: Ipv4Addr, port: u16) -> SocketAddr {
    SocketAddr::from((ip, port))
}

/// Whether `error` says a stack did not become ready in time (a set-up failure, which the
/// scenario retries on fresh links, not a measurement).
pub fn is_setup_timeout(error: &LabError) -> bool {
    matches!(error, LabError::Stack(why) if why.contains("did not become ready"))
}

/// Runs `protocol` once over `network` and measures it.
pub fn run(
    network: &dyn Network,
    launcher: &Launcher,
    externals: &Externals,
    protocol: &Protocol,
    schedule: Schedule,
    drain: Duration,
) -> Result<TrialOutcome, LabError> {
    let [gw, srv, cg] = [
        network.address(NODES[0])?,
        network.address(NODES[1])?,
        network.address(NODES[2])?,
    ];
    // Every agent outlives the waits for the others to become ready.
    let ready_timeout = match protocol {
        Protocol::Dds { .. } => dds::READY_TIMEOUT,
        _ => READY_TIMEOUT,
    };
    let run_for = RunFor::secs((schedule.duration() + drain + ready_timeout * 3).as_secs_f64());
    let before = network.traffic()?;
    let mut server: AgentProcess;
    let (subscriber, publisher): (Launch, Launch);
    // DDS only: the file that lets the publisher send, created once the relay has linked.
    let mut go_file = None;
    match protocol {
        Protocol::Coap { delivery, cc } => {
            let relay = Agent::Coap(coap::Role::Relay {
                listen: addr(srv, COAP_PORT),
                caregiver: addr(cg, COAP_PORT),
                delivery: *delivery,
                cc: cc.clone(),
                run_for,
            });
            let mut p = launcher.agent(network, NODES[1], &relay)?;
            p.wait_ready(READY_TIMEOUT)?;
            server = p;
            subscriber = Launch::Agent(Agent::Coap(coap::Role::Subscribe {
                listen: addr(cg, COAP_PORT),
                server: addr(srv, COAP_PORT),
                delivery: *delivery,
                cc: cc.clone(),
                run_for,
            }));
            publisher = Launch::Agent(Agent::Coap(coap::Role::Publish {
                server: addr(srv, COAP_PORT),
                delivery: *delivery,
                cc: cc.clone(),
                schedule,
            }));
        }
        Protocol::Mqtt { qos } => {
            // Mosquitto says nothing on stdout; the subscriber's SUBACK shows it is up.
            server = launcher.mosquitto(network, NODES[1], mqtt::PORT, externals.broker_nodelay)?;
            subscriber = Launch::Agent(Agent::Mqtt(mqtt::Role::Subscribe {
                broker: addr(srv, mqtt::PORT),
                qos: *qos,
                run_for,
            }));
            publisher = Launch::Agent(Agent::Mqtt(mqtt::Role::Publish {
                broker: addr(srv, mqtt::PORT),
                qos: *qos,
                schedule,
            }));
        }
        Protocol::UdpJson => {
            let broker = Agent::UdpJson(udp_json::Role::Broker {
                listen: addr(srv, UDP_JSON_PORT),
                run_for,
            });
            let mut p = launcher.agent(network, NODES[1], &broker)?;
            p.wait_ready(READY_TIMEOUT)?;
            server = p;
            subscriber = Launch::Agent(Agent::UdpJson(udp_json::Role::Subscribe {
                broker: addr(srv, UDP_JSON_PORT),
                run_for,
            }));
            publisher = Launch::Agent(Agent::UdpJson(udp_json::Role::Publish {
                broker: addr(srv, UDP_JSON_PORT),
                schedule,
            }));
        }
        Protocol::Dds {
            reliability,
            transport,
        } => {
            let python = match transport {
                dds::Transport::Udp => externals.dds_python.as_deref(),
                dds::Transport::Tcp => externals.dds_tcp_python.as_deref(),
            };
            let python = python.ok_or_else(|| {
                LabError::Stack(format!(
                    "DDS needs Cyclone DDS for Python; run `{}`",
                    covey_emu::stacks::programs::SETUP_SCRIPT
                ))
            })?;
            let script = dds::write_script(&launcher.work_dir)?;
            let secs = run_for.duration().as_secs_f64();
            let go = dds::go_file(&launcher.work_dir)?;
            let cmd = |role, own, peers: &[Ipv4Addr], go: Option<&std::path::Path>| {
                dds::command(
                    python,
                    &script,
                    role,
                    *reliability,
                    *transport,
                    &schedule,
                    secs,
                    own,
                    peers,
                    go,
                )
            };
            let relay = cmd(dds::Role::Relay, srv, &[gw, cg], None);
            let mut p = launcher.program(network, NODES[1], "DDS relay", relay)?;
            p.wait_ready(ready_timeout)?;
            server = p;
            subscriber = Launch::Program(
                "DDS subscriber",
                cmd(dds::Role::Subscribe, cg, &[srv], None),
            );
            publisher = Launch::Program(
                "DDS publisher",
                cmd(dds::Role::Publish, gw, &[srv], Some(&go)),
            );
            go_file = Some(go);
        }
    }
    let mut caregiver = subscriber.start(network, launcher, NODES[2])?;
    caregiver.wait_ready(ready_timeout)?;
    let mut gateway = publisher.start(network, launcher, NODES[0])?;
    gateway.wait_ready(ready_timeout)?;
    if let Some(go) = &go_file {
        if !server.wait_for(ready_timeout, |e| e.contains(&AgentEvent::Linked)) {
            return Err(LabError::Stack(format!(
                "DDS relay did not become ready (linked both ways) within {:.0} s",
                ready_timeout.as_secs_f64()
            )));
        }
        std::fs::write(go, b"go").map_err(|e| LabError::Stack(format!("write {go:?}: {e}")))?;
    }
    let count = schedule.count;
    let all_sent = |events: &[AgentEvent]| {
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::Sent { .. }))
            .count() as u64
            >= count
    };
    gateway.wait_for(schedule.duration() + ready_timeout, all_sent);
    caregiver.wait_for(drain, |events| distinct_received(events) >= count);
    let sent_events = gateway.stop();
    let received_events = caregiver.stop();
    drop(server);
    let after = network.traffic()?;
    Ok(measure(
        &sent_events,
        &received_events,
        after.since(&before),
    ))
}

fn distinct_received(events: &[AgentEvent]) -> u64 {
    let mut seen = std::collections::BTreeSet::new();
    for e in events {
        if let AgentEvent::Received { seq, .. } = e {
            seen.insert(*seq);
        }
    }
    seen.len() as u64
}

/// The trial's metrics from the gateway's and the caregiver's events.
pub fn measure(sent: &[AgentEvent], received: &[AgentEvent], traffic: Traffic) -> TrialOutcome {
    let mut sent_at = BTreeMap::new();
    for e in sent {
        if let AgentEvent::Sent { seq, t_ns } = e {
            sent_at.insert(*seq, *t_ns);
        }
    }
    let mut first = BTreeMap::new();
    let mut duplicates = 0;
    for e in received {
        if let AgentEvent::Received { seq, t_ns } = e {
            if sent_at.contains_key(seq) {
                if first.contains_key(seq) {
                    duplicates += 1;
                } else {
                    first.insert(*seq, *t_ns);
                }
            }
        }
    }
    let latencies_s = first
        .iter()
        .filter_map(|(seq, t)| {
            let s = sent_at.get(seq)?;
            Some(t.saturating_sub(*s) as f64 / 1e9)
        })
        .collect();
    TrialOutcome {
        sent: sent_at.len() as u64,
        received: first.len() as u64,
        duplicates,
        latencies_s,
        traffic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_loss_latency_and_duplicates_from_events() {
        let sent = [
            AgentEvent::Sent {
                seq: 0,
                t_ns: 1_000_000_000,
            },
            AgentEvent::Sent {
                seq: 1,
                t_ns: 1_250_000_000,
            },
            AgentEvent::Sent {
                seq: 2,
                t_ns: 1_500_000_000,
            },
        ];
        let received = [
            AgentEvent::Ready,
            AgentEvent::Received {
                seq: 0,
                t_ns: 1_100_000_000,
            },
            AgentEvent::Received {
                seq: 0,
                t_ns: 1_300_000_000,
            },
            AgentEvent::Received {
                seq: 2,
                t_ns: 1_800_000_000,
            },
            AgentEvent::Received {
                seq: 9,
                t_ns: 1_900_000_000,
            },
        ];
        let m = measure(&sent, &received, Traffic::default());
        assert_eq!((m.sent, m.received, m.duplicates), (3, 2, 1));
        assert_eq!(m.latencies_s.len(), 2);
        assert!((m.latencies_s[0] - 0.1).abs() < 1e-9);
        assert!((m.latencies_s[1] - 0.3).abs() < 1e-9);
    }
}
