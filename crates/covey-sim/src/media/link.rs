//! One direction of a wired or emulated link: a drop-tail queue in front of a serialiser
//! at a fixed bit rate, then propagation with a delay model; every frame (fragment) is
//! subject to the loss model, and a packet arrives only if all its frames do. This is what
//! `netem rate … delay … loss …` with `limit N` does for one interface, plus fragmentation.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use covey_proto::{Duration, Instant};

use super::delay::PropagationDelay;
use super::framing::Framing;
use super::loss::{LossModel, LossSpec};
use super::{Delivery, Destination, LossCause, MediumStats, NodeId, Packet};
use crate::sim::SimRng;

/// The parameters of one link direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkConfig {
    /// Serialisation rate in bit/s.
    pub rate_bps: u64,
    /// Propagation delay after serialisation.
    pub delay: PropagationDelay,
    /// Header model and MTU.
    pub framing: Framing,
    /// Packets the drop-tail queue holds besides the one being serialised.
    pub queue_packets: usize,
    /// Loss per frame.
    pub loss: LossSpec,
}

impl LinkConfig {
    /// Time to serialise `bytes` at the link rate (rounded up to the nanosecond).
    pub fn serialisation(&self, bytes: usize) -> Duration {
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let rate = u128::from(self.rate_bps.max(1));
        Duration::from_nanos(u64::try_from(bits.div_ceil(rate)).unwrap_or(u64::MAX))
    }
}

#[derive(Debug, Clone, Copy)]
struct InService {
    packet: Packet,
    started: Instant,
    ends: Instant,
}

/// A packet propagating: (arrival, sequence, packet id, receiver).
type InFlight = Reverse<(Instant, u64, u64, NodeId)>;

/// One link direction on virtual time.
#[derive(Debug)]
pub struct Link {
    config: LinkConfig,
    broadcast_to: Vec<NodeId>,
    queue: VecDeque<Packet>,
    in_service: Option<InService>,
    in_flight: BinaryHeap<InFlight>,
    pending_receivers: Vec<(u64, usize)>,
    seq: u64,
    loss: LossModel,
    delay_rng: SimRng,
    ready: VecDeque<Delivery>,
    released: VecDeque<u64>,
    stats: MediumStats,
    events: u64,
    max_queue: usize,
}

impl Link {
    /// A link direction; `broadcast_to` are the nodes a broadcast reaches, `loss_rng` and
    /// `delay_rng` its two random streams.
    pub fn new(
        config: LinkConfig,
        broadcast_to: Vec<NodeId>,
        loss_rng: SimRng,
        delay_rng: SimRng,
    ) -> Link {
        Link {
            loss: LossModel::new(config.loss, loss_rng),
            config,
            broadcast_to,
            queue: VecDeque::with_capacity(config.queue_packets.min(4096)),
            in_service: None,
            in_flight: BinaryHeap::new(),
            pending_receivers: Vec::new(),
            seq: 0,
            delay_rng,
            ready: VecDeque::new(),
            released: VecDeque::new(),
            stats: MediumStats::default(),
            events: 0,
            max_queue: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// Counters of this direction.
    pub fn stats(&self) -> &MediumStats {
        &self.stats
    }

    /// Serialisation completions and arrivals processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The longest the queue has been.
    pub fn max_queue(&self) -> usize {
        self.max_queue
    }

    /// Packets waiting in the queue now.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Offers `packet` to the link at `now`: serialised at once when idle, queued when busy,
    /// dropped when the queue is full.
    pub fn send(&mut self, now: Instant, packet: Packet) {
        self.stats.packets_sent += 1;
        if self.in_service.is_none() {
            self.start(now, packet);
        } else if self.queue.len() < self.config.queue_packets {
            self.queue.push_back(packet);
            self.max_queue = self.max_queue.max(self.queue.len());
        } else {
            self.stats.lose(LossCause::QueueFull);
            self.released.push_back(packet.id);
        }
    }

    fn start(&mut self, now: Instant, packet: Packet) {
        let bytes_time: Duration = self
            .config
            .framing
            .frames(packet.payload_bytes)
            .map(|b| self.config.serialisation(b))
            .sum();
        self.in_service = Some(InService {
            packet,
            started: now,
            ends: now + bytes_time,
        });
    }

    /// When `advance` must run next.
    pub fn next_event(&self) -> Option<Instant> {
        let serialised = self.in_service.map(|s| s.ends);
        let arrival = self.in_flight.peek().map(|Reverse((at, ..))| *at);
        match (serialised, arrival) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Processes everything due at or before `now`.
    pub fn advance(&mut self, now: Instant) {
        loop {
            let serialised = self.in_service.filter(|s| s.ends <= now).map(|s| s.ends);
            let arrival = self
                .in_flight
                .peek()
                .map(|Reverse((at, ..))| *at)
                .filter(|at| *at <= now);
            match (serialised, arrival) {
                (Some(s), Some(a)) if a < s => self.arrive(),
                (Some(_), _) => self.finish_serialisation(),
                (None, Some(_)) => self.arrive(),
                (None, None) => break,
            }
        }
    }

    /// The packet's last frame left the serialiser: draw losses and propagation per frame.
    fn finish_serialisation(&mut self) {
        let Some(s) = self.in_service.take() else {
            return;
        };
        self.events += 1;
        let mut t = s.started;
        let mut arrival = s.ends;
        let mut lost = false;
        for bytes in self.config.framing.frames(s.packet.payload_bytes) {
            t = t + self.config.serialisation(bytes);
            self.stats.frames_on_wire += 1;
            self.stats.bytes_on_wire += bytes as u64;
            lost |= self.loss.lose();
            arrival = arrival.max(t + self.config.delay.sample(&mut self.delay_rng));
        }
        if lost {
            self.stats.lose(LossCause::Channel);
            self.released.push_back(s.packet.id);
        } else {
            match s.packet.to {
                Destination::Node(n) => self.launch(arrival, s.packet.id, n),
                Destination::Broadcast => {
                    // Index loop: a broadcast must not allocate a receiver list.
                    let mut receivers = 0;
                    for i in 0..self.broadcast_to.len() {
                        let n = self.broadcast_to[i];
                        if n != s.packet.from {
                            self.launch(arrival, s.packet.id, n);
                            receivers += 1;
                        }
                    }
                    if receivers == 0 {
                        self.released.push_back(s.packet.id);
                    } else {
                        self.pending_receivers.push((s.packet.id, receivers));
                    }
                }
            }
        }
        if let Some(next) = self.queue.pop_front() {
            self.start(s.ends, next);
        }
    }

    fn launch(&mut self, at: Instant, id: u64, to: NodeId) {
        self.seq += 1;
        self.in_flight.push(Reverse((at, self.seq, id, to)));
    }

    fn arrive(&mut self) {
        let Some(Reverse((at, _, id, to))) = self.in_flight.pop() else {
            return;
        };
        self.events += 1;
        self.stats.packets_delivered += 1;
        self.ready.push_back(Delivery { id, to, at });
        match self.pending_receivers.iter().position(|(p, _)| *p == id) {
            Some(i) => {
                self.pending_receivers[i].1 -= 1;
                if self.pending_receivers[i].1 == 0 {
                    self.pending_receivers.swap_remove(i);
                    self.released.push_back(id);
                }
            }
            None => self.released.push_back(id),
        }
    }

    /// The next arrival without taking it.
    pub fn peek_delivery(&self) -> Option<&Delivery> {
        self.ready.front()
    }

    /// The next arrival, in arrival order.
    pub fn poll_delivery(&mut self) -> Option<Delivery> {
        self.ready.pop_front()
    }

    /// The next packet this link is done with.
    pub fn poll_released(&mut self) -> Option<u64> {
        self.released.pop_front()
    }
}
