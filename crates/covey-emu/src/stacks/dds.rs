//! DDS with Eclipse Cyclone DDS through its Python binding (PyPI `cyclonedds`, which ships
//! the C library): a small agent script publishes, relays or subscribes, with reliable or
//! best-effort QoS. Discovery is unicast to the named peers, so it works on any link,
//! multicast or not.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::io_error;
use super::schedule::Schedule;
use crate::EmuError;

/// The agent script, written next to the run's other files.
pub const AGENT_SCRIPT: &str = include_str!("dds_agent.py");

/// What a DDS agent does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The gateway: writes the telemetry on `uplink`.
    Publish,
    /// The server: takes `uplink` and writes it on `downlink`.
    Relay,
    /// The caregiver: reads `downlink`.
    Subscribe,
}

/// DDS reliability QoS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reliability {
    /// Reliable (NACK-driven retransmission).
    Reliable,
    /// Best effort.
    BestEffort,
}

impl Reliability {
    fn name(self) -> &'static str {
        match self {
            Reliability::Reliable => "reliable",
            Reliability::BestEffort => "best_effort",
        }
    }
}

/// How RTPS travels between participants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// UDP, Cyclone's default and DDSI-RTPS's native transport.
    Udp,
    /// TCP (Cyclone's `General/Transport` = `tcp`): every participant listens on
    /// [`DISCOVERY_PORT`] and the RTPS messages, discovery included, travel over TCP
    /// connections, as in OpenDDS's TCP transport that seed 004 describes.
    Tcp,
}

/// The unicast discovery port of participant 0 in domain 0 (7400 + 10): each node runs one
/// participant, so peers are asked on this port alone rather than probed on a port range.
pub const DISCOVERY_PORT: u16 = 7410;

/// How long a DDS agent may take to become ready: past two of Cyclone's 30 s participant
/// announcement intervals, so one lost announcement costs a wait, not the trial.
pub const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(75);

/// Writes the agent script into `dir` and returns its path.
pub fn write_script(dir: &Path) -> Result<PathBuf, EmuError> {
    let path = dir.join("dds_agent.py");
    std::fs::write(&path, AGENT_SCRIPT).map_err(|e| io_error("write dds_agent.py", e))?;
    Ok(path)
}

/// The Cyclone DDS configuration: this node's address, participant index 0, and its
/// unicast peers, which it keeps announcing itself to until they answer. By default Cyclone
/// stops after 30 s (`InitialLocatorPruneDelay`), after one announcement at start and one at
/// the 30 s `SPDPInterval`; the relay starts before the others, so its first announcement
/// finds no one, and one lost announcement from a late participant then left the two
/// never discovering each other.
///
/// Over [`Transport::Tcp`] (run with Cyclone 0.10, [`super::programs::DDS_TCP_VENV`], which
/// has no `InitialLocatorPruneDelay`), Cyclone (`General/Transport` = `tcp`) listens on
/// [`DISCOVERY_PORT`] (`TCP/Port`; by default it would listen nowhere and only connect out,
/// so a participant that starts later could not reach one that started earlier), and the
/// peers' addresses name that port. `TCP/NoDelay` keeps its default, true.
pub fn config_xml(own: Ipv4Addr, peers: &[Ipv4Addr], transport: Transport) -> String {
    let peers: String = peers
        .iter()
        .map(|p| format!("<Peer address=\"{p}:{DISCOVERY_PORT}\"/>"))
        .collect();
    // Cyclone 0.10 (the TCP build, `programs::DDS_TCP_VENV`) has no InitialLocatorPruneDelay
    // and refuses a configuration that names it.
    let (general, prune, tcp) = match transport {
        Transport::Udp => (
            String::new(),
            "<InitialLocatorPruneDelay>3600 s</InitialLocatorPruneDelay>",
            String::new(),
        ),
        Transport::Tcp => (
            "<Transport>tcp</Transport>".to_string(),
            "",
            format!("<TCP><Port>{DISCOVERY_PORT}</Port></TCP>"),
        ),
    };
    format!(
        "<CycloneDDS><Domain id=\"any\"><General><Interfaces>\
         <NetworkInterface address=\"{own}\"/></Interfaces>\
         <AllowMulticast>false</AllowMulticast>{general}</General>\
         <Discovery><ParticipantIndex>0</ParticipantIndex><Peers>{peers}</Peers>\
         {prune}</Discovery>{tcp}</Domain></CycloneDDS>"
    )
}

/// The command that runs the agent in `role` (the caller runs it inside a namespace). A
/// publisher given `go_file` reports ready once matched, then sends only when that file
/// exists; see [`go_file`].
#[allow(clippy::too_many_arguments)]
pub fn command(
    python: &Path,
    script: &Path,
    role: Role,
    reliability: Reliability,
    transport: Transport,
    schedule: &Schedule,
    run_s: f64,
    own: Ipv4Addr,
    peers: &[Ipv4Addr],
    go_file: Option<&Path>,
) -> Command {
    let role = match role {
        Role::Publish => "publish",
        Role::Relay => "relay",
        Role::Subscribe => "subscribe",
    };
    let mut c = Command::new(python);
    c.arg(script)
        .arg(role)
        .arg(reliability.name())
        .arg(schedule.count.to_string())
        .arg(schedule.rate_hz.to_string())
        .arg(schedule.size.to_string())
        .arg(run_s.to_string())
        .env("CYCLONEDDS_URI", config_xml(own, peers, transport));
    if let Some(go) = go_file {
        c.arg(go);
    }
    c
}

/// A fresh path for the publisher's go signal in `dir` (removed if an earlier trial left
/// it). Each end of a DDS topic matches the other on its own, so the publisher's writer
/// seeing the relay's reader does not mean the relay's reader sees the writer; a sample
/// sent in between is dropped, reliable or not, since volatile durability keeps nothing
/// for late readers. The scenario creates the file once the relay reports
/// [`Linked`](super::telemetry::AgentEvent::Linked).
pub fn go_file(dir: &Path) -> Result<PathBuf, EmuError> {
    let path = dir.join("dds-go");
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(path),
        Err(e) => Err(io_error("remove dds-go", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_names_the_interface_and_every_peer() {
        let xml = config_xml(
            Ipv4Addr::new(10, 0, 0, 2),
            &[Ipv4Addr::new(10, 0, 0, 1)],
            Transport::Udp,
        );
        assert!(xml.contains("<NetworkInterface address=\"10.0.0.2\"/>"));
        assert!(xml.contains("<Peer address=\"10.0.0.1:7410\"/>"));
        assert!(xml.contains("<AllowMulticast>false</AllowMulticast>"));
        // Peers that have not answered yet are not given up on after 30 s.
        assert!(xml.contains("<InitialLocatorPruneDelay>3600 s</InitialLocatorPruneDelay>"));
        assert!(!xml.contains("Transport") && !xml.contains("<TCP>"));
    }

    #[test]
    fn over_tcp_every_participant_listens_on_the_port_its_peers_name() {
        let xml = config_xml(
            Ipv4Addr::new(10, 0, 0, 2),
            &[Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 3)],
            Transport::Tcp,
        );
        assert!(xml.contains("<General><Interfaces>"));
        assert!(xml.contains("<Transport>tcp</Transport></General>"));
        assert!(xml.contains("</Peers></Discovery><TCP><Port>7410</Port></TCP></Domain>"));
        assert!(
            !xml.contains("InitialLocatorPruneDelay"),
            "Cyclone 0.10 refuses it"
        );
        assert!(xml.contains("<Peer address=\"10.0.0.1:7410\"/><Peer address=\"10.0.0.3:7410\"/>"));
    }
}
