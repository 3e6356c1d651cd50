//! IPv6 (RFC 8200) and UDP (RFC 768) for a node at one end of a point-to-point link, as the
//! mote's server build runs them on its SLIP line: a received packet is read where the link
//! left it and a reply is written where the link sends from, with no buffer of its own.
//!
//! A point-to-point link has one address at each end and no neighbour discovery, so nothing
//! here keeps state: [`Node::receive`] classifies a packet (a UDP datagram to the node's
//! port, an echo request it answers in the transmit buffer, a datagram to another port,
//! answered with port unreachable when the caller's rate limit allows an ICMPv6 error, RFC
//! 4443 §2.4 (f), or one to drop and why), and [`Node::write_udp`] puts the headers in front
//! of a payload already in the transmit buffer. Packet fields and
//! checksums are smoltcp's (`smoltcp::wire`).
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use core::net::{Ipv6Addr, SocketAddrV6};

use smoltcp::wire::{Icmpv6Packet, IpAddress, IpProtocol, Ipv6Packet, UdpPacket};

/// An IPv6 header's length.
pub const IPV6_HEADER: usize = 40;
/// A UDP header's length.
pub const UDP_HEADER: usize = 8;
/// Where a UDP payload starts in a packet [`Node::write_udp`] completes.
pub const UDP_PAYLOAD: usize = IPV6_HEADER + UDP_HEADER;

/// ICMPv6 message types (RFC 4443 §2.1) and the code of a closed port (§3.1).
const DESTINATION_UNREACHABLE: u8 = 1;
const PORT_UNREACHABLE: u8 = 4;
const ECHO_REQUEST: u8 = 128;
const ECHO_REPLY: u8 = 129;
/// An ICMPv6 error's header: type, code, checksum and 4 unused bytes.
const ICMP_ERROR_HEADER: usize = 8;
/// The IPv6 minimum MTU (RFC 8200 §5): an ICMPv6 error quotes no more of the invoking packet
/// than keeps it within (RFC 4443 §2.4 (c)).
const MIN_MTU: usize = 1280;
/// The hop limit of packets the node sends (RFC 8200 §3 leaves it to the node; 64, as
/// smoltcp's and Linux's default).
const HOP_LIMIT: u8 = 64;

/// What a received packet was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received<'a> {
    /// A UDP datagram to the node's port: its sender and its payload, within the packet.
    Datagram {
        /// The sender's address and port.
        from: SocketAddrV6,
        /// The UDP payload.
        payload: &'a [u8],
    },
    /// An echo request, answered in the transmit buffer: send its first this many bytes.
    EchoReply(usize),
    /// A valid UDP datagram to another port, answered in the transmit buffer with port
    /// unreachable (RFC 4443 §3.1): send its first this many bytes.
    PortUnreachable(usize),
    /// A valid UDP datagram to another port, not answered: no ICMPv6 error was allowed, or
    /// the transmit buffer cannot hold one.
    OtherPort,
    /// Dropped, and why.
    Dropped(DropCause),
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// Shorter than its headers say, or not IPv6.
    Malformed,
    /// Sent to another address, or from a multicast or unspecified one (nothing may be
    /// answered to those: RFC 4443 §2.4 (e)).
    NotForUs,
    /// Neither UDP nor ICMPv6 right after the IPv6 header: other protocols, extension headers
    /// and fragments (the node reassembles nothing).
    Unsupported,
    /// A UDP checksum of zero, which IPv6 does not allow (RFC 8200 §8.1).
    ZeroChecksum,
    /// A UDP or ICMPv6 checksum that does not match.
    BadChecksum,
    /// An ICMPv6 message the node does not answer, or an echo request whose reply would not
    /// fit the transmit buffer.
    Unanswered,
}

/// Whether `packet` is UDP right after an IPv6 header with a zero checksum, which RFC 8200
/// §8.1 requires a receiver to discard: for a stack that takes zero as "no checksum" over
/// IPv6 too (smoltcp 0.14, since its pull request 632), checked before the packet reaches
/// it. [`Node::receive`] drops such a packet itself.
// Inlined into the caller's receive path, as the check it replaces was.
#[inline]
pub fn has_zero_udp_checksum(packet: &[u8]) -> bool {
    let Ok(ip) = Ipv6Packet::new_checked(packet) else {
        return false;
    };
    ip.next_header() == IpProtocol::Udp
        && UdpPacket::new_checked(ip.payload()).is_ok_and(|udp| udp.checksum() == 0)
}

/// The node's end of the link: its address and the UDP port it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// The node's address.
    pub address: Ipv6Addr,
    /// The UDP port it serves.
    pub port: u16,
}

impl Node {
    /// Classifies `packet`; an echo request is answered in `tx`, and a datagram to another
    /// port too when `error_allowed` (the caller's rate limit on ICMPv6 errors).
    pub fn receive<'a>(
        &self,
        packet: &'a [u8],
        tx: &mut [u8],
        error_allowed: bool,
    ) -> Received<'a> {
        let Ok(ip) = Ipv6Packet::new_checked(packet) else {
            return Received::Dropped(DropCause::Malformed);
        };
        if ip.version() != 6 {
            return Received::Dropped(DropCause::Malformed);
        }
        let (from, to) = (ip.src_addr(), ip.dst_addr());
        if to != self.address || from.is_multicast() || from.is_unspecified() {
            return Received::Dropped(DropCause::NotForUs);
        }
        let payload = ip.payload();
        match ip.next_header() {
            IpProtocol::Udp => match self.receive_udp(from, payload) {
                Received::OtherPort if error_allowed => {
                    let invoking = &packet[..ip.total_len()];
                    self.port_unreachable(from, invoking, tx)
                        .map_or(Received::OtherPort, Received::PortUnreachable)
                }
                received => received,
            },
            IpProtocol::Icmpv6 => self.answer_echo(from, payload, tx),
            _ => Received::Dropped(DropCause::Unsupported),
        }
    }

    fn receive_udp<'a>(&self, from: Ipv6Addr, segment: &'a [u8]) -> Received<'a> {
        let Ok(udp) = UdpPacket::new_checked(segment) else {
            return Received::Dropped(DropCause::Malformed);
        };
        if udp.checksum() == 0 {
            return Received::Dropped(DropCause::ZeroChecksum);
        }
        let (src, dst) = (IpAddress::Ipv6(from), IpAddress::Ipv6(self.address));
        if !udp.verify_checksum(&src, &dst) {
            return Received::Dropped(DropCause::BadChecksum);
        }
        if udp.dst_port() != self.port {
            return Received::OtherPort;
        }
        Received::Datagram {
            from: SocketAddrV6::new(from, udp.src_port(), 0, 0),
            payload: udp.payload(),
        }
    }

    /// The same message back as an echo reply (RFC 4443 §4.2), when it fits `tx`.
    fn answer_echo<'a>(&self, from: Ipv6Addr, message: &[u8], tx: &mut [u8]) -> Received<'a> {
        let len = message.len();
        if len < 8 || message[0] != ECHO_REQUEST || message[1] != 0 {
            return Received::Dropped(DropCause::Unanswered);
        }
        if !Icmpv6Packet::new_unchecked(message).verify_checksum(&from, &self.address) {
            return Received::Dropped(DropCause::BadChecksum);
        }
        let Some(reply) = tx.get_mut(IPV6_HEADER..IPV6_HEADER + len) else {
            return Received::Dropped(DropCause::Unanswered);
        };
        reply.copy_from_slice(message);
        reply[0] = ECHO_REPLY;
        Received::EchoReply(self.finish_icmp(tx, from, len))
    }

    /// Writes into `tx` the port unreachable error (RFC 4443 §3.1) to `to` for `invoking`,
    /// quoting as much of it as fits; its length, or `None` when `tx` cannot hold the
    /// error's headers.
    fn port_unreachable(&self, to: Ipv6Addr, invoking: &[u8], tx: &mut [u8]) -> Option<usize> {
        let room = tx
            .len()
            .min(MIN_MTU)
            .checked_sub(IPV6_HEADER + ICMP_ERROR_HEADER)?;
        let quoted = invoking.len().min(room);
        let error = &mut tx[IPV6_HEADER..IPV6_HEADER + ICMP_ERROR_HEADER + quoted];
        error[..ICMP_ERROR_HEADER].copy_from_slice(&[
            DESTINATION_UNREACHABLE,
            PORT_UNREACHABLE,
            0,
            0,
            0,
            0,
            0,
            0,
        ]);
        error[ICMP_ERROR_HEADER..].copy_from_slice(&invoking[..quoted]);
        Some(self.finish_icmp(tx, to, ICMP_ERROR_HEADER + quoted))
    }

    /// Fills in the checksum of the ICMPv6 message of `len` bytes after the IPv6 header in
    /// `tx`, and the header, for `to`; returns the packet's length.
    fn finish_icmp(&self, tx: &mut [u8], to: Ipv6Addr, len: usize) -> usize {
        let mut icmp = Icmpv6Packet::new_unchecked(&mut tx[IPV6_HEADER..IPV6_HEADER + len]);
        icmp.fill_checksum(&self.address, &to);
        self.write_ipv6_header(tx, to, IpProtocol::Icmpv6, len)
    }

    /// Puts the IPv6 and UDP headers in front of the `payload_len` bytes at
    /// [`UDP_PAYLOAD`] in `tx`, from the node's port to `to`; returns the packet's length.
    ///
    /// # Panics
    /// When `tx` is shorter than the packet, or the datagram longer than 65 535 bytes.
    pub fn write_udp(&self, tx: &mut [u8], to: SocketAddrV6, payload_len: usize) -> usize {
        let udp_len = UDP_HEADER + payload_len;
        let length = u16::try_from(udp_len).expect("a UDP datagram of at most 65 535 bytes");
        let mut udp = UdpPacket::new_unchecked(&mut tx[IPV6_HEADER..IPV6_HEADER + udp_len]);
        udp.set_src_port(self.port);
        udp.set_dst_port(to.port());
        udp.set_len(length);
        udp.fill_checksum(&IpAddress::Ipv6(self.address), &IpAddress::Ipv6(*to.ip()));
        self.write_ipv6_header(tx, *to.ip(), IpProtocol::Udp, udp_len)
    }

    /// Writes the IPv6 header of a packet of `payload_len` bytes to `to`; returns the
    /// packet's length.
    fn write_ipv6_header(
        &self,
        tx: &mut [u8],
        to: Ipv6Addr,
        next_header: IpProtocol,
        payload_len: usize,
    ) -> usize {
        let mut ip = Ipv6Packet::new_unchecked(&mut tx[..IPV6_HEADER]);
        ip.set_version(6);
        ip.set_traffic_class(0);
        ip.set_flow_label(0);
        // An echo reply is as long as its request's IPv6 payload, an error at most the
        // minimum MTU, a UDP datagram checked by `write_udp`: all within 16 bits.
        ip.set_payload_len(payload_len as u16);
        ip.set_next_header(next_header);
        ip.set_hop_limit(HOP_LIMIT);
        ip.set_src_addr(self.address);
        ip.set_dst_addr(to);
        IPV6_HEADER + payload_len
    }
}
