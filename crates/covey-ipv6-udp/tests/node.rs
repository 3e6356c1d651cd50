//! The node's end of the link: what it delivers, answers and drops, checked on packets the
//! peer's end writes with the same code and on packets made by hand.

use core::net::{Ipv6Addr, SocketAddrV6};

use covey_ipv6_udp::{has_zero_udp_checksum, DropCause, Node, Received, IPV6_HEADER, UDP_PAYLOAD};
use proptest::prelude::*;
use smoltcp::wire::{Icmpv6Packet, IpProtocol, Ipv6Packet};

/// The mote's largest packet: a 576-byte message in UDP and IPv6.
const MTU: usize = 624;
const MOTE: Ipv6Addr = Ipv6Addr::new(0xfd00, 1, 0, 0, 0, 0, 0, 2);
const HOST: Ipv6Addr = Ipv6Addr::new(0xfd00, 1, 0, 0, 0, 0, 0, 1);

fn mote() -> Node {
    Node {
        address: MOTE,
        port: 5683,
    }
}

/// A UDP datagram from `from` (HOST unless given) to the mote's `port`, as the host's end
/// writes it.
fn datagram(from: SocketAddrV6, port: u16, payload: &[u8]) -> Vec<u8> {
    let host = Node {
        address: *from.ip(),
        port: from.port(),
    };
    let mut tx = vec![0u8; UDP_PAYLOAD + payload.len()];
    tx[UDP_PAYLOAD..].copy_from_slice(payload);
    let len = host.write_udp(&mut tx, SocketAddrV6::new(MOTE, port, 0, 0), payload.len());
    assert_eq!(len, tx.len());
    tx
}

fn from_host(port: u16) -> SocketAddrV6 {
    SocketAddrV6::new(HOST, port, 0, 0)
}

/// An echo request from HOST with `data`, its checksum filled in.
fn echo_request(data: &[u8]) -> Vec<u8> {
    let mut packet = vec![0u8; IPV6_HEADER + 8 + data.len()];
    {
        let mut ip = Ipv6Packet::new_unchecked(&mut packet[..]);
        ip.set_version(6);
        ip.set_payload_len((8 + data.len()) as u16);
        ip.set_next_header(IpProtocol::Icmpv6);
        ip.set_hop_limit(64);
        ip.set_src_addr(HOST);
        ip.set_dst_addr(MOTE);
    }
    let icmp = &mut packet[IPV6_HEADER..];
    icmp[0] = 128;
    icmp[4..8].copy_from_slice(&[0x12, 0x34, 0, 7]);
    icmp[8..].copy_from_slice(data);
    Icmpv6Packet::new_unchecked(icmp).fill_checksum(&HOST, &MOTE);
    packet
}

#[test]
fn a_datagram_to_the_port_is_delivered_with_its_sender() {
    let packet = datagram(from_host(40001), 5683, b"\x40\x01\x00\x01");
    let mut tx = [0u8; MTU];
    assert_eq!(
        mote().receive(&packet, &mut tx, true),
        Received::Datagram {
            from: from_host(40001),
            payload: b"\x40\x01\x00\x01"
        }
    );
}

#[test]
fn zero_and_wrong_udp_checksums_are_dropped() {
    let mut packet = datagram(from_host(40001), 5683, b"hello");
    let mut tx = [0u8; MTU];
    let checksum = IPV6_HEADER + 6;
    packet[checksum] ^= 0x55;
    assert_eq!(
        mote().receive(&packet, &mut tx, true),
        Received::Dropped(DropCause::BadChecksum)
    );
    assert!(!has_zero_udp_checksum(&packet));
    packet[checksum..checksum + 2].copy_from_slice(&[0, 0]);
    assert_eq!(
        mote().receive(&packet, &mut tx, true),
        Received::Dropped(DropCause::ZeroChecksum)
    );
    // The check a stack that accepts zero is given first; an echo request is not UDP.
    assert!(has_zero_udp_checksum(&packet));
    assert!(!has_zero_udp_checksum(&echo_request(b"ping")));
}

#[test]
fn packets_for_others_from_groups_and_with_extension_headers_are_dropped() {
    let mut tx = [0u8; MTU];
    let mut other = datagram(from_host(40001), 5683, b"x");
    other[39] = 3; // fd00:1::3
    assert_eq!(
        mote().receive(&other, &mut tx, true),
        Received::Dropped(DropCause::NotForUs)
    );
    let group = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 0xfd);
    let from_group = datagram(SocketAddrV6::new(group, 5683, 0, 0), 5683, b"x");
    assert_eq!(
        mote().receive(&from_group, &mut tx, true),
        Received::Dropped(DropCause::NotForUs)
    );
    let mut hop_by_hop = datagram(from_host(40001), 5683, b"x");
    hop_by_hop[6] = 0;
    assert_eq!(
        mote().receive(&hop_by_hop, &mut tx, true),
        Received::Dropped(DropCause::Unsupported)
    );
    assert_eq!(
        mote().receive(&hop_by_hop[..30], &mut tx, true),
        Received::Dropped(DropCause::Malformed)
    );
}

#[test]
fn an_echo_request_is_answered_with_the_same_data() {
    let request = echo_request(b"covey-mote ping");
    let mut tx = [0u8; MTU];
    let Received::EchoReply(len) = mote().receive(&request, &mut tx, true) else {
        panic!("no reply");
    };
    assert_eq!(len, request.len());
    let ip = Ipv6Packet::new_checked(&tx[..len]).unwrap();
    assert_eq!((ip.src_addr(), ip.dst_addr()), (MOTE, HOST));
    assert_eq!(ip.next_header(), IpProtocol::Icmpv6);
    let icmp = Icmpv6Packet::new_checked(ip.payload()).unwrap();
    assert!(icmp.verify_checksum(&MOTE, &HOST));
    assert_eq!(ip.payload()[0], 129);
    assert_eq!(&ip.payload()[4..], &request[IPV6_HEADER + 4..]);

    // One whose reply would not fit is not answered; a bad checksum neither.
    let large = echo_request(&[7u8; MTU]);
    assert_eq!(
        mote().receive(&large, &mut tx, true),
        Received::Dropped(DropCause::Unanswered)
    );
    let mut broken = echo_request(b"ping");
    broken[IPV6_HEADER + 8] ^= 1;
    assert_eq!(
        mote().receive(&broken, &mut tx, true),
        Received::Dropped(DropCause::BadChecksum)
    );
}

#[test]
fn a_datagram_to_another_port_gets_port_unreachable_quoting_it_when_allowed() {
    let packet = datagram(from_host(40001), 9, b"not coap");
    let mut tx = [0u8; MTU];
    assert_eq!(mote().receive(&packet, &mut tx, false), Received::OtherPort);
    let Received::PortUnreachable(len) = mote().receive(&packet, &mut tx, true) else {
        panic!("no error");
    };
    assert_eq!(len, IPV6_HEADER + 8 + packet.len());
    let ip = Ipv6Packet::new_checked(&tx[..len]).unwrap();
    assert_eq!((ip.src_addr(), ip.dst_addr()), (MOTE, HOST));
    let icmp = Icmpv6Packet::new_checked(ip.payload()).unwrap();
    assert!(icmp.verify_checksum(&MOTE, &HOST));
    assert_eq!(&ip.payload()[..2], &[1, 4]);
    assert_eq!(&ip.payload()[8..], &packet[..]);

    // It quotes no more than the buffer holds, and needs room for its headers.
    let long = datagram(from_host(40001), 9, &[1u8; 700]);
    assert_eq!(
        mote().receive(&long, &mut tx, true),
        Received::PortUnreachable(MTU)
    );
    assert_eq!(
        mote().receive(&packet, &mut [0u8; 47], true),
        Received::OtherPort
    );
}

proptest! {
    #[test]
    fn what_the_peer_writes_is_delivered_whole(
        port in 1u16..,
        payload in proptest::collection::vec(any::<u8>(), 0..576),
    ) {
        let packet = datagram(from_host(port), 5683, &payload);
        let mut tx = [0u8; MTU];
        prop_assert_eq!(
            mote().receive(&packet, &mut tx, true),
            Received::Datagram { from: from_host(port), payload: &payload }
        );
    }

    /// A byte changed anywhere is never delivered as another datagram: the checksum covers
    /// the addresses, ports, length and payload, and what it does not cover (traffic class,
    /// flow label, hop limit) changes nothing delivered.
    #[test]
    fn a_changed_byte_is_never_delivered_as_another_datagram(
        payload in proptest::collection::vec(any::<u8>(), 1..64),
        at in any::<prop::sample::Index>(),
        flip in 1u8..,
    ) {
        let original = datagram(from_host(40001), 5683, &payload);
        let mut packet = original.clone();
        let i = at.index(packet.len());
        packet[i] ^= flip;
        let mut tx = [0u8; MTU];
        if let Received::Datagram { from, payload: got } = mote().receive(&packet, &mut tx, true) {
            prop_assert_eq!(from, from_host(40001));
            prop_assert_eq!(got, &payload[..]);
        }
    }

    #[test]
    fn any_bytes_are_classified_without_panicking_and_replies_fit(
        packet in proptest::collection::vec(any::<u8>(), 0..700),
        tx_len in 0usize..700,
    ) {
        let mut tx = vec![0u8; tx_len];
        match mote().receive(&packet, &mut tx, true) {
            Received::EchoReply(len) => prop_assert!(len <= tx_len),
            Received::PortUnreachable(len) => prop_assert!(len <= tx_len.min(1280)),
            Received::Datagram { payload, .. } => prop_assert!(payload.len() <= packet.len()),
            _ => {}
        }
    }
}
