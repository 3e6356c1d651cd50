//! The shared IEEE 802.15.4 medium: every node's MAC (queue, unslotted CSMA/CA, ACKs and
//! retries) over one channel, with collisions judged at each receiver.
//!
//! A data attempt runs: random backoff, CCA (8 symbols; busy if any transmission the sender
//! hears overlaps it), RX-to-TX turnaround, the frame. A unicast receiver that got the frame
//! intact answers with an ACK after a turnaround (hardware auto-ACK, no CCA); the sender waits
//! macAckWaitDuration from the end of its frame and retries with a fresh CSMA/CA up to
//! macMaxFrameRetries times. After a frame is done (ACKed, or sent without ACK) the sender keeps
//! the SIFS or LIFS its size calls for before contending for the next one.
//!
//! How a reception is judged is [`Ieee802154Config::reception`]. Under
//! [`ReceptionModel::Overlap`] (the default) a reception fails when any other transmission the
//! receiver hears (its own included: the radio is half-duplex) overlaps the frame, and CCA is
//! busy when any audible transmission overlaps it. Under [`ReceptionModel::Sinr`] the receiver
//! locks onto the first frame it detects and keeps it if its SINR allows (capture), and CCA
//! follows the configured mode: see [`super::reception`]. Either way a [`FrameErrorModel`] may
//! still corrupt a frame that got through.
//!
//! Losses in [`MediumStats`] count datagrams, once each, at the node that gave up on them: a
//! full queue, a channel access failure, or exhausted retries, in which case the cause is that
//! of the last failed attempt (collision, channel error, or plain [`LossCause::RetriesExhausted`]
//! when the receiver heard nothing). A datagram whose every fragment arrived but whose last
//! ACKs were all lost is delivered, not lost, so each unicast datagram sent is either
//! delivered or lost exactly once. Broadcast frames are neither acknowledged nor retried; a
//! broadcast lost at one receiver shows in that node's [`NodeStats`] only.
//!
//! Multicast across hops floods down the tree: a node that receives a broadcast datagram from
//! its tree parent, and has children, broadcasts it once more. Every node that hears a copy
//! delivers it once.
//!
//! Without the simulator, [`Ieee802154Medium::enable_confirms`] gives the origin of every
//! datagram a [`Confirm`] (MCPS-DATA.confirm), [`Ieee802154Medium::set_drop_trace`] reports each
//! drop with its cause as it happens, and [`Ieee802154Medium::counters`] holds every per-node
//! counter; [`super::experiment`] drives the medium from traffic sources.

use std::collections::{HashMap, VecDeque};

use covey_proto::{Duration, Instant};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::{Delivery, Destination, LossCause, Medium, MediumStats, NodeId, Packet};
use super::air::{AirLog, Transmission};
use super::confirm::{Confirm, ConfirmStatus};
use super::counters::MacCounters;
use super::csma::{CcaOutcome, CsmaBackoff, MacParams};
use super::drops::{DropTrace, DropTraceHook};
use super::frame::MacFrame;
use super::frame_error::{FrameErrorModel, FrameKind, FrameOnLink};
use super::frame_format::{HeaderModel, HopAddressing};
use super::node::{MacState, NodeMac, NodeStats};
use super::phy::PhyTiming;
use super::radio::{ExternalInterference, ReceptionModel};
use super::reception::SinrReceiver;
use super::schedule::{EventQueue, MacEvent};
use super::topology::Topology;
use crate::media::contiki::{nullrdc, ContikiConfig};

mod contiki_hooks;
use contiki_hooks::{ContikiState, RxAdmission};

/// Which MAC the nodes run above the radio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MacLayer {
    /// IEEE 802.15.4 unslotted CSMA/CA with its retries, a drop-tail queue per node.
    #[default]
    Standard,
    /// Contiki 3.0's csma.c over nullrdc and the CC2520, the border router (node 0) behind
    /// SLIP, SMRF forwarding multicast ([`crate::media::contiki`]).
    Contiki(ContikiConfig),
}

/// Everything that configures an 802.15.4 medium.
#[derive(Debug, Clone, PartialEq)]
pub struct Ieee802154Config {
    /// Seed of every random stream of the medium (node backoffs, channel errors).
    pub seed: u64,
    /// CSMA/CA and retry parameters.
    pub mac: MacParams,
    /// PHY timing.
    pub phy: PhyTiming,
    /// Header bytes and fragmentation.
    pub headers: HeaderModel,
    /// Frames each node's MAC queue holds (Contiki's default queue buffer count is 8).
    pub queue_capacity_frames: usize,
    /// How long a receiver keeps fragments and remembers a datagram it already has (RFC 4944's
    /// reassembly timeout).
    pub reassembly_timeout: Duration,
    /// The MAC above the radio; with [`MacLayer::Contiki`] the radio's CSMA/CA parameters are
    /// replaced by [`nullrdc::radio_mac`].
    pub mac_layer: MacLayer,
    /// How receptions and CCAs are judged: [`ReceptionModel::Overlap`] by default, which every
    /// existing scenario keeps; [`ReceptionModel::Sinr`] for capture by signal to
    /// interference.
    pub reception: ReceptionModel,
}

impl Default for Ieee802154Config {
    fn default() -> Self {
        Ieee802154Config {
            seed: 0,
            mac: MacParams::default(),
            phy: PhyTiming::default(),
            headers: HeaderModel::default(),
            queue_capacity_frames: 8,
            reassembly_timeout: Duration::from_secs(60),
            mac_layer: MacLayer::Standard,
            reception: ReceptionModel::Overlap,
        }
    }
}

/// Fragments a receiver holds of one datagram.
#[derive(Debug, Clone)]
struct Reassembly {
    received: Vec<bool>,
    complete: bool,
    first_seen: Instant,
}

/// A shared IEEE 802.15.4 channel with its nodes' MACs.
pub struct Ieee802154Medium {
    config: Ieee802154Config,
    topology: Topology,
    nodes: Vec<NodeMac>,
    channel_rng: Xoshiro256PlusPlus,
    error_models: Vec<Box<dyn FrameErrorModel + Send>>,
    events: EventQueue,
    air: AirLog,
    reassembly: HashMap<(NodeId, u64), Reassembly>,
    deliveries: VecDeque<Delivery>,
    stats: MediumStats,
    last_prune: Instant,
    /// Copies of each datagram queued at some node (one per node and hop).
    in_flight: HashMap<u64, u32>,
    /// Datagrams the medium is done with, for the simulator to free.
    released: VecDeque<u64>,
    /// Confirms not yet pulled; `None` until enabled, so the simulator never piles them up.
    confirms: Option<VecDeque<Confirm>>,
    /// Called for every dropped datagram when set.
    drop_trace: Option<DropTraceHook>,
    /// Contiki's layers, when the config asks for them.
    contiki: Option<ContikiState>,
    /// The receivers' state under [`ReceptionModel::Sinr`].
    sinr: Option<SinrReceiver>,
}

impl std::fmt::Debug for Ieee802154Medium {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ieee802154Medium")
            .field("config", &self.config)
            .field("nodes", &self.nodes.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// How a frame fared at one receiver.
type Reception = Result<(), LossCause>;

impl Ieee802154Medium {
    /// A medium over `topology`; node i's backoff stream is the seed's stream jumped i + 1
    /// times (xoshiro jumps give non-overlapping streams), stream 0 draws channel errors.
    pub fn new(mut config: Ieee802154Config, topology: Topology) -> Self {
        let contiki = match config.mac_layer {
            MacLayer::Standard => None,
            MacLayer::Contiki(contiki) => {
                config.mac = nullrdc::radio_mac();
                // The radio's queue is nullrdc's list being sent; csma.c holds the packets.
                config.queue_capacity_frames = 1 << 16;
                Some(ContikiState::new(contiki, topology.nodes(), config.seed))
            }
        };
        let mut stream = Xoshiro256PlusPlus::seed_from_u64(config.seed);
        let channel_rng = stream.clone();
        let nodes = (0..topology.nodes())
            .map(|_| {
                stream.jump();
                NodeMac::new(config.queue_capacity_frames, stream.clone())
            })
            .collect();
        let sinr = match config.reception {
            ReceptionModel::Overlap => None,
            ReceptionModel::Sinr(params) => Some(SinrReceiver::new(params, &topology)),
        };
        Ieee802154Medium {
            config,
            topology,
            nodes,
            channel_rng,
            error_models: Vec::new(),
            events: EventQueue::default(),
            air: AirLog::default(),
            reassembly: HashMap::new(),
            deliveries: VecDeque::new(),
            stats: MediumStats::default(),
            last_prune: Instant::ZERO,
            in_flight: HashMap::new(),
            released: VecDeque::new(),
            confirms: None,
            drop_trace: None,
            contiki,
            sinr,
        }
    }

    /// Adds a non-802.15.4 interferer (Wi-Fi) to the SINR of every reception and to energy
    /// detection. Returns it unused under [`ReceptionModel::Overlap`], where interferers
    /// corrupt frames through [`add_frame_error_model`](Self::add_frame_error_model) instead.
    pub fn add_interferer(
        &mut self,
        interferer: Box<dyn ExternalInterference + Send>,
    ) -> Result<(), Box<dyn ExternalInterference + Send>> {
        match self.sinr.as_mut() {
            Some(sinr) => {
                sinr.add_interferer(interferer);
                Ok(())
            }
            None => Err(interferer),
        }
    }

    /// Adds a frame error model (fading, interference); a frame is corrupted if any model
    /// corrupts it.
    pub fn add_frame_error_model(&mut self, model: Box<dyn FrameErrorModel + Send>) {
        self.error_models.push(model);
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The configuration.
    pub fn config(&self) -> &Ieee802154Config {
        &self.config
    }

    /// Counters of `node`.
    pub fn node_stats(&self, node: NodeId) -> Option<&NodeStats> {
        self.nodes.get(node).map(|n| &n.stats)
    }

    /// Every counter of `node`: its [`NodeStats`], busy CCAs, frames received, drops by cause.
    pub fn counters(&self, node: NodeId) -> Option<MacCounters> {
        self.nodes.get(node).map(|n| MacCounters {
            stats: n.stats,
            cca_busy: n.cca_busy,
            frames_received: n.frames_received,
            drops: n.drops,
        })
    }

    /// Every counter summed over the nodes.
    pub fn total_counters(&self) -> MacCounters {
        let mut total = MacCounters::default();
        for node in 0..self.nodes.len() {
            if let Some(counters) = self.counters(node) {
                total.merge(&counters);
            }
        }
        total
    }

    /// Keeps a [`Confirm`] for every datagram `send` offers from now on, for
    /// [`poll_confirm`](Self::poll_confirm). Off by default so that users who never pull them
    /// do not accumulate them.
    pub fn enable_confirms(&mut self) {
        self.confirms.get_or_insert_with(VecDeque::new);
    }

    /// The next confirm, in the order the outcomes were decided.
    pub fn poll_confirm(&mut self) -> Option<Confirm> {
        self.confirms.as_mut()?.pop_front()
    }

    /// Calls `hook` for every datagram dropped from now on, with where, when and why.
    pub fn set_drop_trace(&mut self, hook: impl FnMut(&DropTrace) + Send + 'static) {
        self.drop_trace = Some(Box::new(hook));
    }

    /// Frames waiting in `node`'s MAC queue.
    pub fn queue_len(&self, node: NodeId) -> usize {
        self.nodes.get(node).map_or(0, |n| n.queue.len())
    }

    /// Cuts a datagram into this hop's frames and queues them at `node`.
    fn enqueue(&mut self, now: Instant, node: NodeId, template: MacFrame) {
        let hop_to = match template.destination {
            Destination::Node(d) => Some(self.topology.next_hop(node, d)),
            Destination::Broadcast => None,
        };
        let addressing = HopAddressing {
            source_inline: template.origin != node,
            destination_inline: match template.destination {
                Destination::Node(d) => hop_to != Some(d),
                Destination::Broadcast => false,
            },
            multicast: hop_to.is_none(),
        };
        let Some(sizes) = self.config.headers.frames(
            template.payload_bytes,
            addressing,
            self.config.phy.max_psdu_bytes,
        ) else {
            self.refuse(now, node, template, LossCause::TooLarge);
            return;
        };
        let fragments = sizes.len();
        let frames = sizes
            .into_iter()
            .enumerate()
            .map(|(fragment, mpdu_bytes)| MacFrame {
                hop_to,
                fragment,
                fragments,
                mpdu_bytes,
                ..template
            })
            .collect();
        if self.contiki.is_some() {
            self.contiki_enqueue(now, node, MacFrame { hop_to, ..template }, frames);
            return;
        }
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        if !mac.queue.push_datagram(frames) {
            mac.stats.queue_drops += 1;
            self.refuse(now, node, template, LossCause::QueueFull);
            return;
        }
        *self.in_flight.entry(template.packet).or_insert(0) += 1;
        if mac.state == MacState::Idle {
            self.start_attempt(now, node);
        }
    }

    /// Starts a fresh CSMA/CA for the head frame.
    fn start_attempt(&mut self, now: Instant, node: NodeId) {
        let params = self.config.mac;
        let unit = self.config.phy.backoff_unit();
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        if mac.queue.is_empty() {
            mac.state = MacState::Idle;
            return;
        }
        let (csma, periods) = CsmaBackoff::start(&params, &mut mac.rng);
        mac.csma = Some(csma);
        mac.state = MacState::Contending;
        self.events.schedule(
            now + unit.saturating_mul(periods),
            MacEvent::BackoffEnd(node),
        );
    }

    /// Ends the head frame's story and moves on, after `spacing` if a frame went out. `lost`
    /// says why the datagram is lost with the frame (an unacknowledged frame that failed).
    fn finish_frame(
        &mut self,
        now: Instant,
        node: NodeId,
        spacing: Option<Duration>,
        lost: Option<LossCause>,
    ) {
        if self.contiki.is_some() {
            self.contiki_frame_done(now, node, spacing, None);
            return;
        }
        let acked = self.config.mac.ack_unicast && lost.is_none();
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        let done = mac
            .queue
            .pop()
            .filter(|f| !mac.queue.holds_datagram(f.packet, f.hop_to));
        mac.retries = 0;
        mac.last_failure = None;
        mac.attempt += 1;
        if let Some(frame) = done {
            let transmissions = std::mem::take(&mut mac.datagram_transmissions);
            let status = match lost {
                Some(cause) => {
                    self.drop_datagram(now, node, frame.packet, cause);
                    ConfirmStatus::Lost(cause)
                }
                None => ConfirmStatus::Delivered,
            };
            if frame.origin == node {
                self.confirm(Confirm {
                    packet: frame.packet,
                    node,
                    at: now,
                    status,
                    transmissions,
                    acked: acked && frame.hop_to.is_some(),
                });
            }
            self.datagram_left(frame.packet);
        }
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        match spacing {
            Some(ifs) => {
                mac.state = MacState::Spacing;
                self.events.schedule(now + ifs, MacEvent::IfsEnd(node));
            }
            None => self.start_attempt(now, node),
        }
    }

    /// Gives up on the head frame and the rest of its datagram.
    fn fail_frame(&mut self, now: Instant, node: NodeId, cause: LossCause) {
        if self.contiki.is_some() {
            self.contiki_frame_done(now, node, None, Some(cause));
            return;
        }
        let Some(mac) = self.nodes.get_mut(node) else {
            return;
        };
        if let Some(frame) = mac.queue.pop() {
            mac.queue.drop_datagram(frame.packet, frame.hop_to);
            // Only the ACKs may have been lost: then the datagram went on all the same.
            let arrived = frame.hop_to.is_some_and(|to| {
                self.reassembly
                    .get(&(to, frame.packet))
                    .is_some_and(|r| r.complete)
            });
            let transmissions = std::mem::take(&mut mac.datagram_transmissions);
            mac.retries = 0;
            mac.last_failure = None;
            mac.attempt += 1;
            let status = if arrived {
                ConfirmStatus::Delivered
            } else {
                self.drop_datagram(now, node, frame.packet, cause);
                ConfirmStatus::Lost(cause)
            };
            if frame.origin == node {
                self.confirm(Confirm {
                    packet: frame.packet,
                    node,
                    at: now,
                    status,
                    transmissions,
                    acked: false,
                });
            }
            self.datagram_left(frame.packet);
        }
        self.start_attempt(now, node);
    }

    /// One queued copy of `packet` is done; release the packet when none is left.
    fn datagram_left(&mut self, packet: u64) {
        if let Some(copies) = self.in_flight.get_mut(&packet) {
            *copies = copies.saturating_sub(1);
            if *copies == 0 {
                self.in_flight.remove(&packet);
                self.released.push_back(packet);
            }
        }
    }

    /// Gives up on a datagram at `node`: counted in the stats and the node's drops, and traced.
    fn drop_datagram(&mut self, at: Instant, node: NodeId, packet: u64, cause: LossCause) {
        self.stats.lose(cause);
        if let Some(mac) = self.nodes.get_mut(node) {
            mac.drops.add(cause);
        }
        if let Some(hook) = self.drop_trace.as_mut() {
            hook(&DropTrace {
                at,
                node,
                packet,
                cause,
            });
        }
    }

    /// Drops a datagram `node` never queued, confirming it at once if `node` originated it.
    fn refuse(&mut self, now: Instant, node: NodeId, template: MacFrame, cause: LossCause) {
        self.drop_datagram(now, node, template.packet, cause);
        if template.origin == node {
            self.confirm_untransmitted(now, node, template.packet, ConfirmStatus::Lost(cause));
        }
    }

    /// Confirms a datagram decided without a transmission.
    fn confirm_untransmitted(
        &mut self,
        at: Instant,
        node: NodeId,
        packet: u64,
        status: ConfirmStatus,
    ) {
        self.confirm(Confirm {
            packet,
            node,
            at,
            status,
            transmissions: 0,
            acked: false,
        });
    }

    /// Queues `confirm` for `poll_confirm` if confirms are enabled.
    fn confirm(&mut self, confirm: Confirm) {
        if let Some(confirms) = self.confirms.as_mut() {
            confirms.push_back(confirm);
        }
    }

    /// The id of a packet the medium is done with (delivered or lost everywhere, no copy
    /// queued or on the air), so the simulator can free its bytes.
    pub fn poll_released(&mut self) -> Option<u64> {
        self.released.pop_front()
    }

    /// Judges a frame from `from` at `to` over [start, end).
    fn reception(
        &mut self,
        tx: &Transmission,
        to: NodeId,
        air_bytes: usize,
        kind: FrameKind,
    ) -> Reception {
        if let Some(sinr) = self.sinr.as_mut() {
            let bits_per_ns = 8.0 / (self.config.phy.byte_us as f64 * 1000.0);
            sinr.judge(tx, to, &self.air, bits_per_ns, &mut self.channel_rng)?;
        } else {
            if !self.topology.hears(to, tx.from) {
                return Err(LossCause::RetriesExhausted);
            }
            if self
                .air
                .busy(&self.topology, to, tx.start, tx.end, Some(tx))
            {
                return Err(LossCause::Collision);
            }
        }
        let frame = FrameOnLink {
            from: tx.from,
            to,
            start: tx.start,
            end: tx.end,
            air_bytes,
            kind,
        };
        let mut corrupted = false;
        for model in &mut self.error_models {
            corrupted |= model.corrupts(&frame, &mut self.channel_rng);
        }
        if corrupted {
            Err(LossCause::Channel)
        } else {
            Ok(())
        }
    }

    /// Judges `frame` at `to` and, if it arrived, receives it now or leaves it in the
    /// receiver's radio FIFO; a failure is counted at the receiver.
    fn take_in(
        &mut self,
        now: Instant,
        tx: &Transmission,
        to: NodeId,
        air_bytes: usize,
        kind: FrameKind,
        frame: MacFrame,
    ) -> Reception {
        let admitted = self
            .reception(tx, to, air_bytes, kind)
            .and_then(|()| self.rx_fifo_admit(now, to, tx.from, frame));
        match admitted {
            Ok(RxAdmission::Now) => self.receive(now, to, tx.from, frame),
            Ok(RxAdmission::Stored) => {}
            Err(cause) => self.count_rx_failure(to, cause),
        }
        admitted.map(|_| ())
    }

    /// Counts a failed reception at the receiver.
    fn count_rx_failure(&mut self, to: NodeId, cause: LossCause) {
        if let Some(mac) = self.nodes.get_mut(to) {
            match cause {
                LossCause::Collision => mac.stats.rx_collisions += 1,
                LossCause::Channel => mac.stats.rx_channel_errors += 1,
                _ => {}
            }
        }
    }

    /// An intact data frame reached `node`: reassemble, deliver, forward.
    fn receive(&mut self, now: Instant, node: NodeId, hop_from: NodeId, frame: MacFrame) {
        if let Some(mac) = self.nodes.get_mut(node) {
            mac.frames_received += 1;
        }
        if frame.origin == node {
            return;
        }
        if self.smrf_ignores(node, hop_from, &frame) {
            return;
        }
        let entry = self
            .reassembly
            .entry((node, frame.packet))
            .or_insert_with(|| Reassembly {
                received: vec![false; frame.fragments],
                complete: false,
                first_seen: now,
            });
        if entry.complete || entry.received.get(frame.fragment) == Some(&true) {
            if let Some(mac) = self.nodes.get_mut(node) {
                mac.stats.duplicates += 1;
            }
            return;
        }
        if entry.received.len() != frame.fragments {
            // A new hop cut the datagram differently; start over with this cut.
            entry.received = vec![false; frame.fragments];
        }
        if let Some(slot) = entry.received.get_mut(frame.fragment) {
            *slot = true;
        }
        if !entry.received.iter().all(|&r| r) {
            return;
        }
        entry.complete = true;
        let forward = match frame.destination {
            Destination::Node(d) if d == node => {
                if !self.contiki_deliver_up(now, node, &frame) {
                    self.deliver(now, node, frame.packet);
                }
                false
            }
            Destination::Node(_) => true,
            Destination::Broadcast => {
                self.deliver(now, node, frame.packet);
                self.topology.parent(node) == Some(hop_from) && self.topology.has_children(node)
            }
        };
        if forward {
            if let Some(mac) = self.nodes.get_mut(node) {
                mac.stats.forwarded += 1;
            }
            if frame.destination == Destination::Broadcast && self.contiki.is_some() {
                self.smrf_schedule(now, node, frame);
                return;
            }
            self.enqueue(now, node, frame);
        }
    }

    fn deliver(&mut self, at: Instant, to: NodeId, id: u64) {
        self.stats.packets_delivered += 1;
        self.deliveries.push_back(Delivery { id, to, at });
    }

    fn on_air(
        &mut self,
        from: NodeId,
        start: Instant,
        duration: Duration,
        air_bytes: usize,
    ) -> Transmission {
        let tx = Transmission {
            from,
            start,
            end: start + duration,
        };
        self.air.record(tx);
        if let Some(sinr) = self.sinr.as_mut() {
            sinr.on_air(&tx, &self.air);
        }
        self.stats.frames_on_wire += 1;
        self.stats.bytes_on_wire += air_bytes as u64;
        tx
    }

    fn handle_event(&mut self, now: Instant, event: MacEvent) {
        let phy = self.config.phy;
        let params = self.config.mac;
        match event {
            MacEvent::BackoffEnd(node) => {
                self.events
                    .schedule(now + phy.cca(), MacEvent::CcaEnd(node));
            }
            MacEvent::CcaEnd(node) => {
                let cca_start = Instant::from_nanos(
                    now.as_nanos()
                        .saturating_sub(u64::try_from(phy.cca().as_nanos()).unwrap_or(0)),
                );
                let busy = match self.sinr.as_mut() {
                    Some(sinr) => sinr.cca_busy(node, cca_start, now, &self.air),
                    None => self.air.busy(&self.topology, node, cca_start, now, None),
                };
                let Some(mac) = self.nodes.get_mut(node) else {
                    return;
                };
                if busy {
                    mac.cca_busy += 1;
                }
                let Some(csma) = mac.csma.as_mut() else {
                    return;
                };
                match csma.after_cca(busy, &params, &mut mac.rng) {
                    CcaOutcome::Transmit => {
                        mac.state = MacState::Transmitting;
                        self.events
                            .schedule(now + phy.turnaround(), MacEvent::TxStart(node));
                    }
                    CcaOutcome::BackOff(periods) => {
                        self.events.schedule(
                            now + phy.backoff_unit().saturating_mul(periods),
                            MacEvent::BackoffEnd(node),
                        );
                    }
                    CcaOutcome::ChannelAccessFailure => {
                        mac.stats.channel_access_failures += 1;
                        self.fail_frame(now, node, LossCause::ChannelAccessFailure);
                    }
                }
            }
            MacEvent::TxStart(node) => {
                let Some(mac) = self.nodes.get_mut(node) else {
                    return;
                };
                if mac.ack_busy_until > now {
                    // The radio is still sending an ACK of its own.
                    let at = mac.ack_busy_until;
                    self.events.schedule(at, MacEvent::TxStart(node));
                    return;
                }
                let Some(frame) = mac.queue.head().copied() else {
                    mac.state = MacState::Idle;
                    return;
                };
                mac.tx_start = now;
                mac.stats.frames_sent += 1;
                mac.datagram_transmissions += 1;
                let duration = phy.frame_duration(frame.mpdu_bytes);
                self.on_air(node, now, duration, phy.phy_header_bytes + frame.mpdu_bytes);
                self.events.schedule(now + duration, MacEvent::TxEnd(node));
            }
            MacEvent::TxEnd(node) => self.on_tx_end(now, node),
            MacEvent::AckStart {
                acker,
                sender,
                attempt,
            } => {
                let duration = phy.ack_duration();
                if let Some(mac) = self.nodes.get_mut(acker) {
                    mac.ack_busy_until = now + duration;
                    mac.stats.acks_sent += 1;
                }
                self.on_air(acker, now, duration, phy.ack_air_bytes());
                self.events.schedule(
                    now + duration,
                    MacEvent::AckEnd {
                        acker,
                        sender,
                        start: now,
                        attempt,
                    },
                );
            }
            MacEvent::AckEnd {
                acker,
                sender,
                start,
                attempt,
            } => {
                let waiting = self
                    .nodes
                    .get(sender)
                    .is_some_and(|m| m.attempt == attempt && m.state == MacState::AwaitingAck);
                if !waiting {
                    return;
                }
                let tx = Transmission {
                    from: acker,
                    start,
                    end: now,
                };
                match self.reception(&tx, sender, phy.ack_air_bytes(), FrameKind::Ack) {
                    Ok(()) => {
                        let mpdu = self
                            .nodes
                            .get(sender)
                            .and_then(|m| m.queue.head())
                            .map_or(0, |f| f.mpdu_bytes);
                        self.finish_frame(now, sender, Some(phy.ifs(mpdu)), None);
                    }
                    Err(cause) => {
                        if let Some(mac) = self.nodes.get_mut(sender) {
                            mac.last_failure = Some(cause);
                        }
                    }
                }
            }
            MacEvent::AckTimeout { sender, attempt } => {
                let Some(mac) = self.nodes.get_mut(sender) else {
                    return;
                };
                if mac.attempt != attempt || mac.state != MacState::AwaitingAck {
                    return;
                }
                if mac.retries >= params.max_frame_retries {
                    mac.stats.retries_exhausted += 1;
                    let cause = mac.last_failure.unwrap_or(LossCause::RetriesExhausted);
                    self.fail_frame(now, sender, cause);
                } else {
                    mac.retries += 1;
                    mac.stats.retries += 1;
                    mac.attempt += 1;
                    self.start_attempt(now, sender);
                }
            }
            MacEvent::IfsEnd(node) => self.start_attempt(now, node),
            MacEvent::ContikiTimer { node, token } => self.contiki_timer(now, node, token),
            MacEvent::SmrfForward { node, token } => self.smrf_forward(now, node, token),
            MacEvent::SlipArrived => self.slip_arrived(now),
            MacEvent::SlipDrain => self.slip_try_drain(now),
            MacEvent::SlipUp { packet, to } => {
                self.deliver(now, to, packet);
                self.datagram_left(packet);
            }
        }
    }

    fn on_tx_end(&mut self, now: Instant, node: NodeId) {
        let phy = self.config.phy;
        let Some(mac) = self.nodes.get(node) else {
            return;
        };
        let Some(frame) = mac.queue.head().copied() else {
            return;
        };
        let tx = Transmission {
            from: node,
            start: mac.tx_start,
            end: now,
        };
        let attempt = mac.attempt;
        let air_bytes = phy.phy_header_bytes + frame.mpdu_bytes;
        match frame.hop_to {
            Some(to) => {
                let outcome = self.take_in(now, &tx, to, air_bytes, FrameKind::Data, frame);
                if self.config.mac.ack_unicast {
                    if let Some(mac) = self.nodes.get_mut(node) {
                        mac.state = MacState::AwaitingAck;
                        mac.last_failure = outcome.err();
                    }
                    if outcome.is_ok() {
                        self.events.schedule(
                            now + phy.turnaround(),
                            MacEvent::AckStart {
                                acker: to,
                                sender: node,
                                attempt,
                            },
                        );
                    }
                    self.events.schedule(
                        now + phy.ack_wait(),
                        MacEvent::AckTimeout {
                            sender: node,
                            attempt,
                        },
                    );
                } else {
                    match outcome {
                        Ok(()) => {
                            self.finish_frame(now, node, Some(phy.ifs(frame.mpdu_bytes)), None);
                        }
                        Err(cause) => {
                            // Without ACKs the sender never learns; the datagram is lost all
                            // the same, and its other fragments are pointless.
                            if let Some(mac) = self.nodes.get_mut(node) {
                                mac.queue.drop_rest_of_datagram(frame.packet, frame.hop_to);
                            }
                            let ifs = phy.ifs(frame.mpdu_bytes);
                            self.finish_frame(now, node, Some(ifs), Some(cause));
                        }
                    }
                }
            }
            None => {
                let listeners: Vec<NodeId> = self.topology.neighbours(node).collect();
                for to in listeners {
                    let _ = self.take_in(now, &tx, to, air_bytes, FrameKind::Broadcast, frame);
                }
                self.finish_frame(now, node, Some(phy.ifs(frame.mpdu_bytes)), None);
            }
        }
    }

    fn prune(&mut self, now: Instant) {
        // No frame lasts 10 ms (a full one is 4.256 ms), so older transmissions are history.
        self.air.prune(now, Duration::from_millis(10));
        if now.saturating_duration_since(self.last_prune) < Duration::from_secs(1) {
            return;
        }
        self.last_prune = now;
        let timeout = self.config.reassembly_timeout;
        self.reassembly.retain(|_, r| r.first_seen + timeout > now);
    }
}

impl Medium for Ieee802154Medium {
    fn send(&mut self, now: Instant, packet: Packet) {
        self.stats.packets_sent += 1;
        let unreachable = ConfirmStatus::Lost(LossCause::RetriesExhausted);
        if packet.from >= self.nodes.len() {
            self.drop_datagram(now, packet.from, packet.id, LossCause::RetriesExhausted);
            self.confirm_untransmitted(now, packet.from, packet.id, unreachable);
            self.released.push_back(packet.id);
            return;
        }
        match packet.to {
            Destination::Node(to) if to == packet.from => {
                self.deliver(now, to, packet.id);
                let delivered = ConfirmStatus::Delivered;
                self.confirm_untransmitted(now, packet.from, packet.id, delivered);
                self.released.push_back(packet.id);
                return;
            }
            Destination::Node(to) if to >= self.nodes.len() => {
                self.drop_datagram(now, packet.from, packet.id, LossCause::RetriesExhausted);
                self.confirm_untransmitted(now, packet.from, packet.id, unreachable);
                self.released.push_back(packet.id);
                return;
            }
            _ => {}
        }
        let template = MacFrame {
            packet: packet.id,
            origin: packet.from,
            destination: packet.to,
            payload_bytes: packet.payload_bytes,
            hop_to: None,
            fragment: 0,
            fragments: 1,
            mpdu_bytes: 0,
        };
        if !self.slip_down(now, template) {
            self.enqueue(now, packet.from, template);
        }
        if !self.in_flight.contains_key(&packet.id) {
            // Refused at once (queue full, too large): nothing will ever need its bytes.
            self.released.push_back(packet.id);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.events.next_time()
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some((at, event)) = self.events.pop_due(now) {
            self.handle_event(at, event);
        }
        self.prune(now);
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }

    fn poll_released(&mut self) -> Option<u64> {
        Ieee802154Medium::poll_released(self)
    }

    fn stats(&self) -> &MediumStats {
        &self.stats
    }
}
