//! Packets and bytes per flow (IPv4 5-tuple) and direction, counted where the emulator sees
//! them: offered to the link, written to the receiver, or lost on the way. This is what a
//! capture on the link would tell (the seed papers used Wireshark).

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};

use serde::Serialize;

/// IP protocol numbers whose first four payload bytes are ports.
const PORTED: [u8; 3] = [6, 17, 132]; // TCP, UDP, SCTP

/// An IPv4 5-tuple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Flow {
    /// IP protocol number (6 TCP, 17 UDP, 1 ICMP, …).
    pub protocol: u8,
    /// Source address and port (port 0 for protocols without ports).
    pub source: SocketAddrV4,
    /// Destination address and port (port 0 for protocols without ports).
    pub destination: SocketAddrV4,
}

impl Flow {
    /// The flow of an IPv4 packet, or `None` when the bytes are no IPv4 packet.
    pub fn parse(packet: &[u8]) -> Option<Flow> {
        let first = *packet.first()?;
        if first >> 4 != 4 || packet.len() < 20 {
            return None;
        }
        let header = usize::from(first & 0x0f) * 4;
        let protocol = packet[9];
        let src = Ipv4Addr::new(packet[12], packet[13], packet[14], packet[15]);
        let dst = Ipv4Addr::new(packet[16], packet[17], packet[18], packet[19]);
        // Later fragments carry no transport header.
        let fragment_offset = u16::from_be_bytes([packet[6], packet[7]]) & 0x1fff;
        let ports = if PORTED.contains(&protocol) && fragment_offset == 0 {
            packet.get(header..header + 4).map(|p| {
                (
                    u16::from_be_bytes([p[0], p[1]]),
                    u16::from_be_bytes([p[2], p[3]]),
                )
            })
        } else {
            None
        };
        let (sport, dport) = ports.unwrap_or((0, 0));
        Some(Flow {
            protocol,
            source: SocketAddrV4::new(src, sport),
            destination: SocketAddrV4::new(dst, dport),
        })
    }
}

/// What happened to one flow's packets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FlowCounters {
    /// Packets the sender put on the link.
    pub packets_sent: u64,
    /// Their bytes (whole IP packets).
    pub bytes_sent: u64,
    /// Packets written to the receiver.
    pub packets_delivered: u64,
    /// Their bytes.
    pub bytes_delivered: u64,
    /// Packets the link lost (queue overflow or the loss model).
    pub packets_lost: u64,
}

/// One flow in one direction and its counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowRecord {
    /// The sending node.
    pub from: String,
    /// The receiving node.
    pub to: String,
    /// The 5-tuple.
    pub flow: Flow,
    /// The counts.
    pub counters: FlowCounters,
}

/// The flow table, bounded to `max_flows` entries; flows beyond it share one overflow entry.
#[derive(Debug)]
pub struct FlowTable {
    index: HashMap<(Flow, usize, usize), usize>,
    entries: Vec<((Flow, usize, usize), FlowCounters)>,
    max_flows: usize,
}

/// The index of the shared entry for flows past the bound.
pub const OVERFLOW: usize = 0;

impl FlowTable {
    /// An empty table that keeps at most `max_flows` flows apart.
    pub fn new(max_flows: usize) -> FlowTable {
        let unspecified = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0);
        let overflow = Flow {
            protocol: 0,
            source: unspecified,
            destination: unspecified,
        };
        FlowTable {
            index: HashMap::new(),
            entries: vec![((overflow, usize::MAX, usize::MAX), FlowCounters::default())],
            max_flows,
        }
    }

    /// The index of `flow` from node `from` to node `to`, adding it if there is room.
    pub fn lookup(&mut self, flow: Flow, from: usize, to: usize) -> usize {
        let key = (flow, from, to);
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        if self.entries.len() > self.max_flows {
            return OVERFLOW;
        }
        let i = self.entries.len();
        self.entries.push((key, FlowCounters::default()));
        self.index.insert(key, i);
        i
    }

    /// The counters at `index`.
    pub fn counters_mut(&mut self, index: usize) -> &mut FlowCounters {
        &mut self.entries[index].1
    }

    /// Every flow with its node names (the overflow entry as from/to `*` when used).
    pub fn records(&self, names: &[String]) -> Vec<FlowRecord> {
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| "*".to_owned());
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, (_, c))| *i != OVERFLOW || c.packets_sent > 0)
            .map(|(_, ((flow, from, to), counters))| FlowRecord {
                from: name(*from),
                to: name(*to),
                flow: *flow,
                counters: *counters,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 28];
        p[0] = 0x45;
        p[9] = 17;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    #[test]
    fn parses_the_five_tuple_of_ipv4_udp() {
        let f = Flow::parse(&udp([10, 0, 0, 1], 40000, [10, 0, 0, 2], 5683)).expect("IPv4");
        assert_eq!(f.protocol, 17);
        assert_eq!(f.source, "10.0.0.1:40000".parse().expect("addr"));
        assert_eq!(f.destination, "10.0.0.2:5683".parse().expect("addr"));
    }

    #[test]
    fn rejects_what_is_not_ipv4_and_keeps_later_fragments_portless() {
        assert_eq!(Flow::parse(&[0x60; 40]), None, "IPv6");
        assert_eq!(Flow::parse(&[0x45; 10]), None, "truncated");
        let mut frag = udp([10, 0, 0, 1], 1, [10, 0, 0, 2], 2);
        frag[7] = 10; // offset 80 bytes
        let f = Flow::parse(&frag).expect("IPv4");
        assert_eq!((f.source.port(), f.destination.port()), (0, 0));
    }

    #[test]
    fn the_table_is_bounded_and_overflow_is_shared() {
        let mut t = FlowTable::new(2);
        let flow = |port| Flow::parse(&udp([10, 0, 0, 1], port, [10, 0, 0, 2], 9)).expect("v4");
        let a = t.lookup(flow(1), 0, 1);
        let b = t.lookup(flow(2), 0, 1);
        assert_ne!(a, b);
        assert_eq!(t.lookup(flow(1), 0, 1), a, "same flow, same entry");
        assert_eq!(t.lookup(flow(3), 0, 1), OVERFLOW);
        assert_eq!(t.lookup(flow(4), 0, 1), OVERFLOW);
        t.counters_mut(OVERFLOW).packets_sent += 2;
        let names = vec!["a".to_owned(), "b".to_owned()];
        let records = t.records(&names);
        assert_eq!(records.len(), 3);
        assert!(records
            .iter()
            .any(|r| r.from == "*" && r.counters.packets_sent == 2));
    }
}
