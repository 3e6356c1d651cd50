//! The UDP socket layer: sockets bound with socket2, batched receive (recvmmsg) with the
//! destination address of each datagram (pktinfo) through quinn-udp, and address mapping
//! between dual-stack sockets and the engine.

mod addr;
mod bind;
mod recv_batch;

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::task::{Context, Poll};

use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use tokio::io::Interest;

pub(crate) use addr::{canonical_ip, canonical_socket_addr};
pub(crate) use bind::bind;
pub(crate) use recv_batch::RecvBatch;

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
    /// Wraps a bound, non-blocking std socket; needs a tokio runtime.
    fn new(std: std::net::UdpSocket, dual_stack: bool) -> io::Result<Socket> {
        let state = UdpSocketState::new((&std).into())?;
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
        match (self.local, destination) {
            (SocketAddr::V4(_), SocketAddr::V4(_)) | (SocketAddr::V6(_), SocketAddr::V6(_)) => true,
            (SocketAddr::V6(_), SocketAddr::V4(_)) => self.dual_stack,
            (SocketAddr::V4(_), SocketAddr::V6(d)) => d.ip().to_ipv4_mapped().is_some(),
        }
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

    /// Sends one datagram, waiting while the socket buffer is full.
    pub async fn send(&self, destination: SocketAddr, contents: &[u8]) -> io::Result<()> {
        let destination = addr::for_socket(destination, self.is_ipv6());
        let transmit = Transmit {
            destination,
            ecn: None,
            contents,
            segment_size: None,
            src_ip: None,
        };
        loop {
            match self.io.try_io(Interest::WRITABLE, || {
                self.state.try_send((&self.io).into(), &transmit)
            }) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.io.writable().await?,
                result => return result,
            }
        }
    }
}
