//! HTTP over UDP, as seed 003 compared: an HTTP/1.1 request's text in one datagram, the
//! response's text in one datagram. The client retransmits a request that gets no answer
//! with CoAP's defaults (2 s, doubling, 4 retransmissions), since UDP itself recovers nothing.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::net::UdpSocket;

use super::http::{object_body, object_size};
use super::telemetry::AgentEvent;
use super::udp_json::unspecified_like;
use super::{io_error, RunFor};
use crate::EmuError;

/// The first wait for a response; doubled for each retransmission.
pub const INITIAL_TIMEOUT: Duration = Duration::from_secs(2);

/// Retransmissions before an object counts as failed.
pub const MAX_RETRANSMIT: u32 = 4;

/// What an HTTP/UDP agent does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Answers `GET /object/<bytes>` datagrams.
    Serve {
        /// Address to listen on.
        listen: SocketAddr,
        /// How long to run.
        run_for: RunFor,
    },
    /// Downloads each object, one after the other.
    Download {
        /// The server.
        server: SocketAddr,
        /// Object sizes, in download order.
        sizes: Vec<u64>,
    },
}

/// Runs `role` to its end.
pub async fn run(role: Role) -> Result<(), EmuError> {
    match role {
        Role::Serve { listen, run_for } => run_for.bound(serve(listen)).await,
        Role::Download { server, sizes } => download(server, &sizes).await,
    }
}

/// The response datagram to a request datagram.
pub fn respond(request: &[u8]) -> Vec<u8> {
    let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split(' ');
    let size = match (words.next(), words.next()) {
        (Some("GET"), Some(path)) => object_size(path),
        _ => None,
    };
    match size {
        Some(n) => {
            let mut out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                 Content-Length: {n}\r\n\r\n"
            )
            .into_bytes();
            out.extend_from_slice(&object_body(n));
            out
        }
        None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
    }
}

/// The body length of a `200 OK` response datagram.
pub fn body_length(response: &[u8]) -> Option<usize> {
    if !response.starts_with(b"HTTP/1.1 200 ") {
        return None;
    }
    let end = response.windows(4).position(|w| w == b"\r\n\r\n")?;
    Some(response.len() - end - 4)
}

async fn serve(listen: SocketAddr) -> Result<(), EmuError> {
    let socket = UdpSocket::bind(listen)
        .await
        .map_err(|e| io_error(&format!("bind {listen}"), e))?;
    AgentEvent::Ready.emit();
    let mut buf = vec![0u8; 2048];
    loop {
        let (n, from) = socket
            .recv_from(&mut buf)
            .await
            .map_err(|e| io_error("receive", e))?;
        let _ = socket.send_to(&respond(&buf[..n]), from).await;
    }
}

async fn download(server: SocketAddr, sizes: &[u64]) -> Result<(), EmuError> {
    let socket = UdpSocket::bind(unspecified_like(server))
        .await
        .map_err(|e| io_error("bind", e))?;
    AgentEvent::Ready.emit();
    let mut buf = vec![0u8; 65_536];
    for &bytes in sizes {
        let request = format!("GET /object/{bytes} HTTP/1.1\r\nHost: {server}\r\n\r\n");
        let started = Instant::now();
        let mut wait = INITIAL_TIMEOUT;
        let mut got = None;
        for _ in 0..=MAX_RETRANSMIT {
            let _ = socket.send_to(request.as_bytes(), server).await;
            let deadline = tokio::time::Instant::now() + wait;
            // Skip late answers to earlier objects until this one's arrives or time is up.
            while let Ok(Ok((n, _))) =
                tokio::time::timeout_at(deadline, socket.recv_from(&mut buf)).await
            {
                if body_length(&buf[..n]) == usize::try_from(bytes).ok() {
                    got = Some(started.elapsed());
                    break;
                }
            }
            if got.is_some() {
                break;
            }
            wait = wait.saturating_mul(2);
        }
        match got {
            Some(elapsed) => AgentEvent::Downloaded {
                bytes,
                elapsed_ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
            }
            .emit(),
            None => AgentEvent::Failed { bytes }.emit(),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_object_requests_and_rejects_the_rest() {
        let r = respond(b"GET /object/12 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(body_length(&r), Some(12));
        assert_eq!(
            body_length(&respond(b"POST /object/12 HTTP/1.1\r\n\r\n")),
            None
        );
        assert_eq!(body_length(&respond(b"\xff\xfe")), None);
        assert_eq!(
            body_length(&respond(b"GET /object/999999999 HTTP/1.1\r\n\r\n")),
            None
        );
    }
}
