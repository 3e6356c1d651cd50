//! The real protocol stacks the emulator runs in its namespaces: each is an agent (a role
//! such as publisher, broker, relay, subscriber, object server or downloader) started as
//! `covey lab agent '<json>'` inside a namespace. Agents report what they send and receive
//! as JSON lines with host timestamps ([`telemetry::AgentEvent`]); every namespace shares
//! the host clock, so a receive time minus a send time is a one-way latency.

pub mod agent_process;
pub mod coap;
pub mod dds;
pub mod http;
pub mod http_udp;
pub mod launcher;
pub mod mqtt;
pub mod network;
pub mod programs;
pub mod schedule;
pub mod telemetry;
pub mod testbed_network;
pub mod udp_json;

use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::EmuError;

/// One agent: a stack and its role, as the scenario passes it on the command line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stack", content = "role", rename_all = "snake_case")]
pub enum Agent {
    /// JSON over UDP through a broker (the paper's custom protocol).
    UdpJson(udp_json::Role),
    /// CoAP with covey (NON, CON or Observe; any congestion control).
    Coap(coap::Role),
    /// MQTT with rumqttc against a broker (Mosquitto).
    Mqtt(mqtt::Role),
    /// HTTP/1.1 and HTTP/2 with hyper.
    Http(http::Role),
    /// HTTP/1.1 messages in UDP datagrams.
    HttpUdp(http_udp::Role),
}

impl Agent {
    /// The agent as one command-line argument.
    pub fn to_arg(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses the command-line argument; a bad one gets an error saying what is wrong.
    pub fn from_arg(arg: &str) -> Result<Agent, EmuError> {
        serde_json::from_str(arg)
            .map_err(|e| EmuError::InvalidOption(format!("bad agent description: {e}")))
    }

    /// Runs the agent to its end on a tokio runtime of its own.
    pub fn run(self) -> Result<(), EmuError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| io_error("start the runtime", e))?;
        runtime.block_on(async move {
            match self {
                Agent::UdpJson(role) => udp_json::run(role).await,
                Agent::Coap(role) => coap::run(role).await,
                Agent::Mqtt(role) => mqtt::run(role).await,
                Agent::Http(role) => http::run(role).await,
                Agent::HttpUdp(role) => http_udp::run(role).await,
            }
        })
    }
}

/// How long a long-running role (broker, relay, subscriber, server) runs before it exits by
/// itself, so that no agent outlives its run even when nobody stops it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunFor {
    /// Seconds.
    pub secs: f64,
}

impl RunFor {
    /// `secs` seconds (clamped to 0.1 s .. 1 day).
    pub fn secs(secs: f64) -> RunFor {
        RunFor { secs }
    }

    /// The duration.
    pub fn duration(&self) -> Duration {
        let s = if self.secs.is_finite() {
            self.secs
        } else {
            0.1
        };
        Duration::from_secs_f64(s.clamp(0.1, 86_400.0))
    }

    /// Runs `work` until it ends or the time is up, which is a normal end.
    pub async fn bound<F>(&self, work: F) -> Result<(), EmuError>
    where
        F: Future<Output = Result<(), EmuError>>,
    {
        tokio::time::timeout(self.duration(), work)
            .await
            .unwrap_or(Ok(()))
    }
}

/// An I/O error of a stack, saying what it was doing.
pub fn io_error(doing: &str, e: std::io::Error) -> EmuError {
    EmuError::Stack(format!("{doing}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    #[test]
    fn agents_round_trip_through_their_argument() {
        let agent = Agent::UdpJson(udp_json::Role::Subscribe {
            broker: SocketAddr::from(([10, 0, 0, 1], 9000)),
            run_for: RunFor::secs(3.0),
        });
        assert_eq!(Agent::from_arg(&agent.to_arg()).unwrap(), agent);
    }

    #[test]
    fn a_bad_argument_is_an_error_naming_the_problem() {
        let e = Agent::from_arg("{\"stack\":\"smtp\"}").unwrap_err();
        assert!(e.to_string().contains("bad agent description"), "{e}");
    }

    #[test]
    fn run_for_is_clamped() {
        assert_eq!(RunFor::secs(-1.0).duration(), Duration::from_millis(100));
        assert_eq!(
            RunFor::secs(f64::NAN).duration(),
            Duration::from_millis(100)
        );
        assert_eq!(RunFor::secs(2.5).duration(), Duration::from_millis(2500));
    }
}
