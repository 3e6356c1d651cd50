//! Bounds on the HTTP connections served at once: the listener accepts a connection only
//! with a permit, which the connection holds until it closes, so further clients wait in
//! the kernel's listen backlog instead of each costing the gateway a task and buffers; and
//! one client address (an IPv6 /64) gets a share of them, its further connections answered
//! 503 and closed, so that it cannot make everyone else wait.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What a refused connection is told before it is closed.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\
content-type: text/plain; charset=utf-8\r\ncontent-length: 76\r\n\r\n\
too many connections from your address (--http-max-connections-per-address)\n";

/// How long a refused client has to take its 503 before the connection closes anyway.
const REFUSAL_WRITE_TIME: Duration = Duration::from_millis(200);

/// How many connections are served at once.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// In all (at least one).
    pub total: usize,
    /// From one address (at least one).
    pub per_address: usize,
}

/// A listener that serves at most a fixed number of connections at once, and a share of
/// them per client address.
pub struct LimitedListener<L> {
    inner: L,
    permits: Arc<Semaphore>,
    per_address: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl<L: Listener<Addr = SocketAddr>> LimitedListener<L> {
    /// Serves at most `limits` connections of `inner` at once.
    pub fn new(inner: L, limits: ConnectionLimits) -> LimitedListener<L> {
        LimitedListener {
            inner,
            permits: Arc::new(Semaphore::new(limits.total.max(1))),
            per_address: limits.per_address.max(1),
            open: Arc::default(),
        }
    }

    /// Counts a connection from `addr`, or `None` when that address has its share.
    fn admit(&self, addr: SocketAddr) -> Option<AddressSlot> {
        let client = client_of(addr.ip());
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(client).or_insert(0);
        if *count >= self.per_address {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            client,
            open: self.open.clone(),
        })
    }
}

/// The unit a share is counted by: an IPv4 address, or an IPv6 /64 (one host can use a
/// whole /64).
fn client_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(prefix))
        }
        v4 => v4,
    }
}

impl<L: Listener<Addr = SocketAddr>> Listener for LimitedListener<L> {
    type Io = Limited<L::Io>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // The semaphore is never closed, so this only waits for a connection to end.
        let permit = self.permits.clone().acquire_owned().await.ok();
        loop {
            let (mut io, addr) = self.inner.accept().await;
            let Some(slot) = self.admit(addr) else {
                tracing::debug!("HTTP connection from {addr} refused: its address has its share");
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(REFUSAL_WRITE_TIME, io.write_all(REFUSAL)).await;
                });
                continue;
            };
            let io = Limited {
                io,
                _permit: permit,
                _slot: slot,
            };
            return (io, addr);
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// One connection counted against its address's share until it closes.
struct AddressSlot {
    client: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.client);
            }
        }
    }
}

/// A connection holding its permit and its place in its address's share.
pub struct Limited<T> {
    io: T,
    _permit: Option<OwnedSemaphorePermit>,
    _slot: AddressSlot,
}

impl<T: AsyncRead + Unpin> AsyncRead for Limited<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Limited<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_counted_per_ipv4_address_and_ipv6_prefix() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(client_of(ip("192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(client_of(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(client_of(ip("2001:db8:1:2:aa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            client_of(ip("2001:db8:1:2::ffff")),
            client_of(ip("2001:db8:1:2:1::"))
        );
    }

    #[test]
    fn the_refusal_is_a_well_formed_response() {
        let text = std::str::from_utf8(REFUSAL).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{text}"
        );
    }
}
