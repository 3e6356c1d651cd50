//! HTTP with hyper: an object server on HTTP/1.1 and HTTP/2 (prior knowledge, cleartext), and
//! a downloader that fetches objects over a new TCP connection each (`close`), one persistent
//! HTTP/1.1 connection (`keep_alive`), or one HTTP/2 connection (`h2`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1 as client1, http2 as client2};
use hyper::server::conn::{http1 as server1, http2 as server2};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};

use super::telemetry::AgentEvent;
use super::{io_error, RunFor};
use crate::EmuError;

/// How long one object may take before it counts as failed.
pub const OBJECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How the downloader uses its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// HTTP/1.1, a new TCP connection per object (`Connection: close`).
    Close,
    /// HTTP/1.1, one persistent connection.
    KeepAlive,
    /// HTTP/2 with prior knowledge, one connection.
    H2,
}

/// What an HTTP agent does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Serves `/object/<bytes>` on HTTP/1.1 at `http1` and HTTP/2 at `h2`.
    Serve {
        /// HTTP/1.1 address.
        http1: SocketAddr,
        /// HTTP/2 address.
        h2: SocketAddr,
        /// How long to run.
        run_for: RunFor,
    },
    /// Downloads each object, one after the other.
    Download {
        /// The server's address for `mode`'s protocol.
        server: SocketAddr,
        /// How connections are used.
        mode: Mode,
        /// Object sizes, in download order.
        sizes: Vec<u64>,
    },
}

/// Runs `role` to its end.
pub async fn run(role: Role) -> Result<(), EmuError> {
    match role {
        Role::Serve { http1, h2, run_for } => run_for.bound(serve(http1, h2)).await,
        Role::Download {
            server,
            mode,
            sizes,
        } => download(server, mode, &sizes).await,
    }
}

/// The size asked for by a path `/object/<bytes>`, when it is one within the bound.
pub fn object_size(path: &str) -> Option<u64> {
    let n = path.strip_prefix("/object/")?.parse::<u64>().ok()?;
    (n <= super::coap::MAX_OBJECT_BYTES).then_some(n)
}

/// A body of `n` bytes.
pub fn object_body(n: u64) -> Vec<u8> {
    vec![b'o'; usize::try_from(n).unwrap_or(0)]
}

async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let response = match object_size(request.uri().path()) {
        Some(n) => Response::builder()
            .header("content-type", "application/octet-stream")
            .body(Full::new(Bytes::from(object_body(n)))),
        None => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Full::new(Bytes::new())),
    };
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}

async fn listen(addr: SocketAddr) -> Result<TcpListener, EmuError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| io_error(&format!("listen on {addr}"), e))
}

async fn serve(http1: SocketAddr, h2: SocketAddr) -> Result<(), EmuError> {
    let one = listen(http1).await?;
    let two = listen(h2).await?;
    AgentEvent::Ready.emit();
    loop {
        tokio::select! {
            accepted = one.accept() => {
                let (stream, _) = accepted.map_err(|e| io_error("accept", e))?;
                let _ = stream.set_nodelay(true);
                tokio::spawn(server1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(answer)));
            }
            accepted = two.accept() => {
                let (stream, _) = accepted.map_err(|e| io_error("accept", e))?;
                let _ = stream.set_nodelay(true);
                tokio::spawn(server2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service_fn(answer)));
            }
        }
    }
}

/// A sender on one connection of either version.
enum Sender {
    One(client1::SendRequest<Empty<Bytes>>),
    Two(client2::SendRequest<Empty<Bytes>>),
}

async fn connect(server: SocketAddr, mode: Mode) -> Result<Sender, EmuError> {
    let stream = TcpStream::connect(server)
        .await
        .map_err(|e| io_error(&format!("connect to {server}"), e))?;
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(stream);
    let failed = |e: hyper::Error| EmuError::Stack(format!("http handshake: {e}"));
    if mode == Mode::H2 {
        let (sender, connection) = client2::handshake(TokioExecutor::new(), io)
            .await
            .map_err(failed)?;
        tokio::spawn(connection);
        Ok(Sender::Two(sender))
    } else {
        let (sender, connection) = client1::handshake(io).await.map_err(failed)?;
        tokio::spawn(connection);
        Ok(Sender::One(sender))
    }
}

async fn get(
    sender: &mut Sender,
    server: SocketAddr,
    mode: Mode,
    bytes: u64,
) -> Result<usize, EmuError> {
    let failed = |e: hyper::Error| EmuError::Stack(format!("http request: {e}"));
    let mut request = Request::get(format!("/object/{bytes}")).header("host", server.to_string());
    if mode == Mode::Close {
        request = request.header("connection", "close");
    }
    if mode == Mode::H2 {
        request = Request::get(format!("http://{server}/object/{bytes}"));
    }
    let request = request
        .body(Empty::<Bytes>::new())
        .map_err(|e| EmuError::Stack(format!("http request: {e}")))?;
    let response = match sender {
        Sender::One(s) => {
            s.ready().await.map_err(failed)?;
            s.send_request(request).await.map_err(failed)?
        }
        Sender::Two(s) => {
            s.ready().await.map_err(failed)?;
            s.send_request(request).await.map_err(failed)?
        }
    };
    let body = response.into_body().collect().await.map_err(failed)?;
    Ok(body.to_bytes().len())
}

async fn download(server: SocketAddr, mode: Mode, sizes: &[u64]) -> Result<(), EmuError> {
    AgentEvent::Ready.emit();
    let mut connection: Option<Sender> = None;
    for &bytes in sizes {
        let started = Instant::now();
        let attempt = async {
            let mut sender = match connection.take() {
                Some(s) if mode != Mode::Close => s,
                _ => connect(server, mode).await?,
            };
            let n = get(&mut sender, server, mode, bytes).await?;
            Ok::<_, EmuError>((n, sender))
        };
        match tokio::time::timeout(OBJECT_TIMEOUT, attempt).await {
            Ok(Ok((n, sender))) if n as u64 == bytes => {
                connection = Some(sender);
                AgentEvent::Downloaded {
                    bytes,
                    elapsed_ns: u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX),
                }
                .emit();
            }
            _ => AgentEvent::Failed { bytes }.emit(),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_paths_are_bounded() {
        assert_eq!(object_size("/object/1200"), Some(1200));
        assert_eq!(object_size("/object/99999999"), None);
        assert_eq!(object_size("/other/12"), None);
        assert_eq!(object_body(3), b"ooo");
    }
}
