//! One direction of a wired or emulated link: a drop-tail queue in front of a serialiser
//! at a fixed bit rate, then propagation with a delay model; every frame (fragment) is
//! subject to the loss model, and a packet arrives only if all its frames do. This is what
//! `netem rate … delay … loss …` with `limit N` does for one interface, plus fragmentation.
//!
//! By default the queue holds whole datagrams and fragments follow RFC 4944; with
//! [`Link::set_fragmentation`]`(`[`Fragmentation::Ip`]`)` a datagram over the MTU becomes
//! IP fragments, each taking its own queue slot, as the fragments of a Linux host do in
//! front of a netem qdisc: when the queue has room for only some of them, the others are
//! tail-dropped, the admitted ones still take their time on the wire, and the datagram is
//! lost (with the serialiser; a tbf's byte limit takes whole datagrams).
//!
//! With [`RateLimit::TokenBucket`] the serialiser and its packet queue give way to a tbf
//! shaper (see [`super::tbf`]) with its byte limit, feeding a line of its own rate, and
//! netem's loss and delay come before or after it as [`QdiscOrder`] says.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use covey_proto::{Duration, Instant};

use super::delay::PropagationDelay;
use super::framing::{Fragmentation, Frames, Framing};
use super::loss::{LossModel, LossSpec};
use super::tbf::{QdiscOrder, TbfConfig, TokenBucket};
use super::{Delivery, Destination, LossCause, MediumStats, NodeId, Packet};
use crate::sim::SimRng;

/// How a link direction holds traffic to its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateLimit {
    /// Every packet is serialised at [`LinkConfig::rate_bps`] behind a drop-tail queue of
    /// [`LinkConfig::queue_packets`] (netem's `rate`, a physical link): a packet of `s`
    /// bytes always takes `8 s / rate`.
    #[default]
    Serialiser,
    /// A Linux tbf (token bucket filter) shaper: packets leave at once while tokens last,
    /// wait FIFO in a queue of `limit` bytes otherwise. [`LinkConfig::rate_bps`] and
    /// [`LinkConfig::queue_packets`] are not used; the line behind the shaper runs at
    /// [`TbfConfig::line_bps`].
    TokenBucket(TbfConfig),
}

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
    /// The serialiser (the default) or a tbf shaper.
    pub rate_limit: RateLimit,
}

impl LinkConfig {
    /// Time to serialise `bytes` at the link rate (rounded up to the nanosecond).
    pub fn serialisation(&self, bytes: usize) -> Duration {
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let rate = u128::from(self.rate_bps.max(1));
        Duration::from_nanos(u64::try_from(bits.div_ceil(rate)).unwrap_or(u64::MAX))
    }
}

/// A datagram in the queue or the serialiser: its first `frames` frames go on the wire
/// (all of them unless the queue had room for only some fragments), and it is lost when
/// `truncated` (some of its fragments were tail-dropped).
#[derive(Debug, Clone, Copy)]
struct Queued {
    packet: Packet,
    frames: usize,
    truncated: bool,
}

impl Queued {
    /// All of `packet`'s frames.
    fn whole(packet: Packet) -> Queued {
        Queued {
            packet,
            frames: usize::MAX,
            truncated: false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct InService {
    queued: Queued,
    started: Instant,
    ends: Instant,
}

/// A packet propagating: (arrival, sequence, packet id, receiver).
type InFlight = Reverse<(Instant, u64, u64, NodeId)>;

/// A packet inside netem before the shaper, due at `at` (ties in sending order).
#[derive(Debug, Clone, Copy)]
struct Delayed {
    at: Instant,
    seq: u64,
    packet: Packet,
}

impl PartialEq for Delayed {
    fn eq(&self, other: &Delayed) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Delayed {}

impl PartialOrd for Delayed {
    fn partial_cmp(&self, other: &Delayed) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Delayed {
    fn cmp(&self, other: &Delayed) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// One link direction on virtual time.
#[derive(Debug)]
pub struct Link {
    config: LinkConfig,
    broadcast_to: Vec<NodeId>,
    queue: VecDeque<Queued>,
    queued_frames: usize,
    fragmentation: Fragmentation,
    in_service: Option<InService>,
    in_flight: BinaryHeap<InFlight>,
    pending_receivers: Vec<(u64, usize)>,
    seq: u64,
    /// The tbf's tokens, with [`RateLimit::TokenBucket`].
    bucket: Option<TokenBucket>,
    /// Behind a tbf: when each packet in `queue` has its tokens (and leaves the tbf).
    token_times: VecDeque<Instant>,
    /// The tbf's backlog: (leaves, bytes) of each packet still waiting for tokens, FIFO.
    backlog: VecDeque<(Instant, u64)>,
    /// Bytes in `backlog`.
    backlog_bytes: u64,
    /// Packets netem holds before the shaper ([`QdiscOrder::NetemThenTbf`]).
    netem: BinaryHeap<Reverse<Delayed>>,
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
            queued_frames: 0,
            fragmentation: Fragmentation::Lowpan,
            in_service: None,
            in_flight: BinaryHeap::new(),
            pending_receivers: Vec::new(),
            seq: 0,
            bucket: match config.rate_limit {
                RateLimit::Serialiser => None,
                RateLimit::TokenBucket(t) => Some(TokenBucket::new(&t, Instant::ZERO)),
            },
            token_times: VecDeque::new(),
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            netem: BinaryHeap::new(),
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

    /// How datagrams over the MTU are fragmented and queued ([`Fragmentation::Lowpan`]
    /// unless set); set it before the first packet.
    pub fn set_fragmentation(&mut self, fragmentation: Fragmentation) {
        self.fragmentation = fragmentation;
    }

    /// How datagrams over the MTU are fragmented and queued.
    pub fn fragmentation(&self) -> Fragmentation {
        self.fragmentation
    }

    /// The frames of `payload_bytes` as this link cuts them.
    fn frames_of(&self, payload_bytes: usize) -> Frames {
        self.config
            .framing
            .frames_as(payload_bytes, self.fragmentation)
    }

    /// Counters of this direction.
    pub fn stats(&self) -> &MediumStats {
        &self.stats
    }

    /// Serialisation completions and arrivals processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The longest the queue has been (in fragments with [`Fragmentation::Ip`]).
    pub fn max_queue(&self) -> usize {
        self.max_queue
    }

    /// Packets waiting in the queue now.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Offers `packet` to the link at `now`: serialised at once when idle, queued when busy,
    /// dropped when the queue is full. With a tbf, netem or the shaper takes it first, as
    /// the configured order says.
    pub fn send(&mut self, now: Instant, packet: Packet) {
        self.stats.packets_sent += 1;
        let tbf = match self.config.rate_limit {
            RateLimit::Serialiser => None,
            RateLimit::TokenBucket(t) => Some(t),
        };
        match tbf {
            None if self.fragmentation == Fragmentation::Ip => self.send_fragments(now, packet),
            None => {
                if self.in_service.is_none() {
                    self.start(now, Queued::whole(packet));
                } else if self.queue.len() < self.config.queue_packets {
                    self.queue.push_back(Queued::whole(packet));
                    self.max_queue = self.max_queue.max(self.queue.len());
                } else {
                    self.drop_packet(packet.id, LossCause::QueueFull);
                }
            }
            Some(t) if t.order == QdiscOrder::NetemThenTbf => self.netem_enqueue(now, packet),
            Some(t) => self.tbf_enqueue(now, packet, &t),
        }
    }

    /// [`Self::send`] with IP fragments: each fragment takes a queue slot; those that find
    /// the queue full are dropped, and with them the datagram.
    fn send_fragments(&mut self, now: Instant, packet: Packet) {
        let k = self.frames_of(packet.payload_bytes).count();
        let limit = self.config.queue_packets;
        let admitted = if self.in_service.is_none() {
            // The first fragment goes straight to the serialiser, the rest wait for it.
            1 + (k - 1).min(limit)
        } else {
            k.min(limit.saturating_sub(self.occupancy(now)))
        };
        if admitted == 0 {
            self.drop_packet(packet.id, LossCause::QueueFull);
            return;
        }
        let queued = Queued {
            packet,
            frames: admitted,
            truncated: admitted < k,
        };
        if self.in_service.is_none() {
            self.start(now, queued);
        } else {
            self.queue.push_back(queued);
            self.queued_frames += admitted;
        }
        self.max_queue = self.max_queue.max(self.occupancy(now));
    }

    /// Fragments waiting at `now`: those queued, and those of the datagram in service whose
    /// serialisation has not begun.
    fn occupancy(&self, now: Instant) -> usize {
        let mut waiting = self.queued_frames;
        if let Some(s) = self.in_service {
            let mut t = s.started;
            for bytes in self
                .frames_of(s.queued.packet.payload_bytes)
                .take(s.queued.frames)
            {
                if t > now {
                    waiting += 1;
                }
                t = t + self.frame_time(bytes);
            }
        }
        waiting
    }

    fn drop_packet(&mut self, id: u64, cause: LossCause) {
        self.stats.lose(cause);
        self.released.push_back(id);
    }

    /// Bytes of `packet` on the wire, headers of every frame included.
    fn wire_bytes(&self, packet: &Packet) -> u64 {
        self.config
            .framing
            .frames(packet.payload_bytes)
            .map(|b| b as u64)
            .sum()
    }

    /// netem before the shaper: the loss model drops the packet (any frame lost) or netem
    /// holds it for its delay; jitter reorders, as netem's time-sorted queue does.
    fn netem_enqueue(&mut self, now: Instant, packet: Packet) {
        let mut lost = false;
        let mut delay = Duration::ZERO;
        for _ in self.config.framing.frames(packet.payload_bytes) {
            lost |= self.loss.lose();
            delay = delay.max(self.config.delay.sample(&mut self.delay_rng));
        }
        if lost {
            self.drop_packet(packet.id, LossCause::Channel);
            return;
        }
        self.seq += 1;
        self.netem.push(Reverse(Delayed {
            at: now + delay,
            seq: self.seq,
            packet,
        }));
    }

    /// The tbf's enqueue: a packet larger than the bucket is dropped (`tbf_enqueue`), one
    /// that would take the backlog of packets still waiting for tokens over `limit` bytes
    /// too (its `bfifo` child). The shaper is FIFO and nothing else spends its tokens, so
    /// the time the packet gets them is fixed now; it then goes to the line, which sends
    /// it once the packets before it are out.
    fn tbf_enqueue(&mut self, now: Instant, packet: Packet, tbf: &TbfConfig) {
        while let Some(&(leaves, bytes)) = self.backlog.front() {
            if leaves > now {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= bytes;
        }
        let bytes = self.wire_bytes(&packet);
        if bytes > tbf.max_size() {
            self.drop_packet(packet.id, LossCause::TooLarge);
            return;
        }
        if self.backlog_bytes + bytes > tbf.limit_bytes {
            self.drop_packet(packet.id, LossCause::QueueFull);
            return;
        }
        let leaves = match &mut self.bucket {
            Some(b) => b.depart(now, bytes).unwrap_or(now),
            None => now,
        };
        if leaves > now {
            self.backlog.push_back((leaves, bytes));
            self.backlog_bytes += bytes;
        }
        if self.in_service.is_none() {
            self.start(leaves, Queued::whole(packet));
        } else {
            self.queue.push_back(Queued::whole(packet));
            self.token_times.push_back(leaves);
            self.max_queue = self.max_queue.max(self.queue.len());
        }
    }

    /// The time `bytes` take on the wire: the serialiser's rate, or the line behind a tbf.
    fn frame_time(&self, bytes: usize) -> Duration {
        match &self.config.rate_limit {
            RateLimit::Serialiser => self.config.serialisation(bytes),
            RateLimit::TokenBucket(t) => t.line_time(bytes),
        }
    }

    /// Puts `queued` on the wire from `now`.
    fn start(&mut self, now: Instant, queued: Queued) {
        let bytes_time: Duration = self
            .frames_of(queued.packet.payload_bytes)
            .take(queued.frames)
            .map(|b| self.frame_time(b))
            .sum();
        self.in_service = Some(InService {
            queued,
            started: now,
            ends: now + bytes_time,
        });
    }

    /// When `advance` must run next.
    pub fn next_event(&self) -> Option<Instant> {
        let serialised = self.in_service.map(|s| s.ends);
        let arrival = self.in_flight.peek().map(|Reverse((at, ..))| *at);
        let released = self.netem.peek().map(|Reverse(d)| d.at);
        [serialised, arrival, released].into_iter().flatten().min()
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
            let released = self
                .netem
                .peek()
                .map(|Reverse(d)| d.at)
                .filter(|at| *at <= now);
            if let Some(r) = released {
                if serialised.is_none_or(|s| r <= s) && arrival.is_none_or(|a| r <= a) {
                    self.netem_release();
                    continue;
                }
            }
            match (serialised, arrival) {
                (Some(s), Some(a)) if a < s => self.arrive(),
                (Some(_), _) => self.finish_serialisation(),
                (None, Some(_)) => self.arrive(),
                (None, None) => break,
            }
        }
    }

    /// netem's next due packet goes on to the shaper.
    fn netem_release(&mut self) {
        let Some(Reverse(d)) = self.netem.pop() else {
            return;
        };
        self.events += 1;
        if let RateLimit::TokenBucket(t) = self.config.rate_limit {
            self.tbf_enqueue(d.at, d.packet, &t);
        }
    }

    /// The packet's last frame left the serialiser: draw losses and propagation per frame
    /// (unless netem already did, before the shaper).
    fn finish_serialisation(&mut self) {
        let Some(s) = self.in_service.take() else {
            return;
        };
        self.events += 1;
        let impaired = matches!(
            self.config.rate_limit,
            RateLimit::TokenBucket(TbfConfig {
                order: QdiscOrder::NetemThenTbf,
                ..
            })
        );
        let mut t = s.started;
        let mut arrival = s.ends;
        let mut lost = false;
        let packet = s.queued.packet;
        for bytes in self.frames_of(packet.payload_bytes).take(s.queued.frames) {
            t = t + self.frame_time(bytes);
            self.stats.frames_on_wire += 1;
            self.stats.bytes_on_wire += bytes as u64;
            if !impaired {
                lost |= self.loss.lose();
                arrival = arrival.max(t + self.config.delay.sample(&mut self.delay_rng));
            }
        }
        if s.queued.truncated {
            self.stats.lose(LossCause::QueueFull);
            self.released.push_back(packet.id);
        } else if lost {
            self.stats.lose(LossCause::Channel);
            self.released.push_back(packet.id);
        } else {
            match packet.to {
                Destination::Node(n) => self.launch(arrival, packet.id, n),
                Destination::Broadcast => {
                    // Index loop: a broadcast must not allocate a receiver list.
                    let mut receivers = 0;
                    for i in 0..self.broadcast_to.len() {
                        let n = self.broadcast_to[i];
                        if n != packet.from {
                            self.launch(arrival, packet.id, n);
                            receivers += 1;
                        }
                    }
                    if receivers == 0 {
                        self.released.push_back(packet.id);
                    } else {
                        self.pending_receivers.push((packet.id, receivers));
                    }
                }
            }
        }
        if let Some(next) = self.queue.pop_front() {
            if self.fragmentation == Fragmentation::Ip {
                self.queued_frames -= next.frames;
            }
            let tokens = self.token_times.pop_front().unwrap_or(s.ends);
            self.start(s.ends.max(tokens), next);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::HeaderModel;
    use crate::sim::{stream_rng, Stream};

    fn link(loss: LossSpec, queue_packets: usize, fragmentation: Fragmentation) -> Link {
        let config = LinkConfig {
            rate_bps: 20_000,
            delay: PropagationDelay::Fixed(Duration::from_millis(20)),
            framing: Framing {
                mtu: 128,
                header: HeaderModel::Ipv4Udp,
            },
            queue_packets,
            loss,
            rate_limit: RateLimit::Serialiser,
        };
        let mut l = Link::new(
            config,
            Vec::new(),
            stream_rng(7, Stream::Link(0)),
            stream_rng(7, Stream::Link(1)),
        );
        l.set_fragmentation(fragmentation);
        l
    }

    fn packet(id: u64, payload_bytes: usize) -> Packet {
        Packet {
            id,
            from: 1,
            to: Destination::Node(2),
            payload_bytes,
        }
    }

    fn drain(l: &mut Link) -> Vec<u64> {
        let mut delivered = Vec::new();
        while let Some(t) = l.next_event() {
            l.advance(t);
            delivered.extend(std::iter::from_fn(|| l.poll_delivery()).map(|d| d.id));
        }
        delivered
    }

    #[test]
    fn a_fragmented_datagram_is_lost_when_any_fragment_is() {
        // 300 B of CoAP at MTU 128 over IPv4 is three IP fragments; with 10 % loss per
        // frame a datagram arrives with probability 0.9^3, a one-frame datagram with 0.9.
        let n = 20_000;
        for (payload, frames) in [(300, 3), (60, 1)] {
            for fragmentation in [Fragmentation::Ip, Fragmentation::Lowpan] {
                let mut l = link(LossSpec::Bernoulli { p: 0.1 }, 1000, fragmentation);
                // RFC 4944 fragments of it happen to be three as well.
                assert_eq!(l.frames_of(payload).count(), frames);
                let mut delivered = 0;
                for i in 0..n {
                    l.send(Instant::from_millis(1000 * i), packet(i, payload));
                    delivered += drain(&mut l).len();
                }
                let k = l.frames_of(payload).count() as i32;
                let expected = 0.9f64.powi(k);
                let share = delivered as f64 / n as f64;
                let tol = 5.0 * (expected * (1.0 - expected) / n as f64).sqrt();
                assert!(
                    (share - expected).abs() < tol,
                    "{payload} B, {fragmentation:?}: {share} vs {expected}"
                );
                assert_eq!(
                    l.stats().frames_on_wire,
                    n * k as u64,
                    "every fragment is sent"
                );
            }
        }
    }

    #[test]
    fn ip_fragments_take_a_queue_slot_each() {
        // A one-frame datagram in service, then a three-fragment datagram: a queue of 2
        // holds two of its fragments, so the third is tail-dropped and the datagram lost,
        // though the two admitted fragments still cross the link.
        let mut l = link(LossSpec::None, 2, Fragmentation::Ip);
        l.send(Instant::ZERO, packet(1, 60));
        l.send(Instant::ZERO, packet(2, 300));
        assert_eq!(l.max_queue(), 2);
        assert_eq!(drain(&mut l), vec![1]);
        assert_eq!(l.stats().losses_of(LossCause::QueueFull), 1);
        assert_eq!(l.stats().frames_on_wire, 3);
        // With room for all three fragments it arrives.
        let mut l = link(LossSpec::None, 3, Fragmentation::Ip);
        l.send(Instant::ZERO, packet(1, 60));
        l.send(Instant::ZERO, packet(2, 300));
        assert_eq!(drain(&mut l), vec![1, 2]);
        // A fragment of the datagram in service whose turn has not come counts as queued:
        // 300 B alone occupies the serialiser with one fragment and waits with two.
        let mut l = link(LossSpec::None, 2, Fragmentation::Ip);
        l.send(Instant::ZERO, packet(1, 300));
        l.send(Instant::ZERO, packet(2, 60));
        assert_eq!(drain(&mut l), vec![1]);
        // The default queues whole datagrams: one slot, however many fragments.
        let mut l = link(LossSpec::None, 1, Fragmentation::Lowpan);
        l.send(Instant::ZERO, packet(1, 60));
        l.send(Instant::ZERO, packet(2, 300));
        assert_eq!(drain(&mut l), vec![1, 2]);
    }
}
