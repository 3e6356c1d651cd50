//! The server build's network layer: IPv6 and UDP straight on the SLIP line (`covey-ipv6-udp`,
//! smoltcp's packet parsers and checksums without its interface and sockets). A SLIP line is a
//! point-to-point link with one address at each end and no neighbour discovery, so the
//! interface's routes, neighbour cache and socket buffers have nothing to do: a datagram is
//! read where the line decoded it and the reply written where the line sends it, with no copy
//! and no buffer of its own. The full build, whose multicast groups need MLD, keeps the
//! interface.

use core::net::{Ipv6Addr, SocketAddr};

use covey_ipv6_udp::{Node, Received, UDP_PAYLOAD};
use covey_proto::LocalAddr;

use crate::slip_line::SlipLine;

/// At most one ICMPv6 error a second (RFC 4443 §2.4 (f) requires a limit; one second is
/// Linux's `net.ipv6.icmp.ratelimit` default), so a flood to closed ports is not answered
/// with a flood on the line.
const ERROR_INTERVAL_MS: u64 = 1_000;

/// IPv6 and UDP on the line, for one address and one UDP port.
pub struct Network {
    line: &'static mut SlipLine,
    node: Node,
    /// When the last ICMPv6 error was sent.
    last_error_ms: Option<u64>,
}

impl Network {
    /// The line, serving `port` at `address`.
    pub fn new(line: &'static mut SlipLine, address: Ipv6Addr, port: u16, _now_ms: u64) -> Self {
        Network {
            line,
            node: Node { address, port },
            last_error_ms: None,
        }
    }

    /// Moves received bytes from the UART into the line until a packet is complete.
    pub fn poll(&mut self, _ms: u64) {
        self.line.pump();
    }

    /// Hands the datagram that arrived for the port, if one did, to `deliver`; answers an
    /// echo request, and a datagram to another port with port unreachable; drops the rest
    /// (other protocols, extension headers and fragments, bad checksums, other addresses).
    pub fn receive(&mut self, ms: u64, mut deliver: impl FnMut(SocketAddr, LocalAddr, &[u8])) {
        let Some((packet, tx)) = self.line.take_packet() else {
            return;
        };
        let error_allowed = self
            .last_error_ms
            .is_none_or(|at| ms >= at + ERROR_INTERVAL_MS);
        let reply = match self.node.receive(packet, tx, error_allowed) {
            Received::Datagram { from, payload } => {
                deliver(SocketAddr::V6(from), LocalAddr::UNICAST, payload);
                None
            }
            Received::EchoReply(len) => Some(len),
            Received::PortUnreachable(len) => {
                self.last_error_ms = Some(ms);
                Some(len)
            }
            Received::OtherPort | Received::Dropped(_) => None,
        };
        if let Some(len) = reply {
            self.line.send_tx(len);
        }
    }

    /// Sends the datagrams `next` writes (into the buffer it is given, returning their
    /// destination and length), one at a time, until it has none.
    pub fn send_all(
        &mut self,
        _ms: u64,
        mut next: impl FnMut(&mut [u8]) -> Option<(SocketAddr, usize)>,
    ) {
        loop {
            let tx = self.line.tx();
            let Some((to, len)) = next(&mut tx[UDP_PAYLOAD..]) else {
                return;
            };
            // The mote has an IPv6 address only: nothing it answers is IPv4.
            let SocketAddr::V6(to) = to else { continue };
            let len = self.node.write_udp(tx, to, len);
            self.line.send_tx(len);
        }
    }

    /// Whether bytes or a packet wait to be handled.
    pub fn busy(&self) -> bool {
        self.line.busy()
    }
}
