//! The sans-IO endpoint: datagrams and time in, datagrams, timers and events out.

use crate::app::AppId;
use crate::config::Config;
use crate::event::{Event, IncomingId, RequestId, ResponseKey, TimerId};
use crate::hash::{seeded_map, Map, MidKey, SeededState};
use crate::message::dedup::DedupCache;
use crate::message::outbox::{LocalId, OutSource, Outbox};
use crate::message::peer::{PeerKey, PeerTable};
use crate::message::reply_cache::ReplyCache;
use crate::rng::Rng;
use crate::stats::{DropCause, Stats};
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::SlotBufs;
use crate::storage::slab::{Slab, SlabKey};
use crate::storage::timer_queue::TimerQueue;
use crate::{Duration, Instant};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::net::{IpAddr, SocketAddr};
use covey_core::{Code, Message, MessageType, Token};

/// Local socket addresses interned at most; others are reported as unknown.
const MAX_LOCALS: usize = 64;

use crate::block;
use crate::exchange::client::ClientExchange;
use crate::exchange::incoming::IncomingExchange;
use crate::message::transmission::{Transmission, TransmissionOwner};
use crate::observe::observers::Observer;

/// How a datagram reached this endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LocalAddr {
    /// The group address it was sent to, when it arrived by multicast.
    pub multicast_group: Option<IpAddr>,
    /// The local socket address it arrived on, when the driver knows it.
    pub socket: Option<SocketAddr>,
}

impl LocalAddr {
    /// Arrived by unicast.
    pub const UNICAST: LocalAddr = LocalAddr {
        multicast_group: None,
        socket: None,
    };

    /// Arrived on group address `group`.
    pub const fn multicast(group: IpAddr) -> LocalAddr {
        LocalAddr {
            multicast_group: Some(group),
            socket: None,
        }
    }

    /// The same, noting the local socket address it arrived on.
    pub const fn on_socket(self, socket: SocketAddr) -> LocalAddr {
        LocalAddr {
            socket: Some(socket),
            ..self
        }
    }
}

/// A datagram to send, written into the caller's buffer by `poll_transmit`, with what a
/// driver or simulator needs to know about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transmit {
    /// Where to send it.
    pub destination: SocketAddr,
    /// Its length at the start of the buffer.
    pub size: usize,
    /// Where to send it from: the local socket the peer last reached (or the request it
    /// answers arrived on), and the group that request was sent to, when known.
    pub source: LocalAddr,
    /// CON, NON, ACK or RST.
    pub message_type: MessageType,
    /// Its code (a method, a response code, or Empty).
    pub code: Code,
    /// Its message ID.
    pub message_id: u16,
    /// The outgoing request it belongs to, when it is one of this endpoint's requests.
    pub request: Option<RequestId>,
    /// 0 for a first transmission, n for the n-th retransmission of a CON.
    pub retransmission: u8,
}

/// What became of a datagram handed to `handle_datagram`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reception {
    /// A new message, taken in (a request, a response, an ACK or RST that matched).
    Accepted,
    /// A copy of a message already seen, answered from the reply cache or ignored.
    Duplicate,
    /// Dropped or refused (answered with RST, 4.xx or 5.03 where the RFC says so).
    Rejected(DropCause),
}

/// Why a request could not be started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// A table is full (exchanges, peers, the peer's queue).
    Overload,
    /// Multicast requests must be NON (RFC 7252 §8.1).
    ConfirmableMulticast,
    /// The token is already used by another outstanding request.
    TokenInUse,
    /// The request does not fit into a datagram.
    TooLarge,
    /// The request has already ended.
    UnknownRequest,
}

impl core::fmt::Display for RequestError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RequestError::Overload => "too many outstanding requests",
            RequestError::ConfirmableMulticast => "a multicast request must be non-confirmable",
            RequestError::TokenInUse => "token already in use by an outstanding request",
            RequestError::TooLarge => "request too large",
            RequestError::UnknownRequest => "request already ended",
        })
    }
}

impl core::error::Error for RequestError {}

/// Why a response could not be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RespondError {
    /// The request was already answered or has expired.
    UnknownRequest,
    /// The response does not fit into a datagram.
    TooLarge,
    /// No buffer or peer slot was free.
    Overload,
}

impl core::fmt::Display for RespondError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RespondError::UnknownRequest => "request already answered or expired",
            RespondError::TooLarge => "response does not fit into one datagram",
            RespondError::Overload => "no buffer free for the response",
        })
    }
}

impl core::error::Error for RespondError {}

/// A received message as the application sees it.
#[derive(Debug, Clone, Copy)]
pub struct Received<'a> {
    /// The sender.
    pub source: SocketAddr,
    /// The group address it arrived on, if it came by multicast.
    pub group: Option<IpAddr>,
    /// The local socket address it arrived on, if the driver told the engine.
    pub local: Option<SocketAddr>,
    /// The parsed message (the last block of a block-wise transfer).
    pub message: Message<'a>,
    /// Its size on the wire (the UDP payload) in bytes.
    pub wire_len: usize,
    /// The reassembled body of a block-wise transfer, if there was one.
    pub body: Option<&'a [u8]>,
}

impl<'a> Received<'a> {
    /// Whether it arrived on a group address.
    pub fn is_multicast(&self) -> bool {
        self.group.is_some()
    }

    /// The whole payload: the reassembled body, or the message's payload.
    pub fn payload(&self) -> &'a [u8] {
        self.body.unwrap_or_else(|| self.message.payload())
    }
}

/// What `poll_transmit` reads from a queued datagram's entry.
struct TransmitMeta {
    source: LocalAddr,
    request: Option<RequestId>,
    retransmission: u8,
}

/// A response held until the application's next `poll_event`.
#[derive(Debug)]
pub(crate) struct HeldResponse {
    pub source: SocketAddr,
    /// The whole body of a block-wise transfer.
    pub body: Option<Vec<u8>>,
}

/// Kinds of timers, each with a dense range of ids in the timer queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimerKind {
    Transmission,
    Exchange,
    Incoming,
    App,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct TimerLayout {
    exchange_base: usize,
    incoming_base: usize,
    app_base: usize,
    total: usize,
}

impl TimerLayout {
    fn new(config: &Config) -> TimerLayout {
        let transmissions = config.max_exchanges + config.max_incoming;
        let exchange_base = transmissions;
        let incoming_base = exchange_base + config.max_exchanges;
        let app_base = incoming_base + config.max_incoming;
        TimerLayout {
            exchange_base,
            incoming_base,
            app_base,
            total: app_base + config.max_app_timers,
        }
    }

    pub fn id(&self, kind: TimerKind, key: SlabKey) -> usize {
        key.index()
            + match kind {
                TimerKind::Transmission => 0,
                TimerKind::Exchange => self.exchange_base,
                TimerKind::Incoming => self.incoming_base,
                TimerKind::App => self.app_base,
            }
    }

    fn decode(&self, id: usize) -> (TimerKind, usize) {
        if id >= self.app_base {
            (TimerKind::App, id - self.app_base)
        } else if id >= self.incoming_base {
            (TimerKind::Incoming, id - self.incoming_base)
        } else if id >= self.exchange_base {
            (TimerKind::Exchange, id - self.exchange_base)
        } else {
            (TimerKind::Transmission, id)
        }
    }
}

/// Durations derived from the configuration once, as they are needed per message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lifetimes {
    pub exchange: Duration,
    pub non: Duration,
    pub mid_reuse: Duration,
}

/// A CoAP endpoint (client and server at once) without I/O.
#[derive(Debug)]
pub struct Endpoint {
    pub(crate) config: Config,
    pub(crate) lifetimes: Lifetimes,
    pub(crate) rng: Rng,
    pub(crate) hasher: SeededState,
    pub(crate) peers: PeerTable,
    pub(crate) exchanges: Slab<ClientExchange>,
    pub(crate) exchange_bufs: SlotBufs,
    pub(crate) tokens: Map<Token, SlabKey>,
    pub(crate) transmissions: Slab<Transmission>,
    pub(crate) transmission_bufs: SlotBufs,
    pub(crate) transmissions_by_mid: Map<MidKey, SlabKey>,
    pub(crate) incoming: Slab<IncomingExchange>,
    pub(crate) incoming_bufs: SlotBufs,
    pub(crate) held: Slab<HeldResponse>,
    pub(crate) held_bufs: SlotBufs,
    pub(crate) released_on_poll: Option<SlabKey>,
    pub(crate) dedup: DedupCache,
    pub(crate) replies: ReplyCache,
    pub(crate) outbox: Outbox,
    /// Buffers for every stored datagram, by size class.
    pub(crate) pool: BufferPool,
    /// Local socket addresses seen, so queued datagrams and peers name them by index + 1.
    pub(crate) locals: Vec<SocketAddr>,
    /// The local socket of the datagram or request being answered now, if any.
    pub(crate) replying_from: LocalId,
    pub(crate) events: VecDeque<(AppId, Event)>,
    /// The App acting now: new exchanges and timers belong to it.
    pub(crate) acting_app: AppId,
    /// The Apps' own random stream, apart from the engine's so Apps do not shift it.
    pub(crate) app_rng: Rng,
    pub(crate) timers: TimerQueue,
    pub(crate) timer_layout: TimerLayout,
    pub(crate) app_timers: Slab<(u64, AppId)>,
    pub(crate) stats: Stats,
    pub(crate) observers: Slab<Observer>,
    /// Digest of (observer address, token) -> observer; checked against the observer.
    pub(crate) observer_index: Map<u64, SlabKey>,
    /// Digest of (observer address, message ID of a notification) -> observer, so an RST
    /// ends the observation; checked against the observer.
    pub(crate) notification_mids: Map<u64, SlabKey>,
    pub(crate) uploads: block::Uploads,
    pub(crate) bodies: block::BodyCache,
}

impl Endpoint {
    /// An endpoint whose tables and buffers grow on demand up to the `Config` bounds;
    /// `seed` drives its PRNG (message IDs, tokens, timeouts, leisure), so runs with the
    /// same seed are identical.
    pub fn new(config: Config, seed: u64) -> Endpoint {
        let mut rng = Rng::new(seed);
        let transmissions = config.max_exchanges + config.max_incoming;
        let held = config.max_events.max(1);
        let timer_layout = TimerLayout::new(&config);
        Endpoint {
            hasher: SeededState::with_seed(rng.next_u64()),
            peers: PeerTable::new(&config, rng.next_u64()),
            exchanges: Slab::with_capacity(config.max_exchanges),
            exchange_bufs: SlotBufs::default(),
            tokens: seeded_map(rng.next_u64()),
            transmissions: Slab::with_capacity(transmissions),
            transmission_bufs: SlotBufs::default(),
            transmissions_by_mid: seeded_map(rng.next_u64()),
            incoming: Slab::with_capacity(config.max_incoming),
            incoming_bufs: SlotBufs::default(),
            held: Slab::with_capacity(held),
            held_bufs: SlotBufs::default(),
            released_on_poll: None,
            dedup: DedupCache::new(config.max_dedup_entries, rng.next_u64()),
            replies: ReplyCache::new(config.max_buffers / 2),
            outbox: Outbox::new(config.max_buffers / 2, config.max_buffers * 2),
            pool: BufferPool::new(config.max_message_size, config.pool_retain_bytes),
            locals: Vec::new(),
            replying_from: LocalId::default(),
            events: VecDeque::new(),
            acting_app: AppId(0),
            app_rng: Rng::new(rng.next_u64()),
            timers: TimerQueue::with_capacity(timer_layout.total),
            timer_layout,
            app_timers: Slab::with_capacity(config.max_app_timers),
            stats: Stats::default(),
            lifetimes: Lifetimes {
                exchange: config.transmission.exchange_lifetime(),
                non: config.transmission.non_lifetime(),
                mid_reuse: config.mid_reuse(),
            },
            observers: Slab::with_capacity(config.max_observers),
            observer_index: seeded_map(rng.next_u64()),
            notification_mids: seeded_map(rng.next_u64()),
            uploads: block::Uploads::new(&config, rng.next_u64()),
            bodies: block::BodyCache::new(&config, rng.next_u64()),
            config,
            rng,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The current RTO estimate towards `peer`, if the endpoint has state for it.
    pub fn peer_rto(&self, peer: SocketAddr) -> Option<Duration> {
        use crate::cc::RtoEstimator;
        self.peers
            .lookup(&peer)
            .and_then(|k| self.peers.get(k))
            .map(|p| p.estimator.current_rto())
    }

    /// Every peer with state and its current RTO estimate.
    pub fn peer_rtos(&self) -> impl Iterator<Item = (SocketAddr, Duration)> + '_ {
        use crate::cc::RtoEstimator;
        self.peers
            .iter()
            .map(|p| (p.addr, p.estimator.current_rto()))
    }

    /// When `handle_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next_deadline()
    }

    /// Runs every timer due at `now`: retransmissions, response deadlines, piggyback
    /// windows, leisure delays and application timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.dedup.expire(now);
        let idle = self.lifetimes.exchange;
        if let Some(cutoff) = now.as_nanos().checked_sub(idle.as_nanos() as u64) {
            self.uploads.expire(Instant::from_nanos(cutoff));
        }
        self.bodies.expire(now);
        while let Some(id) = self.timers.pop_expired(now) {
            let (kind, index) = self.timer_layout.decode(id);
            match kind {
                TimerKind::Transmission => self.on_transmission_timeout(now, index),
                TimerKind::Exchange => self.on_exchange_timeout(now, index),
                TimerKind::Incoming => self.on_incoming_timeout(now, index),
                TimerKind::App => {
                    if let Some(key) = self.app_timers.key_at(index) {
                        if let Some((value, owner)) = self.app_timers.remove(key) {
                            self.push_event_for(owner, Event::Timer(value));
                        }
                    }
                }
            }
        }
    }

    /// The next datagram to send, written into `buf` (which should hold
    /// `max_message_size` bytes; a datagram that does not fit is dropped and counted).
    pub fn poll_transmit(&mut self, _now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        while let Some((destination, source, local)) = self.outbox.pop() {
            let meta = self.transmit_meta(source, local);
            let bytes: &[u8] = match source {
                OutSource::Slot(slot) => self.outbox.buf(slot),
                OutSource::Transmission(key) => match self.transmissions.get(key) {
                    Some(_) => self.transmission_bufs.get(key.index()),
                    None => &[],
                },
                OutSource::Reply(r) => self.replies.get(r).unwrap_or(&[]),
                OutSource::Incoming(key) => match self.incoming.get(key) {
                    Some(_) => self.incoming_bufs.get(key.index()),
                    None => &[],
                },
            };
            let size = bytes.len();
            let fits = size > 0 && size <= buf.len();
            if fits {
                buf[..size].copy_from_slice(bytes);
            }
            match source {
                OutSource::Slot(slot) => self.outbox.release(slot, &mut self.pool),
                OutSource::Incoming(key) => self.finish_delayed_response(key),
                _ => {}
            }
            if fits {
                self.stats.transmissions += 1;
                self.stats.bytes_sent += size as u64;
                let header = covey_core::Header::parse(&buf[..size]).ok()?;
                let request = meta.request.or_else(|| {
                    // One of our NON requests: its token names the exchange.
                    header.code.is_request().then(|| {
                        let token = Message::parse(&buf[..size]).ok()?.token();
                        self.tokens.get(&token).copied().map(RequestId)
                    })?
                });
                return Some(Transmit {
                    destination,
                    size,
                    source: meta.source,
                    message_type: header.message_type,
                    code: header.code,
                    message_id: header.message_id,
                    request,
                    retransmission: meta.retransmission,
                });
            }
            if size > 0 {
                self.stats.drop(DropCause::TooLarge);
            }
        }
        None
    }

    /// What a queued datagram is, as far as its queue entry tells.
    fn transmit_meta(&self, source: OutSource, local: LocalId) -> TransmitMeta {
        let mut meta = TransmitMeta {
            source: LocalAddr {
                socket: self.local_addr(local),
                multicast_group: None,
            },
            request: None,
            retransmission: 0,
        };
        match source {
            OutSource::Transmission(key) => {
                if let Some(t) = self.transmissions.get(key) {
                    meta.retransmission = t.retransmissions;
                    meta.request = match t.owner {
                        TransmissionOwner::Request(k) | TransmissionOwner::Ping(k) => {
                            Some(RequestId(k))
                        }
                        _ => None,
                    };
                    if meta.source.socket.is_none() {
                        meta.source.socket = self
                            .peers
                            .get(t.peer)
                            .and_then(|p| self.local_addr(p.local));
                    }
                }
            }
            OutSource::Incoming(key) => {
                if let Some(inc) = self.incoming.get(key) {
                    meta.source = LocalAddr {
                        socket: inc.local,
                        multicast_group: inc.group,
                    };
                }
            }
            OutSource::Slot(_) | OutSource::Reply(_) => {}
        }
        meta
    }

    /// The local socket address interned as `id`.
    pub(crate) fn local_addr(&self, id: LocalId) -> Option<SocketAddr> {
        (id.0 as usize)
            .checked_sub(1)
            .and_then(|i| self.locals.get(i))
            .copied()
    }

    /// Interns a local socket address (unknown past `MAX_LOCALS` addresses).
    pub(crate) fn local_id(&mut self, socket: Option<SocketAddr>) -> LocalId {
        let Some(socket) = socket else {
            return LocalId::default();
        };
        if let Some(i) = self.locals.iter().position(|&l| l == socket) {
            return LocalId(i as u16 + 1);
        }
        if self.locals.len() >= MAX_LOCALS {
            return LocalId::default();
        }
        self.locals.push(socket);
        LocalId(self.locals.len() as u16)
    }

    /// Queues a datagram for `poll_transmit`, from the socket being answered from, else the
    /// one the destination last reached; a full queue drops it and counts the drop.
    pub(crate) fn queue_datagram(&mut self, destination: SocketAddr, source: OutSource) {
        let local = match self.replying_from {
            LocalId(0) => self
                .peers
                .lookup(&destination)
                .and_then(|k| self.peers.get(k))
                .map_or(LocalId::default(), |p| p.local),
            id => id,
        };
        if !self.outbox.push(destination, source, local, &mut self.pool) {
            self.stats.drop(DropCause::OutboxFull);
        }
    }

    /// The next event for the application. A response announced by the previous event is
    /// released now, so read it before calling this again.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.poll_app_event().map(|(_, event)| event)
    }

    /// The next event with the App it belongs to: the owner of the exchange or timer
    /// (requests belong to no App yet and come with `AppId(0)`). Same release rule as
    /// [`poll_event`](Self::poll_event).
    pub fn poll_app_event(&mut self) -> Option<(AppId, Event)> {
        if let Some(key) = self.released_on_poll.take() {
            self.release_held(key);
        }
        let (owner, event) = self.events.pop_front()?;
        if let Event::Response { key, .. } = event {
            self.released_on_poll = Some(key.0);
        }
        Some((owner, event))
    }

    /// Makes `app` the owner of the exchanges and timers started from now on, until the
    /// next call; hosts of several Apps call it before each App runs.
    pub fn set_acting_app(&mut self, app: AppId) {
        self.acting_app = app;
    }

    /// 64 bits from the Apps' random stream (seeded from the endpoint's seed).
    pub fn app_random_u64(&mut self) -> u64 {
        self.app_rng.next_u64()
    }

    /// A response announced by an [`Event::Response`].
    pub fn response(&self, key: ResponseKey) -> Option<Received<'_>> {
        let held = self.held.get(key.0)?;
        let bytes = self.held_bufs.get(key.0.index());
        let message = Message::parse(bytes).ok()?;
        Some(Received {
            source: held.source,
            group: None,
            local: None,
            message,
            wire_len: bytes.len(),
            body: held.body.as_deref(),
        })
    }

    /// An incoming request announced by an [`Event::Request`] and not answered yet.
    pub fn request(&self, id: IncomingId) -> Option<Received<'_>> {
        let inc = self.incoming.get(id.0)?;
        let bytes = self.incoming_bufs.get(id.0.index());
        let message = Message::parse(bytes).ok()?;
        Some(Received {
            source: inc.remote,
            group: inc.group,
            local: inc.local,
            message,
            wire_len: bytes.len(),
            body: inc.body.as_deref(),
        })
    }

    /// Sets an application timer that produces `Event::Timer(value)` at `at`.
    pub fn set_timer(&mut self, at: Instant, value: u64) -> Option<TimerId> {
        let key = self.app_timers.insert((value, self.acting_app)).ok()?;
        let id = self.timer_layout.id(TimerKind::App, key);
        self.timers.set(id, at);
        Some(TimerId(key))
    }

    /// Cancels an application timer.
    pub fn cancel_timer(&mut self, timer: TimerId) {
        if self.app_timers.remove(timer.0).is_some() {
            let id = self.timer_layout.id(TimerKind::App, timer.0);
            self.timers.cancel(id);
        }
    }

    pub(crate) fn set_timer_for(&mut self, kind: TimerKind, key: SlabKey, at: Instant) {
        let id = self.timer_layout.id(kind, key);
        self.timers.set(id, at);
    }

    pub(crate) fn cancel_timer_for(&mut self, kind: TimerKind, key: SlabKey) {
        let id = self.timer_layout.id(kind, key);
        self.timers.cancel(id);
    }

    /// Forgets a held response and gives its buffer back.
    pub(crate) fn release_held(&mut self, key: SlabKey) {
        if self.held.remove(key).is_some() {
            self.held_bufs.release(key.index(), &mut self.pool);
        }
    }

    pub(crate) fn push_event_for(&mut self, owner: AppId, event: Event) -> bool {
        if self.events.len() >= self.config.max_events {
            self.stats.drop(DropCause::Overload);
            return false;
        }
        self.events.push_back((owner, event));
        true
    }

    pub(crate) fn random_mid(&mut self) -> u16 {
        self.rng.next_u64() as u16
    }

    pub(crate) fn peer_for(&mut self, addr: SocketAddr, now: Instant) -> Option<PeerKey> {
        let first_mid = self.random_mid();
        let key = self.peers.get_or_insert(addr, now, &self.config, first_mid);
        if key.is_none() {
            self.stats.drop(DropCause::Overload);
        }
        key
    }

    /// A fresh random token not used by any outstanding request.
    pub(crate) fn new_token(&mut self) -> Token {
        loop {
            let token = Token::from_u64(self.rng.next_u64(), self.config.token_length.clamp(1, 8));
            if !self.tokens.contains_key(&token) {
                return token;
            }
        }
    }
}
