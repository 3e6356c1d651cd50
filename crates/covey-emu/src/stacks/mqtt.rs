//! MQTT with rumqttc against a Mosquitto broker (Debian's `mosquitto`): the gateway publishes
//! the telemetry, the caregiver subscribes, at QoS 0 or 1. The broker runs in the server's
//! namespace from a configuration file written for the run.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, EventLoop, MqttOptions, Packet, QoS};
use serde::{Deserialize, Serialize};

use super::schedule::{report_received, Schedule};
use super::telemetry::AgentEvent;
use super::{io_error, RunFor};
use crate::EmuError;

/// The topic telemetry is published on.
pub const TOPIC: &str = "patient/telemetry";

/// The MQTT port.
pub const PORT: u16 = 1883;

/// What an MQTT agent does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Publishes the telemetry.
    Publish {
        /// The broker.
        broker: SocketAddr,
        /// 0 or 1.
        qos: u8,
        /// What to send.
        schedule: Schedule,
    },
    /// Subscribes to the telemetry.
    Subscribe {
        /// The broker.
        broker: SocketAddr,
        /// 0 or 1.
        qos: u8,
        /// How long to run.
        run_for: RunFor,
    },
}

/// Runs `role` to its end.
pub async fn run(role: Role) -> Result<(), EmuError> {
    match role {
        Role::Publish {
            broker,
            qos,
            schedule,
        } => publish(broker, qos_of(qos)?, schedule).await,
        Role::Subscribe {
            broker,
            qos,
            run_for,
        } => run_for.bound(subscribe(broker, qos_of(qos)?)).await,
    }
}

/// QoS 0 or 1 (QoS 2 is not part of the experiment).
pub fn qos_of(qos: u8) -> Result<QoS, EmuError> {
    match qos {
        0 => Ok(QoS::AtMostOnce),
        1 => Ok(QoS::AtLeastOnce),
        _ => Err(EmuError::InvalidOption(format!(
            "MQTT QoS {qos} is not run (0 or 1)"
        ))),
    }
}

fn connect(broker: SocketAddr, name: &str) -> (AsyncClient, EventLoop) {
    let id = format!("covey-{name}-{}", std::process::id());
    let mut options = MqttOptions::new(id, broker.ip().to_string(), broker.port());
    options.set_keep_alive(Duration::from_secs(30));
    options.set_clean_session(true);
    AsyncClient::new(options, 64)
}

/// Polls the connection until it fails; the caller reconnects by polling again.
async fn poll_once(events: &mut EventLoop) -> Option<Packet> {
    match events.poll().await {
        Ok(Event::Incoming(packet)) => Some(packet),
        Ok(Event::Outgoing(_)) => None,
        Err(_) => {
            // A broken connection (loss, reset): rumqttc reconnects on the next poll.
            tokio::time::sleep(Duration::from_millis(200)).await;
            None
        }
    }
}

async fn publish(broker: SocketAddr, qos: QoS, schedule: Schedule) -> Result<(), EmuError> {
    let (client, mut events) = connect(broker, "gw");
    let (connected_tx, connected) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut connected_tx = Some(connected_tx);
        loop {
            if let Some(Packet::ConnAck(_)) = poll_once(&mut events).await {
                if let Some(tx) = connected_tx.take() {
                    let _ = tx.send(());
                }
            }
        }
    });
    connected
        .await
        .map_err(|_| EmuError::Stack("mqtt: connection task ended".into()))?;
    AgentEvent::Ready.emit();
    schedule
        .run(|_, payload| {
            let client = client.clone();
            async move {
                let _ = client.publish(TOPIC, qos, false, payload).await;
            }
        })
        .await;
    // Let the queue drain and QoS 1 retries finish; the scenario stops the agent sooner when
    // it has seen enough.
    tokio::time::sleep(Duration::from_secs(120)).await;
    Ok(())
}

async fn subscribe(broker: SocketAddr, qos: QoS) -> Result<(), EmuError> {
    let (client, mut events) = connect(broker, "cg");
    loop {
        match poll_once(&mut events).await {
            // Every (re)connection starts a clean session: subscribe again.
            Some(Packet::ConnAck(_)) => {
                let _ = client.try_subscribe(TOPIC, qos);
            }
            Some(Packet::SubAck(_)) => AgentEvent::Ready.emit(),
            Some(Packet::Publish(p)) => report_received(&p.payload),
            _ => {}
        }
    }
}

/// The Mosquitto configuration [`broker_command`] writes.
pub fn broker_config(port: u16, nodelay: bool) -> String {
    format!(
        "listener {port} 0.0.0.0\nallow_anonymous true\npersistence false\nlog_dest none\n\
         set_tcp_nodelay {nodelay}\n"
    )
}

/// Writes a Mosquitto configuration listening on `port` (no authentication: the lab's
/// namespaces are closed) into `dir`, and returns the command that runs the broker. With
/// `nodelay`, the broker sets TCP_NODELAY on its client sockets (mosquitto.conf(5)
/// `set_tcp_nodelay`, false by default): Nagle's algorithm then no longer holds a publish
/// while an earlier one is unacknowledged.
pub fn broker_command(dir: &Path, port: u16, nodelay: bool) -> Result<Command, EmuError> {
    let conf = dir.join("mosquitto.conf");
    let text = broker_config(port, nodelay);
    std::fs::write(&conf, text).map_err(|e| io_error("write mosquitto.conf", e))?;
    let mut command = Command::new(super::programs::MOSQUITTO);
    command.arg("-c").arg(conf);
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broker_config_sets_nagle_as_asked() {
        let on = broker_config(1883, true);
        assert!(on.starts_with("listener 1883 0.0.0.0\n"));
        assert!(on.ends_with("set_tcp_nodelay true\n"));
        assert!(broker_config(1883, false).ends_with("set_tcp_nodelay false\n"));
    }
}
