//! A UDP socket for tight loops outside the async driver: non-blocking batched receive
//! (recvmmsg) and send (sendmmsg), with nothing allocated per datagram.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;

use quinn_udp::UdpSocketState;

use super::{addr, bind, send_batch, RecvBatch, SendBatch};

/// A bound, non-blocking UDP socket that sends and receives whole batches per system call.
#[derive(Debug)]
pub struct BatchSocket {
    socket: std::net::UdpSocket,
    state: UdpSocketState,
    local: SocketAddr,
}

impl BatchSocket {
    /// Binds to `addr` (`[::]` is dual-stack), non-blocking, with enlarged buffers.
    pub fn bind(addr: SocketAddr) -> io::Result<BatchSocket> {
        let (socket, _dual_stack) = bind::bind_std(addr, false)?;
        let state = UdpSocketState::new((&socket).into())?;
        let local = socket.local_addr()?;
        Ok(BatchSocket {
            socket,
            state,
            local,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The underlying std socket.
    pub fn as_std(&self) -> &std::net::UdpSocket {
        &self.socket
    }

    /// A receive batch sized for this socket (datagrams up to `max_datagram` bytes).
    pub fn recv_batch(&self, max_datagram: usize) -> RecvBatch {
        RecvBatch::new(max_datagram, self.state.gro_segments())
    }

    /// Receives what is queued, up to one batch; `WouldBlock` when nothing is. Read the
    /// datagrams with [`RecvBatch::received`] and the returned count.
    pub fn recv(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        let (mut slices, meta, slots) = batch.parts();
        self.state.recv(
            (&self.socket).into(),
            &mut slices[..slots],
            &mut meta[..slots],
        )
    }

    /// Sends the waiting datagrams of `batch` with one system call and removes those the
    /// kernel took; `WouldBlock` when the socket buffer is full, or the error of the first
    /// datagram (which stays queued: see [`SendBatch::skip`]).
    pub fn send(&self, batch: &mut SendBatch) -> io::Result<usize> {
        let ipv6 = self.local.is_ipv6();
        let n = send_batch::send_mmsg(self.socket.as_fd(), batch, |d| addr::for_socket(d, ipv6))?;
        batch.advance(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_round_trip_on_loopback() {
        let a = BatchSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let b = BatchSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut out = SendBatch::new(16, 256);
        for i in 0..10u8 {
            assert!(out.push(b.local_addr(), &[i; 20]));
        }
        while !out.is_empty() {
            a.send(&mut out).unwrap();
        }
        let mut rx = b.recv_batch(256);
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while got.len() < 10 && std::time::Instant::now() < deadline {
            match b.recv(&mut rx) {
                Ok(n) => got.extend(rx.received(n).map(|(from, d)| (from, d.to_vec()))),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got.len(), 10);
        for (i, (from, d)) in got.iter().enumerate() {
            assert_eq!(*from, a.local_addr());
            assert_eq!(d, &vec![i as u8; 20]);
        }
        assert!(matches!(b.recv(&mut rx), Err(e) if e.kind() == io::ErrorKind::WouldBlock));
    }
}
