//! The UDP socket layer: sockets bound with socket2, batched receive (recvmmsg) with the
//! destination address and interface of each datagram (pktinfo) through quinn-udp, batched send
//! (sendmmsg), ICMP errors from the error queue (which destinations are unreachable), and
//! address mapping between dual-stack sockets and the engine. [`BatchSocket`] offers the same
//! batches to tight loops outside the async driver (e.g. `covey bench`).

mod addr;
mod arrival;
mod batch_socket;
mod bind;
mod error_queue;
mod poll_set;
mod recv_batch;
mod send_batch;

use std::future::Future;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use quinn_udp::{RecvMeta, UdpSocketState};
use tokio::io::Interest;

pub(crate) use addr::{canonical_ip, canonical_socket_addr};
pub(crate) use arrival::on_loopback;
pub use batch_socket::BatchSocket;
pub(crate) use bind::bind;
pub(crate) use error_queue::Unreachable;
pub use poll_set::PollSet;
pub use recv_batch::RecvBatch;
pub use send_batch::{SendBatch, SEND_BATCH_MAX};

/// Whether a socket bound to `local` (`dual_stack`: IPv6 carrying IPv4 too) can send to
/// `destination`.
pub(crate) fn reaches(local: SocketAddr, dual_stack: bool, destination: SocketAddr) -> bool {
    match (local, destination) {
        (SocketAddr::V4(_), SocketAddr::V4(_)) | (SocketAddr::V6(_), SocketAddr::V6(_)) => true,
        (SocketAddr::V6(_), SocketAddr::V4(_)) => dual_stack,
        (SocketAddr::V4(_), SocketAddr::V6(d)) => d.ip().to_ipv4_mapped().is_some(),
    }
}

/// One bound UDP socket with its quinn-udp state.
#[derive(Debug)]
pub(crate) struct Socket {
    io: tokio::net::UdpSocket,
    state: UdpSocketState,
    local: SocketAddr,
    /// An IPv6 socket that also carries IPv4 (IPV6_V6ONLY off).
    dual_stack: bool,
}

impl Socket {
    /// Wraps a bound, non-blocking std socket; needs a tokio runtime. On Linux it asks for
    /// ICMP errors (IP_RECVERR and IPV6_RECVERR), which unconnected sockets otherwise never see.
    fn new(std: std::net::UdpSocket, dual_stack: bool) -> io::Result<Socket> {
        let state = UdpSocketState::new((&std).into())?;
        if let Err(e) = state.enable_transport_errors((&std).into()) {
            // Requests to a closed port then time out instead of failing at once.
            tracing::debug!("ICMP errors not available: {e}");
        }
        let local = std.local_addr()?;
        let io = tokio::net::UdpSocket::from_std(std)?;
        Ok(Socket {
            io,
            state,
            local,
            dual_stack,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Whether datagrams to `destination` can be sent on this socket.
    pub fn can_reach(&self, destination: SocketAddr) -> bool {
        reaches(self.local, self.dual_stack, destination)
    }

    /// How many datagrams the kernel may coalesce into one receive (GRO).
    pub fn gro_segments(&self) -> usize {
        self.state.gro_segments()
    }

    /// Whether this is an IPv6 socket.
    pub fn is_ipv6(&self) -> bool {
        self.local.is_ipv6()
    }

    /// Whether this is an IPv6 socket that carries IPv4 too.
    pub fn is_dual_stack(&self) -> bool {
        self.dual_stack
    }

    /// The socket for option calls (multicast membership).
    pub fn sock_ref(&self) -> socket2::SockRef<'_> {
        socket2::SockRef::from(&self.io)
    }

    /// Receives a batch of datagrams; `Ready(Ok(n))` fills `meta[..n]`.
    pub fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        loop {
            if let Err(e) = std::task::ready!(self.io.poll_recv_ready(cx)) {
                return Poll::Ready(Err(e));
            }
            match self.io.try_io(Interest::READABLE, || {
                self.state.recv((&self.io).into(), bufs, meta)
            }) {
                // Readiness was cleared: poll again to register the waker.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                result => return Poll::Ready(result),
            }
        }
    }

    /// Receives a batch if one is queued, without waiting and without registering for
    /// readiness (the driver's busy poll); `WouldBlock` when nothing is queued.
    pub fn try_recv(
        &self,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> io::Result<usize> {
        self.state.recv((&self.io).into(), bufs, meta)
    }

    /// Sends the waiting datagrams of `batch` (sendmmsg), waiting while the socket buffer
    /// is full; returns after the kernel took at least one, or with the error of the first.
    pub async fn send_batch(&self, batch: &mut SendBatch) -> io::Result<usize> {
        use std::os::fd::AsFd;
        let ipv6 = self.is_ipv6();
        let mut retried = false;
        loop {
            match self.io.try_io(Interest::WRITABLE, || {
                send_batch::send_mmsg(self.io.as_fd(), batch, |d| addr::for_socket(d, ipv6))
            }) {
                Ok(n) => {
                    batch.advance(n);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.io.writable().await?,
                // A pending ICMP error (IP_RECVERR) about another destination fails one send,
                // whatever its destination; the error itself waits in the error queue. Only
                // an error that comes again belongs to this datagram.
                Err(_) if !retried => retried = true,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads up to `max` queued ICMP errors (when the socket reports error readiness),
    /// handing each that says a destination is unreachable to `on_unreachable`; returns how
    /// many entries were read.
    pub fn drain_errors(&self, max: usize, mut on_unreachable: impl FnMut(Unreachable)) -> usize {
        use std::os::fd::AsFd;
        let mut read = 0;
        // Inside `try_io` so that an emptied queue (WouldBlock) clears tokio's error readiness
        // and an error queued meanwhile sets it again; with the budget used up it stays set.
        let _ = self.io.try_io(Interest::ERROR, || {
            while read < max {
                match error_queue::recv(self.io.as_fd()) {
                    Ok(entry) => {
                        read += 1;
                        if let Some(unreachable) = entry {
                            on_unreachable(unreachable);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(e),
                    Err(e) => {
                        // Reported as empty, so a failing queue cannot keep the driver busy.
                        tracing::debug!(socket = %self.local, "reading the error queue: {e}");
                        return Err(io::ErrorKind::WouldBlock.into());
                    }
                }
            }
            Ok(())
        });
        read
    }
}

/// Error readiness of one socket (ICMP errors are queued), which tokio offers only as a
/// future: the driver polls it here, and it waits anew after each time it fired.
pub(crate) struct ErrorWatch {
    socket: Arc<Socket>,
    wait: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl ErrorWatch {
    /// Watches `socket`.
    pub fn new(socket: Arc<Socket>) -> ErrorWatch {
        ErrorWatch { socket, wait: None }
    }

    /// Ready when the socket has errors to read with [`Socket::drain_errors`].
    pub fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let socket = &self.socket;
        let wait = self.wait.get_or_insert_with(|| {
            let socket = socket.clone();
            Box::pin(async move {
                if socket.io.ready(Interest::ERROR).await.is_err() {
                    // The runtime is shutting down: nothing more will be reported.
                    std::future::pending::<()>().await;
                }
            })
        });
        std::task::ready!(wait.as_mut().poll(cx));
        self.wait = None;
        Poll::Ready(())
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use std::time::Duration;

    use super::*;

    const LIMIT: Duration = Duration::from_secs(5);

    fn closed_port() -> SocketAddr {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    }

    /// Sends one datagram to each of `destinations`, then waits until an ICMP error is queued.
    async fn send_and_await_errors(socket: &Socket, destinations: &[SocketAddr]) {
        let mut batch = SendBatch::new(SEND_BATCH_MAX, 64);
        for d in destinations {
            assert!(batch.push(*d, b"x"));
        }
        while !batch.is_empty() {
            socket.send_batch(&mut batch).await.unwrap();
        }
        let ready = tokio::time::timeout(LIMIT, socket.io.ready(Interest::ERROR)).await;
        assert!(ready.expect("an ICMP error").unwrap().is_error());
    }

    fn drain(socket: &Socket, max: usize) -> (usize, Vec<Unreachable>) {
        let mut found = Vec::new();
        let read = socket.drain_errors(max, |u| found.push(u));
        (read, found)
    }

    #[tokio::test]
    async fn a_pending_icmp_error_does_not_fail_a_send_to_another_peer() {
        let socket = bind("127.0.0.1:0".parse().unwrap(), false).unwrap();
        let closed = closed_port();
        send_and_await_errors(&socket, &[closed]).await;

        // The kernel reports the pending error on the next send, whatever its destination.
        let peer = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut batch = SendBatch::new(1, 64);
        batch.push(peer.local_addr().unwrap(), b"to the peer");
        assert_eq!(socket.send_batch(&mut batch).await.unwrap(), 1);
        let mut buf = [0u8; 64];
        let n = tokio::time::timeout(LIMIT, peer.recv(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&buf[..n], b"to the peer");

        // The error is still queued, for the destination it is about.
        let (read, found) = drain(&socket, 8);
        assert_eq!(read, 1);
        let expected = Unreachable {
            destination: closed,
            reason: "ICMP port unreachable",
            port_closed: true,
        };
        assert_eq!(found, vec![expected]);
        assert_eq!(drain(&socket, 8), (0, Vec::new()));
    }

    #[tokio::test]
    async fn draining_stops_at_the_budget_and_resumes() {
        let socket = bind("[::]:0".parse().unwrap(), false).unwrap();
        let closed: Vec<SocketAddr> = (0..3).map(|_| closed_port()).collect();
        send_and_await_errors(&socket, &closed).await;
        // Loopback answers within the send; the pause only guards against a slow machine.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (read, first) = drain(&socket, 2);
        assert_eq!(read, 2);
        let ready = tokio::time::timeout(LIMIT, socket.io.ready(Interest::ERROR)).await;
        assert!(ready.is_ok(), "still ready: one error left");
        let (read, rest) = drain(&socket, 2);
        assert_eq!(read, 1);
        let mut destinations: Vec<SocketAddr> =
            first.iter().chain(&rest).map(|u| u.destination).collect();
        destinations.sort();
        let mut expected = closed.clone();
        expected.sort();
        assert_eq!(destinations, expected, "plain IPv4 on a dual-stack socket");
    }
}
