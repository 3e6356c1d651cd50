//! What the scenarios need from a network of namespaces: each node's address, a way to run a
//! program inside a node, the IP bytes sent on the links, and the link conditions.

use std::net::Ipv4Addr;
use std::process::Command;

use serde::Serialize;

use super::agent_process::AgentProcess;
use crate::{EmuError, MessageCounts};

/// The impairment of every link, per direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkCondition {
    /// Packet loss probability (Bernoulli), 0 to 1.
    pub loss: f64,
    /// One-way delay in seconds (the emulator draws each packet's uniformly in 80–120 %).
    pub delay_s: f64,
    /// Rate cap in bytes per second (`None`: uncapped).
    pub rate_bytes_per_s: Option<f64>,
}

impl LinkCondition {
    /// No impairment.
    pub const CLEAN: LinkCondition = LinkCondition {
        loss: 0.0,
        delay_s: 0.0,
        rate_bytes_per_s: None,
    };
}

/// IP packets and bytes the nodes have put on the links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// IP packets.
    pub packets: u64,
    /// IP bytes (headers included, link-layer framing not).
    pub bytes: u64,
    /// Telemetry messages put on the links, summed over the links: a message that crossed
    /// both hops counts twice, a copy on a link that already carried it counts as a repeat.
    pub messages: MessageCounts,
}

impl Traffic {
    /// What was sent between `earlier` and `self`.
    pub fn since(&self, earlier: &Traffic) -> Traffic {
        let (m, e) = (&self.messages, &earlier.messages);
        Traffic {
            packets: self.packets.saturating_sub(earlier.packets),
            bytes: self.bytes.saturating_sub(earlier.bytes),
            messages: MessageCounts {
                first: m.first.saturating_sub(e.first),
                repeats: m.repeats.saturating_sub(e.repeats),
                unlabelled: m.unlabelled.saturating_sub(e.unlabelled),
            },
        }
    }
}

/// A network of named nodes, each a namespace with one IPv4 address, all reachable from
/// each other.
pub trait Network {
    /// The address of `node`.
    fn address(&self, node: &str) -> Result<Ipv4Addr, EmuError>;
    /// Starts `command` inside `node` as a process the network stops when it is dropped or
    /// the run is interrupted; `name` names it in errors.
    fn spawn(&self, node: &str, name: &str, command: Command) -> Result<AgentProcess, EmuError>;
    /// IP traffic every node has sent so far, with the telemetry messages in it.
    fn traffic(&self) -> Result<Traffic, EmuError>;
}
