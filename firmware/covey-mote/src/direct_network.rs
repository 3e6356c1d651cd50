//! The server build's network layer: IPv6 (RFC 8200), UDP (RFC 768) and ICMPv6 echo and
//! port-unreachable (RFC 4443) straight on the SLIP line, with smoltcp's packet parsers and
//! checksums (`smoltcp::wire`) but not its interface and sockets. A SLIP line is a point-to-
//! point link with one address at each end and no neighbour discovery, so the interface's
//! routes, neighbour cache and socket buffers have nothing to do: a datagram is read where
//! the line decoded it and the reply written where the line sends it, with no copy and no
//! buffer of its own (1.7 KiB of RAM and 6 KiB of flash less than through smoltcp's
//! interface). The full build, whose multicast groups need MLD, keeps the interface.

use core::net::{Ipv6Addr, SocketAddr, SocketAddrV6};

use covey_proto::LocalAddr;
use smoltcp::wire::{IpAddress, IpProtocol, Ipv6Packet, UdpPacket};

use crate::slip_line::{SlipLine, MTU};

/// An IPv6 header's length.
const IPV6_HEADER: usize = 40;
/// A UDP header's length.
const UDP_HEADER: usize = 8;
/// ICMPv6 message types (RFC 4443 §2.1) and the code of a closed port (§3.1).
const DESTINATION_UNREACHABLE: u8 = 1;
const PORT_UNREACHABLE: u8 = 4;
const ECHO_REQUEST: u8 = 128;
const ECHO_REPLY: u8 = 129;
/// The hop limit of packets the mote sends (RFC 8200 §3 leaves it to the node; 64, as
/// smoltcp's and Linux's default).
const HOP_LIMIT: u8 = 64;
/// At most one ICMPv6 error a second (RFC 4443 §2.4 (f) requires a limit; one second is
/// Linux's `net.ipv6.icmp.ratelimit` default), so a flood to closed ports is not answered
/// with a flood on the line.
const ERROR_INTERVAL_MS: u64 = 1_000;

/// IPv6 and UDP on the line, for one address and one UDP port.
pub struct Network {
    line: &'static mut SlipLine,
    address: Ipv6Addr,
    port: u16,
    /// When the last ICMPv6 error was sent.
    last_error_ms: Option<u64>,
}

impl Network {
    /// The line, serving `port` at `address`.
    pub fn new(line: &'static mut SlipLine, address: Ipv6Addr, port: u16, _now_ms: u64) -> Self {
        Network {
            line,
            address,
            port,
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
        let Some((frame, tx)) = self.line.take_packet() else {
            return;
        };
        let Ok(packet) = Ipv6Packet::new_checked(frame) else {
            return;
        };
        let (from, to) = (packet.src_addr(), packet.dst_addr());
        // RFC 4443 §2.4 (e) and RFC 8200 §3: nothing is answered to a multicast or
        // unspecified source.
        if packet.version() != 6
            || to != self.address
            || from.is_multicast()
            || from.is_unspecified()
        {
            return;
        }
        let payload = packet.payload();
        let reply_len = match packet.next_header() {
            IpProtocol::Udp => {
                let Ok(udp) = UdpPacket::new_checked(payload) else {
                    return;
                };
                // RFC 8200 §8.1: a zero UDP checksum is not allowed over IPv6.
                let (src, dst) = (IpAddress::Ipv6(from), IpAddress::Ipv6(to));
                if udp.checksum() == 0 || !udp.verify_checksum(&src, &dst) {
                    return;
                }
                if udp.dst_port() == self.port {
                    let remote = SocketAddrV6::new(from, udp.src_port(), 0, 0);
                    deliver(SocketAddr::V6(remote), LocalAddr::UNICAST, udp.payload());
                    return;
                }
                if self
                    .last_error_ms
                    .is_some_and(|at| ms < at + ERROR_INTERVAL_MS)
                {
                    return;
                }
                self.last_error_ms = Some(ms);
                // The invoking packet, as much of it as fits (RFC 4443 §3.1).
                let quoted = frame.len().min(MTU - IPV6_HEADER - 8);
                tx[IPV6_HEADER..IPV6_HEADER + 8].copy_from_slice(&[
                    DESTINATION_UNREACHABLE,
                    PORT_UNREACHABLE,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                ]);
                tx[IPV6_HEADER + 8..IPV6_HEADER + 8 + quoted].copy_from_slice(&frame[..quoted]);
                8 + quoted
            }
            IpProtocol::Icmpv6 => {
                // An echo request whose reply fits the line, with a valid checksum: the
                // same message back as a reply (RFC 4443 §4.2).
                let len = payload.len();
                if !(8..=MTU - IPV6_HEADER).contains(&len) || payload[0] != ECHO_REQUEST {
                    return;
                }
                let icmp = smoltcp::wire::Icmpv6Packet::new_unchecked(payload);
                if !icmp.verify_checksum(&from, &to) {
                    return;
                }
                tx[IPV6_HEADER..IPV6_HEADER + len].copy_from_slice(payload);
                tx[IPV6_HEADER] = ECHO_REPLY;
                len
            }
            _ => return,
        };
        let icmp = &mut tx[IPV6_HEADER..IPV6_HEADER + reply_len];
        let mut icmp = smoltcp::wire::Icmpv6Packet::new_unchecked(icmp);
        icmp.fill_checksum(&self.address, &from);
        write_ipv6_header(tx, self.address, from, IpProtocol::Icmpv6, reply_len);
        self.line.send_tx(IPV6_HEADER + reply_len);
    }

    /// Sends the datagrams `next` writes (into the buffer it is given, returning their
    /// destination and length), one at a time, until it has none.
    pub fn send_all(
        &mut self,
        _ms: u64,
        mut next: impl FnMut(&mut [u8]) -> Option<(SocketAddr, usize)>,
    ) {
        const HEADERS: usize = IPV6_HEADER + UDP_HEADER;
        loop {
            let tx = self.line.tx();
            let Some((to, len)) = next(&mut tx[HEADERS..]) else {
                return;
            };
            let SocketAddr::V6(to) = to else { continue };
            let udp_len = UDP_HEADER + len;
            let mut udp = UdpPacket::new_unchecked(&mut tx[IPV6_HEADER..IPV6_HEADER + udp_len]);
            udp.set_src_port(self.port);
            udp.set_dst_port(to.port());
            udp.set_len(udp_len as u16);
            udp.fill_checksum(&IpAddress::Ipv6(self.address), &IpAddress::Ipv6(*to.ip()));
            write_ipv6_header(tx, self.address, *to.ip(), IpProtocol::Udp, udp_len);
            self.line.send_tx(IPV6_HEADER + udp_len);
        }
    }

    /// Whether bytes or a packet wait to be handled.
    pub fn busy(&self) -> bool {
        self.line.busy()
    }
}

/// Writes the IPv6 header of a packet of `payload_len` bytes from `from` to `to`.
fn write_ipv6_header(
    tx: &mut [u8],
    from: Ipv6Addr,
    to: Ipv6Addr,
    next_header: IpProtocol,
    payload_len: usize,
) {
    let mut ip = Ipv6Packet::new_unchecked(tx);
    ip.set_version(6);
    ip.set_traffic_class(0);
    ip.set_flow_label(0);
    ip.set_payload_len(payload_len as u16);
    ip.set_next_header(next_header);
    ip.set_hop_limit(HOP_LIMIT);
    ip.set_src_addr(from);
    ip.set_dst_addr(to);
}
