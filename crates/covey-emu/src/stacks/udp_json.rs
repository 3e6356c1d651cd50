//! The paper's custom protocol: JSON over UDP through a broker. A subscriber sends
//! `SUBSCRIBE` to the broker (repeating it each second until data arrives); the broker
//! forwards every other datagram to its subscribers. No acknowledgements, no retransmission.

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::net::UdpSocket;

use super::schedule::{report_received, Schedule};
use super::telemetry::AgentEvent;
use super::{io_error, RunFor};
use crate::EmuError;

/// The datagram a subscriber sends to register.
pub const SUBSCRIBE: &[u8] = b"SUBSCRIBE";

/// Subscribers a broker keeps at most: memory stays bounded whoever asks.
pub const MAX_SUBSCRIBERS: usize = 64;

/// What a JSON/UDP agent does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Forwards published datagrams to every subscriber.
    Broker {
        /// Address to listen on.
        listen: SocketAddr,
        /// How long to run.
        run_for: RunFor,
    },
    /// Sends the telemetry to the broker.
    Publish {
        /// The broker.
        broker: SocketAddr,
        /// What to send.
        schedule: Schedule,
    },
    /// Subscribes at the broker and reports what arrives.
    Subscribe {
        /// The broker.
        broker: SocketAddr,
        /// How long to run.
        run_for: RunFor,
    },
}

/// Runs `role` to its end.
pub async fn run(role: Role) -> Result<(), EmuError> {
    match role {
        Role::Broker { listen, run_for } => run_for.bound(broker(listen)).await,
        Role::Publish { broker, schedule } => publish(broker, schedule).await,
        Role::Subscribe { broker, run_for } => run_for.bound(subscribe(broker)).await,
    }
}

async fn bind(addr: SocketAddr) -> Result<UdpSocket, EmuError> {
    UdpSocket::bind(addr)
        .await
        .map_err(|e| io_error(&format!("bind {addr}"), e))
}

async fn broker(listen: SocketAddr) -> Result<(), EmuError> {
    let socket = bind(listen).await?;
    AgentEvent::Ready.emit();
    let mut subscribers: Vec<SocketAddr> = Vec::new();
    let mut buf = vec![0u8; 65_536];
    loop {
        let (n, from) = socket
            .recv_from(&mut buf)
            .await
            .map_err(|e| io_error("receive", e))?;
        let datagram = &buf[..n];
        if datagram == SUBSCRIBE {
            if !subscribers.contains(&from) && subscribers.len() < MAX_SUBSCRIBERS {
                subscribers.push(from);
            }
            continue;
        }
        for s in &subscribers {
            // A full socket buffer drops the copy, as a loaded broker would.
            let _ = socket.send_to(datagram, s).await;
        }
    }
}

async fn publish(broker: SocketAddr, schedule: Schedule) -> Result<(), EmuError> {
    let socket = bind(unspecified_like(broker)).await?;
    AgentEvent::Ready.emit();
    schedule
        .run(|_, payload| {
            let socket = &socket;
            async move {
                let _ = socket.send_to(&payload, broker).await;
            }
        })
        .await;
    Ok(())
}

async fn subscribe(broker: SocketAddr) -> Result<(), EmuError> {
    let socket = bind(unspecified_like(broker)).await?;
    let mut buf = vec![0u8; 65_536];
    let mut registered = false;
    AgentEvent::Ready.emit();
    loop {
        if !registered {
            let _ = socket.send_to(SUBSCRIBE, broker).await;
        }
        match tokio::time::timeout(Duration::from_secs(1), socket.recv_from(&mut buf)).await {
            Ok(Ok((n, _))) => {
                registered = true;
                report_received(&buf[..n]);
            }
            Ok(Err(e)) => return Err(io_error("receive", e)),
            Err(_) => {}
        }
    }
}

/// The wildcard address of `peer`'s family, any port.
pub fn unspecified_like(peer: SocketAddr) -> SocketAddr {
    match peer {
        SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
    }
}
