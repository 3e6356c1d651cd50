//! Radio islands joined by a wire: one or more IEEE 802.15.4 networks (each its own channel
//! and [`Ieee802154Medium`]) whose gateways, and any number of wired-only hosts, share an
//! Ethernet-like backbone.
//!
//! This is the group-communication testbed's shape: the client and the Entity Manager's
//! gateways sit on a LAN, the members on 802.15.4 behind the gateways. A datagram between two
//! nodes of one island crosses that island's radio (multi-hop, CSMA/CA, collisions); a
//! datagram between two wired nodes crosses the wire, which adds its serialisation and
//! latency and loses nothing (a switched LAN is never the bottleneck at these rates). A
//! multicast datagram from a gateway goes out on every island the gateway belongs to.
//! Datagrams between a wired node and another island's radio node are not routed (the
//! scenarios never send one; it counts as lost).

use std::collections::{BinaryHeap, VecDeque};

use covey_proto::{Duration, Instant};

use super::ieee802154::Ieee802154Medium;
use super::{Delivery, Destination, LossCause, Medium, MediumStats, NodeId, Packet};

/// Where a node of the whole network sits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Attachment {
    /// Its island and its index there.
    island: Option<(usize, NodeId)>,
    /// Whether it has a wired interface.
    wired: bool,
}

/// One radio network and the global ids of its nodes.
#[derive(Debug)]
struct Island {
    medium: Ieee802154Medium,
    global: Vec<NodeId>,
}

/// The backbone's timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WireConfig {
    /// Bit rate, bits/s.
    pub rate_bps: f64,
    /// One-way latency (propagation, switching, the hosts' stacks).
    pub latency: Duration,
}

impl Default for WireConfig {
    /// 100 Mbit/s Ethernet with 0.2 ms through a switch and two hosts' stacks.
    fn default() -> Self {
        WireConfig {
            rate_bps: 100e6,
            latency: Duration::from_micros(200),
        }
    }
}

/// A packet on the wire, ordered by arrival (earliest first), then by sending order.
#[derive(Debug, PartialEq, Eq)]
struct OnWire {
    at: Instant,
    order: u64,
    id: u64,
    to: NodeId,
}

impl Ord for OnWire {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at, other.order).cmp(&(self.at, self.order))
    }
}

impl PartialOrd for OnWire {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// 802.15.4 islands and a wired backbone behind one [`Medium`].
#[derive(Debug)]
pub struct RadioIslands {
    islands: Vec<Island>,
    nodes: Vec<Attachment>,
    wire: WireConfig,
    on_wire: BinaryHeap<OnWire>,
    wire_free_at: Instant,
    sent_on_wire: u64,
    deliveries: VecDeque<Delivery>,
    released: VecDeque<u64>,
    stats: MediumStats,
    wire_stats: MediumStats,
}

impl RadioIslands {
    /// A network of `nodes` nodes with no island and no wire yet.
    pub fn new(nodes: usize, wire: WireConfig) -> RadioIslands {
        RadioIslands {
            islands: Vec::new(),
            nodes: vec![Attachment::default(); nodes],
            wire,
            on_wire: BinaryHeap::new(),
            wire_free_at: Instant::ZERO,
            sent_on_wire: 0,
            deliveries: VecDeque::new(),
            released: VecDeque::new(),
            stats: MediumStats::default(),
            wire_stats: MediumStats::default(),
        }
    }

    /// Adds an island: `medium`'s node i is global node `members[i]`. Returns its index.
    /// Members beyond the network's size are ignored.
    pub fn add_island(&mut self, medium: Ieee802154Medium, members: Vec<NodeId>) -> usize {
        let index = self.islands.len();
        for (local, &global) in members.iter().enumerate() {
            if let Some(a) = self.nodes.get_mut(global) {
                a.island = Some((index, local));
            }
        }
        self.islands.push(Island {
            medium,
            global: members,
        });
        index
    }

    /// Gives `node` a wired interface.
    pub fn wire_node(&mut self, node: NodeId) {
        if let Some(a) = self.nodes.get_mut(node) {
            a.wired = true;
        }
    }

    /// The radio medium of island `index`.
    pub fn island(&self, index: usize) -> Option<&Ieee802154Medium> {
        self.islands.get(index).map(|i| &i.medium)
    }

    /// The radio medium of island `index`, to add channel models to.
    pub fn island_mut(&mut self, index: usize) -> Option<&mut Ieee802154Medium> {
        self.islands.get_mut(index).map(|i| &mut i.medium)
    }

    /// Datagrams carried by the wire.
    pub fn wire_packets(&self) -> u64 {
        self.sent_on_wire
    }

    fn lose(&mut self, id: u64) {
        self.wire_stats.lose(LossCause::RetriesExhausted);
        self.released.push_back(id);
    }

    fn send_on_wire(&mut self, now: Instant, packet: Packet, to: NodeId) {
        // Ethernet, IPv6 and UDP headers: 14 + 4 (FCS) + 40 + 8 bytes.
        let bits = 8.0 * (packet.payload_bytes + 66) as f64;
        let serialisation = Duration::from_nanos((1e9 * bits / self.wire.rate_bps) as u64);
        let start = self.wire_free_at.max(now);
        self.wire_free_at = start + serialisation;
        self.sent_on_wire += 1;
        self.wire_stats.packets_sent += 1;
        self.wire_stats.frames_on_wire += 1;
        self.wire_stats.bytes_on_wire += (packet.payload_bytes + 66) as u64;
        self.on_wire.push(OnWire {
            at: self.wire_free_at + self.wire.latency,
            order: self.sent_on_wire,
            id: packet.id,
            to,
        });
    }

    fn drain_islands(&mut self) {
        for island in &mut self.islands {
            while let Some(d) = island.medium.poll_delivery() {
                if let Some(&to) = island.global.get(d.to) {
                    self.deliveries.push_back(Delivery { to, ..d });
                }
            }
            while let Some(id) = island.medium.poll_released() {
                self.released.push_back(id);
            }
        }
        self.refresh_stats();
    }

    fn refresh_stats(&mut self) {
        let mut total = self.wire_stats.clone();
        for island in &self.islands {
            let s = island.medium.stats();
            total.packets_sent += s.packets_sent;
            total.packets_delivered += s.packets_delivered;
            total.bytes_on_wire += s.bytes_on_wire;
            total.frames_on_wire += s.frames_on_wire;
            for &(cause, n) in &s.losses {
                match total.losses.iter_mut().find(|(c, _)| *c == cause) {
                    Some((_, count)) => *count += n,
                    None => total.losses.push((cause, n)),
                }
            }
        }
        self.stats = total;
    }
}

impl Medium for RadioIslands {
    fn send(&mut self, now: Instant, packet: Packet) {
        let Some(&from) = self.nodes.get(packet.from) else {
            self.lose(packet.id);
            return;
        };
        match packet.to {
            Destination::Broadcast => {
                let Some((island, local)) = from.island else {
                    self.lose(packet.id);
                    return;
                };
                if let Some(i) = self.islands.get_mut(island) {
                    i.medium.send(
                        now,
                        Packet {
                            from: local,
                            ..packet
                        },
                    );
                }
            }
            Destination::Node(to) => {
                let target = self.nodes.get(to).copied().unwrap_or_default();
                match (from.island, target.island) {
                    (Some((a, la)), Some((b, lb))) if a == b => {
                        if let Some(i) = self.islands.get_mut(a) {
                            i.medium.send(
                                now,
                                Packet {
                                    from: la,
                                    to: Destination::Node(lb),
                                    ..packet
                                },
                            );
                        }
                    }
                    _ if from.wired && target.wired => self.send_on_wire(now, packet, to),
                    _ => self.lose(packet.id),
                }
            }
        }
        self.drain_islands();
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let wire = self.on_wire.peek().map(|p| p.at);
        self.islands
            .iter()
            .filter_map(|i| i.medium.poll_timeout())
            .chain(wire)
            .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        for island in &mut self.islands {
            if island.medium.poll_timeout().is_some_and(|t| t <= now) {
                island.medium.handle_timeout(now);
            }
        }
        while self.on_wire.peek().is_some_and(|p| p.at <= now) {
            if let Some(p) = self.on_wire.pop() {
                self.wire_stats.packets_delivered += 1;
                self.deliveries.push_back(Delivery {
                    id: p.id,
                    to: p.to,
                    at: p.at,
                });
                self.released.push_back(p.id);
            }
        }
        self.drain_islands();
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }

    fn stats(&self) -> &MediumStats {
        &self.stats
    }

    fn poll_released(&mut self) -> Option<u64> {
        self.released.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::ieee802154::{Ieee802154Config, Topology};

    /// Node 0 wired only; island 0 = gateway 1 and member 2; island 1 = gateway 3 and
    /// member 4; gateways wired.
    fn network() -> RadioIslands {
        let mut n = RadioIslands::new(5, WireConfig::default());
        for (members, seed) in [(vec![1, 2], 1), (vec![3, 4], 2)] {
            let config = Ieee802154Config {
                seed,
                ..Ieee802154Config::default()
            };
            n.add_island(
                Ieee802154Medium::new(config, Topology::full_mesh(2)),
                members,
            );
        }
        for wired in [0, 1, 3] {
            n.wire_node(wired);
        }
        n
    }

    fn send(n: &mut RadioIslands, id: u64, from: NodeId, to: Destination) -> Vec<Delivery> {
        let packet = Packet {
            id,
            from,
            to,
            payload_bytes: 40,
        };
        n.send(Instant::ZERO, packet);
        let mut out = Vec::new();
        for _ in 0..1000 {
            while let Some(d) = n.poll_delivery() {
                out.push(d);
            }
            match n.poll_timeout() {
                Some(at) => n.handle_timeout(at),
                None => break,
            }
        }
        out
    }

    #[test]
    fn wired_hosts_reach_gateways_over_the_wire_and_members_over_their_radio() {
        let mut n = network();
        let wired = send(&mut n, 1, 0, Destination::Node(3));
        assert_eq!(wired.len(), 1);
        assert_eq!(wired[0].to, 3);
        // 106 bytes at 100 Mbit/s plus 0.2 ms.
        assert_eq!(wired[0].at.as_nanos(), 8_480 + 200_000);
        assert_eq!(n.wire_packets(), 1);

        let radio = send(&mut n, 2, 1, Destination::Node(2));
        assert_eq!(radio.iter().map(|d| d.to).collect::<Vec<_>>(), [2]);
        // A 40-byte datagram takes milliseconds on 802.15.4, not microseconds.
        assert!(radio[0].at.as_nanos() > 1_000_000);
        assert_eq!(n.wire_packets(), 1);
        assert_eq!(n.island(0).map(|i| i.stats().packets_delivered), Some(1));
    }

    #[test]
    fn broadcasts_stay_on_the_senders_island_and_other_islands_are_not_routed() {
        let mut n = network();
        let flood = send(&mut n, 1, 3, Destination::Broadcast);
        assert_eq!(flood.iter().map(|d| d.to).collect::<Vec<_>>(), [4]);
        assert!(send(&mut n, 2, 0, Destination::Node(4)).is_empty());
        assert!(send(&mut n, 3, 2, Destination::Node(4)).is_empty());
        assert_eq!(n.stats().losses_of(LossCause::RetriesExhausted), 2);
        let mut released = Vec::new();
        while let Some(id) = n.poll_released() {
            released.push(id);
        }
        released.sort_unstable();
        assert_eq!(released, [1, 2, 3]);
    }
}
