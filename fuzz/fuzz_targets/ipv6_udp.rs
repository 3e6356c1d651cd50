//! Feeds arbitrary packets to the mote's IPv6 and UDP layer: it classifies every one without
//! panicking, a reply fits the transmit buffer and is nothing the node would answer again,
//! and a delivered payload lies within the packet.
#![no_main]

use core::net::Ipv6Addr;

use covey_ipv6_udp::{Node, Received};
use libfuzzer_sys::fuzz_target;

const MOTE: Ipv6Addr = Ipv6Addr::new(0xfd00, 1, 0, 0, 0, 0, 0, 2);

fuzz_target!(|packet: &[u8]| {
    let node = Node {
        address: MOTE,
        port: 5683,
    };
    let mut tx = [0u8; 624];
    match node.receive(packet, &mut tx, true) {
        Received::EchoReply(len) | Received::PortUnreachable(len) => {
            assert!(len <= tx.len());
            // A reply goes from the node to the sender: the node answers nothing of it.
            let mut again = [0u8; 624];
            assert!(!matches!(
                node.receive(&tx[..len], &mut again, true),
                Received::Datagram { .. } | Received::EchoReply(_) | Received::PortUnreachable(_)
            ));
        }
        Received::Datagram { payload, .. } => assert!(payload.len() + 48 <= packet.len()),
        _ => {}
    }
});
