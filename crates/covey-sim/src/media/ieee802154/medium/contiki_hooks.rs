//! The medium's hooks for Contiki's layers ([`crate::media::contiki`]): csma.c's neighbour
//! queues and timers in front of each node's radio, nullrdc's send checks, the border router's
//! SLIP line (node 0 is the border router), its radio's receive FIFO and SMRF's delayed
//! multicast forwarding.

use std::collections::VecDeque;

use covey_proto::{Duration, Instant};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::super::contiki::csma::{CsmaDecision, NeighbourKey, TxStatus};
use super::super::super::contiki::{smrf, ContikiConfig, ContikiCsma, NodeClock, RxFifo, SlipLine};
use super::super::super::{Destination, LossCause, NodeId};
use super::super::confirm::{Confirm, ConfirmStatus};
use super::super::frame::MacFrame;
use super::super::node::MacState;
use super::super::schedule::MacEvent;
use super::Ieee802154Medium;

/// The border router: the topology's root, the gateway's radio.
const BORDER_ROUTER: NodeId = 0;

/// A datagram in a csma.c queue: this hop's frames.
#[derive(Debug)]
pub(super) struct Queued {
    template: MacFrame,
    frames: Vec<MacFrame>,
}

/// One node's Contiki state.
#[derive(Debug)]
struct ContikiNode {
    csma: ContikiCsma<Queued>,
    /// SMRF's `mcast_buf` and the token of its armed timer.
    smrf: Option<(u64, MacFrame)>,
}

/// Contiki's layers over the medium's nodes.
#[derive(Debug)]
pub(super) struct ContikiState {
    config: ContikiConfig,
    nodes: Vec<ContikiNode>,
    rng: Xoshiro256PlusPlus,
    slip: Option<SlipLine>,
    /// Packets on the SLIP line towards the border router, in order.
    slip_line: VecDeque<MacFrame>,
    /// Packets in `slip.c`'s buffer.
    slip_buffer: VecDeque<MacFrame>,
    /// The border router's radio FIFO: frames (and the hop they came from) waiting for its CPU.
    rx_fifo: Option<RxFifo<(NodeId, MacFrame)>>,
    /// Each node's tick phase; `None` when the config puts every tick at time 0.
    clocks: Option<Vec<NodeClock>>,
    next_token: u64,
}

impl ContikiState {
    pub(super) fn new(config: ContikiConfig, nodes: usize, seed: u64) -> Self {
        let nodes: Vec<ContikiNode> = (0..nodes)
            .map(|n| {
                let packets = if n == BORDER_ROUTER {
                    config.border_router_queued_packets
                } else {
                    config.member_queued_packets
                };
                ContikiNode {
                    csma: ContikiCsma::new(&config, packets),
                    smrf: None,
                }
            })
            .collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xC0_7141);
        let clocks = config.clock_phases.then(|| {
            (0..nodes.len())
                .map(|_| NodeClock::random(config.tick(), &mut rng))
                .collect()
        });
        ContikiState {
            config,
            nodes,
            rng,
            clocks,
            slip: config.slip.map(SlipLine::new),
            slip_line: VecDeque::new(),
            slip_buffer: VecDeque::new(),
            // Only a border router behind a serial line has a CPU busy long enough to matter.
            rx_fifo: config
                .slip
                .and(config.border_router_rx_fifo)
                .map(RxFifo::new),
            next_token: 0,
        }
    }

    /// Packets `slip.c` dropped because two were buffered.
    pub(super) fn slip_overflows(&self) -> u64 {
        self.slip.as_ref().map_or(0, |s| s.overflows)
    }

    /// When a timer of `after` (whole ticks) that `node` sets at `now` expires.
    fn timer_expiry(&self, node: NodeId, now: Instant, after: Duration) -> Instant {
        match self.clocks.as_ref().and_then(|c| c.get(node)) {
            Some(clock) => clock.expiry_after(now, after),
            None => now + after,
        }
    }

    /// Frames the border router's radio FIFO refused, and ACKed frames its flushes discarded.
    pub(super) fn rx_fifo_losses(&self) -> (u64, u64) {
        self.rx_fifo
            .as_ref()
            .map_or((0, 0), |f| (f.refused, f.flushed))
    }
}

/// Whether a frame the border router's radio received is read now or waits in its FIFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RxAdmission {
    /// The CPU is free and nothing is ahead of it: read at once.
    Now,
    /// Stored and ACKed; the CPU reads it when free.
    Stored,
}

impl Ieee802154Medium {
    /// Packets the border router's SLIP input dropped (0 without Contiki's layers).
    pub fn slip_overflows(&self) -> u64 {
        self.contiki
            .as_ref()
            .map_or(0, ContikiState::slip_overflows)
    }

    /// Frames the border router's radio FIFO refused (never ACKed) and ACKed frames that its
    /// flushes discarded ((0, 0) without the FIFO).
    pub fn rx_fifo_losses(&self) -> (u64, u64) {
        self.contiki
            .as_ref()
            .map_or((0, 0), ContikiState::rx_fifo_losses)
    }

    /// When a Contiki timer of `after` that `node` sets at `now` expires, on its own clock.
    fn contiki_timer_at(&self, node: NodeId, now: Instant, after: Duration) -> Instant {
        self.contiki
            .as_ref()
            .map_or(now + after, |s| s.timer_expiry(node, now, after))
    }

    /// Whether the border router's CPU is away from the scheduler: in nullrdc's send or
    /// writing up the serial line.
    fn border_router_busy(&self, now: Instant) -> bool {
        let radio = self
            .nodes
            .get(BORDER_ROUTER)
            .is_some_and(|m| matches!(m.state, MacState::Transmitting | MacState::AwaitingAck));
        let writing = self
            .contiki
            .as_ref()
            .and_then(|s| s.slip.as_ref())
            .is_some_and(|s| s.writing_until() > now);
        radio || writing
    }

    /// A data frame's FCS checked out at `to`: at the border router it goes through the radio
    /// FIFO. Err when the FIFO refuses it (no ACK).
    pub(super) fn rx_fifo_admit(
        &mut self,
        now: Instant,
        to: NodeId,
        from: NodeId,
        frame: MacFrame,
    ) -> Result<RxAdmission, LossCause> {
        if to != BORDER_ROUTER {
            return Ok(RxAdmission::Now);
        }
        let busy = self.border_router_busy(now);
        let Some(fifo) = self.contiki.as_mut().and_then(|s| s.rx_fifo.as_mut()) else {
            return Ok(RxAdmission::Now);
        };
        if !busy && fifo.is_empty() {
            return Ok(RxAdmission::Now);
        }
        if fifo.offer(frame.mpdu_bytes, (from, frame)).is_err() {
            if let Some(mac) = self.nodes.get_mut(BORDER_ROUTER) {
                mac.stats.queue_drops += 1;
            }
            return Err(LossCause::QueueFull);
        }
        *self.in_flight.entry(frame.packet).or_insert(0) += 1;
        // Read it when the CPU is back: now, or when the write up the line ends.
        self.events.schedule(now, MacEvent::SlipDrain);
        Ok(RxAdmission::Stored)
    }

    /// csma.c `send_packet()`: queue the datagram for its next hop or drop it.
    pub(super) fn contiki_enqueue(
        &mut self,
        now: Instant,
        node: NodeId,
        template: MacFrame,
        frames: Vec<MacFrame>,
    ) {
        let Some(state) = self.contiki.as_mut() else {
            return;
        };
        let Some(cn) = state.nodes.get_mut(node) else {
            return;
        };
        let buffers = frames.len();
        match cn
            .csma
            .send_packet(template.hop_to, Queued { template, frames }, buffers)
        {
            Ok(timer) => {
                *self.in_flight.entry(template.packet).or_insert(0) += 1;
                if let Some(t) = timer {
                    self.events.schedule(
                        self.contiki_timer_at(node, now, t.after),
                        MacEvent::ContikiTimer {
                            node,
                            token: t.token,
                        },
                    );
                }
            }
            Err(_) => {
                if let Some(mac) = self.nodes.get_mut(node) {
                    mac.stats.queue_drops += 1;
                }
                self.refuse(now, node, template, LossCause::QueueFull);
            }
        }
    }

    /// csma.c `transmit_packet_list()` → nullrdc `send_list()`: the head packet goes to the
    /// radio unless a frame is arriving (`receiving_packet()`: `MAC_TX_COLLISION`).
    pub(super) fn contiki_timer(&mut self, now: Instant, node: NodeId, token: u64) {
        let Some(state) = self.contiki.as_mut() else {
            return;
        };
        let Some(cn) = state.nodes.get_mut(node) else {
            return;
        };
        let Some((addr, queued)) = cn.csma.timer_fired(token) else {
            return;
        };
        let frames = queued.frames.clone();
        if self.air.receiving(&self.topology, node, now) {
            self.contiki_sent(now, node, addr, TxStatus::Collision);
            return;
        }
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        mac.queue.push_datagram(frames);
        if mac.state == MacState::Idle {
            self.start_attempt(now, node);
        }
    }

    /// The radio is done with its head frame: ACKed or sent (`failure` None), or not.
    pub(super) fn contiki_frame_done(
        &mut self,
        now: Instant,
        node: NodeId,
        spacing: Option<Duration>,
        failure: Option<LossCause>,
    ) {
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        mac.retries = 0;
        mac.last_failure = None;
        mac.attempt += 1;
        let Some(frame) = mac.queue.pop() else {
            self.start_attempt(now, node);
            return;
        };
        let status = match failure {
            None => {
                Some(TxStatus::Ok).filter(|_| !mac.queue.holds_datagram(frame.packet, frame.hop_to))
            }
            Some(LossCause::ChannelAccessFailure) => Some(TxStatus::Collision),
            Some(_) => Some(TxStatus::NoAck),
        };
        if failure.is_some() {
            mac.queue.drop_datagram(frame.packet, frame.hop_to);
        }
        mac.datagram_transmissions = 0;
        // nullrdc has returned: the CPU is free for csma.c's callback and slip_process.
        mac.state = MacState::Spacing;
        if let Some(status) = status {
            self.contiki_sent(now, node, frame.hop_to, status);
        }
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        match spacing {
            Some(ifs) if !mac.queue.is_empty() => {
                mac.state = MacState::Spacing;
                self.events.schedule(now + ifs, MacEvent::IfsEnd(node));
            }
            _ => self.start_attempt(now, node),
        }
    }

    /// csma.c `packet_sent()` with nullrdc's status for `addr`'s head packet.
    fn contiki_sent(&mut self, now: Instant, node: NodeId, addr: NeighbourKey, status: TxStatus) {
        let Some(state) = self.contiki.as_mut() else {
            return;
        };
        let rng = &mut state.rng;
        let Some(cn) = state.nodes.get_mut(node) else {
            return;
        };
        let Some(decision) = cn.csma.packet_sent(addr, status, rng) else {
            return;
        };
        match decision {
            CsmaDecision::Retry(t) => {
                if status == TxStatus::NoAck {
                    if let Some(mac) = self.nodes.get_mut(node) {
                        mac.stats.retries += 1;
                    }
                }
                self.events.schedule(
                    self.contiki_timer_at(node, now, t.after),
                    MacEvent::ContikiTimer {
                        node,
                        token: t.token,
                    },
                );
            }
            CsmaDecision::Done {
                packet,
                dropped,
                transmissions,
                next,
            } => {
                if let Some(t) = next {
                    self.events.schedule(
                        self.contiki_timer_at(node, now, t.after),
                        MacEvent::ContikiTimer {
                            node,
                            token: t.token,
                        },
                    );
                }
                let frame = packet.template;
                let arrived = frame.hop_to.is_some_and(|to| {
                    self.reassembly
                        .get(&(to, frame.packet))
                        .is_some_and(|r| r.complete)
                });
                let status = if dropped && !arrived {
                    if let Some(mac) = self.nodes.get_mut(node) {
                        mac.stats.retries_exhausted += 1;
                    }
                    self.drop_datagram(now, node, frame.packet, LossCause::RetriesExhausted);
                    ConfirmStatus::Lost(LossCause::RetriesExhausted)
                } else {
                    ConfirmStatus::Delivered
                };
                if frame.origin == node {
                    self.confirm(Confirm {
                        packet: frame.packet,
                        node,
                        at: now,
                        status,
                        transmissions: u32::from(transmissions),
                        acked: !dropped && frame.hop_to.is_some(),
                    });
                }
                self.datagram_left(frame.packet);
            }
        }
        if node == BORDER_ROUTER {
            self.slip_try_drain(now);
        }
    }

    /// SMRF `in()` drops a multicast datagram that did not come from the node's preferred
    /// parent ("Routable in but SMRF ignored it"): it is neither delivered nor forwarded, so
    /// an earlier copy from a sibling does not stand in for the parent's.
    pub(super) fn smrf_ignores(
        &mut self,
        node: NodeId,
        hop_from: NodeId,
        frame: &MacFrame,
    ) -> bool {
        if self.contiki.is_none() || frame.destination != Destination::Broadcast {
            return false;
        }
        let ignored = self.topology.parent(node) != Some(hop_from);
        if ignored {
            if let Some(mac) = self.nodes.get_mut(node) {
                mac.stats.duplicates += 1;
            }
        }
        ignored
    }

    /// SMRF `in()`: copy the datagram to `mcast_buf` and arm the forwarding timer; an earlier
    /// copy still waiting is overwritten.
    pub(super) fn smrf_schedule(&mut self, now: Instant, node: NodeId, frame: MacFrame) {
        let Some(state) = self.contiki.as_mut() else {
            return;
        };
        let delay = smrf::forward_delay(&state.config, &mut state.rng);
        state.next_token += 1;
        let token = state.next_token;
        let Some(cn) = state.nodes.get_mut(node) else {
            return;
        };
        let overwritten = cn.smrf.replace((token, frame));
        *self.in_flight.entry(frame.packet).or_insert(0) += 1;
        if let Some((_, old)) = overwritten {
            self.drop_datagram(now, node, old.packet, LossCause::QueueFull);
            self.datagram_left(old.packet);
        }
        let at = self.contiki_timer_at(node, now, delay);
        self.events
            .schedule(at, MacEvent::SmrfForward { node, token });
    }

    /// SMRF `mcast_fwd()`: the buffered datagram goes down the stack.
    pub(super) fn smrf_forward(&mut self, now: Instant, node: NodeId, token: u64) {
        let Some(state) = self.contiki.as_mut() else {
            return;
        };
        let Some(cn) = state.nodes.get_mut(node) else {
            return;
        };
        if cn.smrf.is_none_or(|(t, _)| t != token) {
            return;
        }
        let Some((_, frame)) = cn.smrf.take() else {
            return;
        };
        self.enqueue(now, node, frame);
        self.datagram_left(frame.packet);
    }

    /// A datagram the gateway host writes to the border router goes over SLIP; false when
    /// there is no SLIP line or the datagram is not the border router's.
    pub(super) fn slip_down(&mut self, now: Instant, template: MacFrame) -> bool {
        let Some(state) = self.contiki.as_mut() else {
            return false;
        };
        if template.origin != BORDER_ROUTER {
            return false;
        }
        let Some(slip) = state.slip.as_mut() else {
            return false;
        };
        let at = slip.host_to_router(now, template.payload_bytes);
        state.slip_line.push_back(template);
        *self.in_flight.entry(template.packet).or_insert(0) += 1;
        self.events.schedule(at, MacEvent::SlipArrived);
        true
    }

    /// The last byte of the next packet on the line reached the border router.
    pub(super) fn slip_arrived(&mut self, now: Instant) {
        let Some(state) = self.contiki.as_mut() else {
            return;
        };
        let (Some(slip), Some(template)) = (state.slip.as_mut(), state.slip_line.pop_front())
        else {
            return;
        };
        if slip.arrived() {
            state.slip_buffer.push_back(template);
            self.slip_try_drain(now);
        } else {
            if let Some(mac) = self.nodes.get_mut(BORDER_ROUTER) {
                mac.stats.queue_drops += 1;
            }
            self.refuse(now, BORDER_ROUTER, template, LossCause::QueueFull);
            self.datagram_left(template.packet);
        }
    }

    /// The border router's CPU is back in Contiki's scheduler: `cc2520_process` reads one
    /// frame from the radio FIFO at a time (each may send the CPU up the serial line again),
    /// then `slip_process` moves every buffered packet to uIP and on to csma.c.
    pub(super) fn slip_try_drain(&mut self, now: Instant) {
        loop {
            if self.border_router_busy(now) {
                let waiting = self.contiki.as_ref().is_some_and(|s| {
                    !s.slip_buffer.is_empty() || s.rx_fifo.as_ref().is_some_and(|f| !f.is_empty())
                });
                let writing = self
                    .contiki
                    .as_ref()
                    .and_then(|s| s.slip.as_ref())
                    .map(SlipLine::writing_until)
                    .filter(|&w| w > now && waiting);
                // nullrdc's send ends in contiki_sent, which calls back.
                if let Some(at) = writing {
                    self.events.schedule(at, MacEvent::SlipDrain);
                }
                return;
            }
            let Some(read) = self
                .contiki
                .as_mut()
                .and_then(|s| s.rx_fifo.as_mut())
                .and_then(RxFifo::read)
            else {
                break;
            };
            let (from, frame) = read.frame;
            self.receive(now, BORDER_ROUTER, from, frame);
            self.datagram_left(frame.packet);
            for (_, lost) in read.flushed {
                if let Some(mac) = self.nodes.get_mut(BORDER_ROUTER) {
                    mac.stats.queue_drops += 1;
                }
                self.drop_datagram(now, BORDER_ROUTER, lost.packet, LossCause::QueueFull);
                self.datagram_left(lost.packet);
            }
        }
        let Some(state) = self.contiki.as_mut() else {
            return;
        };
        let Some(slip) = state.slip.as_mut() else {
            return;
        };
        if state.slip_buffer.is_empty() {
            return;
        }
        slip.drain();
        let packets: Vec<MacFrame> = state.slip_buffer.drain(..).collect();
        for template in packets {
            self.enqueue(now, BORDER_ROUTER, template);
            self.datagram_left(template.packet);
        }
    }

    /// A datagram for the gateway reached the border router: it goes up the SLIP line before
    /// the host has it. False when there is no SLIP line.
    pub(super) fn contiki_deliver_up(
        &mut self,
        now: Instant,
        node: NodeId,
        frame: &MacFrame,
    ) -> bool {
        let Some(state) = self.contiki.as_mut() else {
            return false;
        };
        if node != BORDER_ROUTER || frame.destination != Destination::Node(BORDER_ROUTER) {
            return false;
        }
        let Some(slip) = state.slip.as_mut() else {
            return false;
        };
        let at = slip.router_to_host(now, frame.payload_bytes);
        *self.in_flight.entry(frame.packet).or_insert(0) += 1;
        self.events.schedule(
            at,
            MacEvent::SlipUp {
                packet: frame.packet,
                to: node,
            },
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Ieee802154Config, MacLayer};
    use super::*;
    use crate::media::contiki::CC2520_RX_FIFO_BYTES;
    use crate::media::ieee802154::Topology;
    use crate::media::{Medium, Packet};

    fn medium(slip: bool) -> Ieee802154Medium {
        let contiki = ContikiConfig {
            slip: if slip {
                ContikiConfig::default().slip
            } else {
                None
            },
            ..ContikiConfig::default()
        };
        let config = Ieee802154Config {
            mac_layer: MacLayer::Contiki(contiki),
            ..Ieee802154Config::default()
        };
        let topology = Topology::full_mesh(4)
            .with_shortest_path_tree(0)
            .expect("tree");
        Ieee802154Medium::new(config, topology)
    }

    fn medium_on(topology: Topology, contiki: ContikiConfig, seed: u64) -> Ieee802154Medium {
        let config = Ieee802154Config {
            mac_layer: MacLayer::Contiki(contiki),
            seed,
            ..Ieee802154Config::default()
        };
        Ieee802154Medium::new(config, topology)
    }

    fn send(
        m: &mut Ieee802154Medium,
        at_ms: u64,
        id: u64,
        from: NodeId,
        to: Destination,
        bytes: usize,
    ) {
        m.send(
            Instant::from_millis(at_ms),
            Packet {
                id,
                from,
                to,
                payload_bytes: bytes,
            },
        );
    }

    fn run_ids(m: &mut Ieee802154Medium) -> Vec<(u64, NodeId, Instant)> {
        let mut out = Vec::new();
        while let Some(at) = m.poll_timeout() {
            m.handle_timeout(at);
            while let Some(d) = m.poll_delivery() {
                out.push((d.id, d.to, d.at));
            }
        }
        out
    }

    #[test]
    fn smrf_takes_a_multicast_only_from_the_preferred_parent() {
        // 0 → 1 → 2, and 2 also hears 3, a sibling of 1 that forwards too.
        let topology = Topology::from_links(4, &[(0, 1), (0, 3), (1, 2), (3, 2)])
            .and_then(|t| t.with_tree(vec![None, Some(0), Some(1), Some(0)]))
            .expect("tree");
        let mut m = medium_on(
            topology,
            ContikiConfig {
                slip: None,
                ..ContikiConfig::default()
            },
            1,
        );
        send(&mut m, 0, 7, 0, Destination::Broadcast, 20);
        let delivered = run_ids(&mut m);
        let at_two: Vec<_> = delivered.iter().filter(|d| d.1 == 2).collect();
        assert_eq!(at_two.len(), 1, "{delivered:?}");
        // 3 has no children and does not forward; 2 gets it from 1 whatever 3 does.
        assert!(m.node_stats(2).is_some());
    }

    #[test]
    fn a_sibling_copy_does_not_stand_in_for_the_parents() {
        // 2's parent is 1, but 3, a forwarder for its own child 4, also reaches 2, and
        // sometimes first. 2 must still forward its parent's copy to its child 5.
        let topology = Topology::from_links(6, &[(0, 1), (0, 3), (1, 2), (3, 2), (3, 4), (2, 5)])
            .and_then(|t| t.with_tree(vec![None, Some(0), Some(1), Some(0), Some(3), Some(2)]))
            .expect("tree");
        let seeds = 40;
        let mut reached_five = 0;
        for seed in 0..seeds {
            let contiki = ContikiConfig {
                slip: None,
                ..ContikiConfig::default()
            };
            let mut m = medium_on(topology.clone(), contiki, seed);
            send(&mut m, 0, 7, 0, Destination::Broadcast, 20);
            if run_ids(&mut m).iter().any(|d| d.1 == 5) {
                reached_five += 1;
            }
        }
        // Only a collision of 1's and 3's forwards at 2 (they cannot hear each other) may
        // cut 5 off.
        assert!(reached_five >= seeds * 3 / 4, "{reached_five} of {seeds}");
    }

    #[test]
    fn frames_arriving_while_the_border_router_writes_up_slip_overflow_its_radio_fifo() {
        // A long reply keeps the router's CPU on the serial line for 14 ms; four short ones
        // arrive meanwhile: three fit the 128-byte FIFO (ACKed), the fourth overflows it (not
        // ACKed, retried by csma.c), and the flush after the first read loses the two behind.
        let run_with = |fifo: Option<usize>| {
            let mut m = medium_on(
                Topology::full_mesh(6)
                    .with_shortest_path_tree(0)
                    .expect("tree"),
                ContikiConfig {
                    border_router_rx_fifo: fifo,
                    ..ContikiConfig::default()
                },
                1,
            );
            let mut sends = vec![(0, 1, 1, 120)];
            for (k, from) in (2..6).enumerate() {
                sends.push((9 + 3 * k as u64, 10 + k as u64, from, 16));
            }
            let mut delivered = Vec::new();
            for (at_ms, id, from, bytes) in sends {
                let at = Instant::from_millis(at_ms);
                while let Some(next) = m.poll_timeout().filter(|&t| t <= at) {
                    m.handle_timeout(next);
                }
                send(&mut m, at_ms, id, from, Destination::Node(0), bytes);
            }
            delivered.extend(run_ids(&mut m).iter().map(|d| d.0));
            (delivered, m.rx_fifo_losses())
        };
        let (with_fifo, losses) = run_with(Some(CC2520_RX_FIFO_BYTES));
        assert_eq!(losses, (1, 2), "{with_fifo:?}");
        assert_eq!(with_fifo.len(), 3, "{with_fifo:?}");
        let (without, losses) = run_with(None);
        assert_eq!(losses, (0, 0));
        assert_eq!(without.len(), 5, "{without:?}");
    }

    fn run(m: &mut Ieee802154Medium) -> Vec<(NodeId, Instant)> {
        let mut out = Vec::new();
        while let Some(at) = m.poll_timeout() {
            m.handle_timeout(at);
            while let Some(d) = m.poll_delivery() {
                out.push((d.to, d.at));
            }
        }
        out
    }

    #[test]
    fn a_burst_to_three_neighbours_loses_the_third_at_the_mac() {
        let mut m = medium(false);
        for (id, to) in [(1, 1), (2, 2), (3, 3)] {
            m.send(
                Instant::ZERO,
                Packet {
                    id,
                    from: 0,
                    to: Destination::Node(to),
                    payload_bytes: 20,
                },
            );
        }
        let delivered = run(&mut m);
        let to: Vec<NodeId> = delivered.iter().map(|d| d.0).collect();
        assert_eq!(to, vec![1, 2], "CSMA_MAX_NEIGHBOR_QUEUES is 2");
        assert_eq!(m.node_stats(0).map(|s| s.queue_drops), Some(1));
    }

    #[test]
    fn a_second_packet_to_the_same_neighbour_waits_a_check_interval() {
        let mut m = medium(false);
        for id in [1, 2] {
            m.send(
                Instant::ZERO,
                Packet {
                    id,
                    from: 0,
                    to: Destination::Node(1),
                    payload_bytes: 20,
                },
            );
        }
        let delivered = run(&mut m);
        assert_eq!(delivered.len(), 2);
        let gap = delivered[1].1.saturating_duration_since(delivered[0].1);
        assert!(
            gap >= Duration::from_millis(125) && gap < Duration::from_millis(130),
            "{gap:?}"
        );
    }

    #[test]
    fn slip_paces_the_gateway_and_its_replies() {
        let mut m = medium(true);
        m.send(
            Instant::ZERO,
            Packet {
                id: 1,
                from: 0,
                to: Destination::Node(1),
                payload_bytes: 20,
            },
        );
        let delivered = run(&mut m);
        // 6.08 ms on the line before the radio sees it.
        assert!(delivered[0].1 > Instant::from_nanos(6_076_000));
        m.send(
            Instant::from_millis(100),
            Packet {
                id: 2,
                from: 1,
                to: Destination::Node(0),
                payload_bytes: 20,
            },
        );
        let up = run(&mut m);
        assert_eq!(up.len(), 1);
        assert!(up[0].1 > Instant::from_millis(100) + Duration::from_micros(6076));
    }
}
