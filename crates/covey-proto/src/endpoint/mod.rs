//! The sans-IO endpoint: datagrams and time in, datagrams, timers and events out.

mod address_budget;
// Without address validation every budget is unlimited: no response waits for a ping.
#[cfg(feature = "address-validation")]
mod address_check;
#[cfg(feature = "block1-uploads")]
mod block1_upload;
#[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
mod block_transfer;
#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
mod echo_answer;
mod echo_challenge;
#[cfg(feature = "edhoc")]
mod edhoc;
#[cfg(feature = "multicast")]
mod group_response;
mod incoming;
mod incoming_share;
mod invalid_code;
mod notification;
#[cfg(feature = "oscore")]
mod notification_oscore;
mod notification_transmit;
mod observation;
#[cfg(feature = "oscore")]
mod oscore;
#[cfg(feature = "oscore")]
mod oscore_client;
#[cfg(feature = "oscore")]
mod oscore_outer_block;
mod outgoing;
mod oversized;
mod peer_share;
mod receive;
mod respond;
#[cfg(feature = "client")]
mod response_matching;
mod transmissions;

pub use crate::exchange::error::{RequestError, RespondError};
pub use crate::message::datagram::{LocalAddr, Received, Reception, Transmit};
pub(crate) use crate::storage::timer_layout::TimerKind;
use crate::storage::timer_layout::TimerLayout;
#[cfg(feature = "edhoc")]
pub use edhoc::EdhocConfig;
#[cfg(feature = "oscore")]
pub use oscore::SequenceReservation;

use crate::config::{Config, ConfigError};
use crate::event::AppId;
#[cfg(feature = "client")]
use crate::event::ResponseKey;
use crate::event::{Event, IncomingId, RequestId};
use crate::hash::SeededState;
use crate::message::layer::Messages;
use crate::message::outbox::{LocalId, OutSource};
use crate::message::peer::{PeerKey, PeerTable};
use crate::rng::Rng;
use crate::stats::{DropCause, Stats};
use crate::storage::buffer_pool::BufferPool;
use crate::storage::fifo::Fifo;
use crate::storage::slab::SlabKey;
use crate::storage::timer_queue::TimerQueue;
use crate::{Duration, Instant};
use core::net::SocketAddr;
use covey_core::Message;
#[cfg(feature = "client")]
use covey_core::Token;

#[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
use crate::block::BlockTransfers;
use crate::exchange::address_validation::AddressValidation;
#[cfg(feature = "client")]
use crate::exchange::client_table::ClientExchanges;
#[cfg(feature = "client")]
use crate::exchange::held_response::HeldResponses;
use crate::exchange::incoming_table::IncomingRequests;
#[cfg(feature = "client")]
use crate::exchange::kept_echoes::KeptEchoes;
use crate::message::reliability::Transmissions;
use crate::message::transmission::TransmissionOwner;
use crate::observe::observers::Observers;
use crate::observe::round::NOTIFICATIONS_PER_QUEUED;

/// What `poll_transmit` reads from a queued datagram's entry.
struct TransmitMeta {
    source: LocalAddr,
    request: Option<RequestId>,
    retransmission: u8,
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
    /// Our requests, their stored messages, the index by token and NSTART per peer.
    #[cfg(feature = "client")]
    pub(crate) exchanges: ClientExchanges,
    /// A server-only build has no requests of its own.
    #[cfg(not(feature = "client"))]
    pub(crate) exchanges: crate::exchange::no_client::NoClientExchanges,
    /// CON messages awaiting their ACK.
    pub(crate) transmissions: Transmissions,
    /// The server role's requests taken in and not yet answered.
    pub(crate) incoming: IncomingRequests,
    /// Responses held for the application until its next poll.
    #[cfg(feature = "client")]
    pub(crate) held: HeldResponses,
    /// Deduplication, the reply cache, the outbox and the local sockets.
    pub(crate) messages: Messages,
    /// Buffers for every stored datagram, by size class.
    pub(crate) pool: BufferPool,
    pub(crate) events: Fifo<(AppId, Event)>,
    /// A seed drawn for the Apps' random stream, apart from the engine's so Apps do not
    /// shift it.
    app_seed: u64,
    pub(crate) timers: TimerQueue,
    pub(crate) timer_layout: TimerLayout,
    pub(crate) stats: Stats,
    /// The observe layer: observers, their indices and notification rounds.
    pub(crate) observers: Observers,
    /// The block layer: Block1 uploads and Block2 bodies of transfers in progress.
    #[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
    pub(crate) block_transfers: BlockTransfers,
    /// Verified addresses, the others' amplification budgets and the trusted sockets.
    pub(crate) address_validation: AddressValidation,
    /// Echo values servers sent, for the next request to them (client side).
    #[cfg(feature = "client")]
    pub(crate) kept_echoes: KeptEchoes,
    /// The OSCORE security contexts the host added.
    #[cfg(feature = "oscore")]
    pub(crate) oscore: crate::exchange::oscore_contexts::OscoreContexts,
    /// The EDHOC Responder's sessions, when the host enabled it.
    #[cfg(feature = "edhoc")]
    pub(crate) edhoc: Option<alloc::boxed::Box<edhoc::EdhocResponderTable>>,
}

impl Endpoint {
    /// An endpoint whose tables and buffers grow on demand up to the `Config` bounds;
    /// `seed` drives its PRNG (message IDs, tokens, timeouts, leisure), so runs with the
    /// same seed are identical. Fails when `config` breaks a rule of [`Config::validate`].
    pub fn new(config: Config, seed: u64) -> Result<Endpoint, ConfigError> {
        config.validate()?;
        let mut rng = Rng::new(seed);
        let transmissions = config.max_exchanges + config.max_incoming;
        let timer_layout = TimerLayout::new(&config);
        Ok(Endpoint {
            hasher: SeededState::with_seed(rng.next_u64()),
            peers: PeerTable::new(&config, rng.next_u64()),
            #[cfg(feature = "client")]
            exchanges: ClientExchanges::new(config.max_exchanges, rng.next_u64()),
            #[cfg(not(feature = "client"))]
            exchanges: crate::exchange::no_client::NoClientExchanges,
            transmissions: Transmissions::new(transmissions, rng.next_u64()),
            incoming: IncomingRequests::new(config.max_incoming),
            #[cfg(feature = "client")]
            held: HeldResponses::new(config.max_events),
            messages: Messages::new(&config, rng.next_u64()),
            pool: BufferPool::new(config.max_message_size, config.pool_retain_bytes),
            events: Fifo::new(),
            app_seed: rng.next_u64(),
            timers: TimerQueue::with_capacity(timer_layout.total),
            timer_layout,
            stats: Stats::default(),
            lifetimes: Lifetimes {
                exchange: config.transmission.exchange_lifetime(),
                non: config.transmission.non_lifetime(),
                mid_reuse: config.mid_reuse(),
            },
            observers: Observers::new(config.max_observers, rng.next_u64(), rng.next_u64()),
            #[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
            block_transfers: BlockTransfers::new(
                &config,
                rng.next_u64(),
                rng.next_u64(),
                config.transmission.exchange_lifetime(),
            ),
            address_validation: AddressValidation::new(config.amplification.clone(), seed),
            #[cfg(feature = "client")]
            kept_echoes: KeptEchoes::new(config.max_peers, seed),
            #[cfg(feature = "oscore")]
            oscore: crate::exchange::oscore_contexts::OscoreContexts::new(
                config.max_oscore_contexts,
            ),
            #[cfg(feature = "edhoc")]
            edhoc: None,
            config,
            // The block layer's two seeds are drawn in every build, so a seed gives the
            // same run (message IDs, tokens, timeouts) with or without it. (Built in place:
            // a local endpoint moved into the result would double a node's stack frame.)
            #[cfg(not(any(feature = "block1-uploads", feature = "block2-cache")))]
            rng: rng.skipping(2),
            #[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
            rng,
        })
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
            .and_then(|k| self.peers.estimator(k))
            .map(|e| e.current_rto())
    }

    /// Every peer with state and its current RTO estimate.
    pub fn peer_rtos(&self) -> impl Iterator<Item = (SocketAddr, Duration)> + '_ {
        self.peers.rtos()
    }

    /// When `handle_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next_deadline()
    }

    /// Runs every timer due at `now`: retransmissions, response deadlines, piggyback
    /// windows and leisure delays.
    // Not inlined, as `handle_datagram`: its locals stay out of the driver's loop frame.
    #[inline(never)]
    pub fn handle_timeout(&mut self, now: Instant) {
        self.messages.expire(now);
        #[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
        self.expire_block_state(now);
        while let Some(id) = self.timers.pop_expired(now) {
            let (kind, index) = self.timer_layout.decode(id);
            match kind {
                TimerKind::Transmission => self.on_transmission_timeout(now, index),
                #[cfg(feature = "client")]
                TimerKind::Exchange => self.on_exchange_timeout(now, index),
                #[cfg(not(feature = "client"))]
                TimerKind::Exchange => {}
                TimerKind::Incoming => self.on_incoming_timeout(now, index),
                // Expired above; the timer only made sure this call happened.
                TimerKind::BlockExpiry => {}
            }
        }
    }

    /// The next datagram to send, written into `buf` (which should hold
    /// `max_message_size` bytes; a datagram that does not fit is dropped and counted).
    // Not inlined, as `handle_datagram`: its locals stay out of the driver's loop frame.
    #[inline(never)]
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        // A round's notifications take turns with the other queued datagrams: one of those,
        // then a few notifications, so a round to every observer does not hold back
        // responses (a response queued before the round goes first, as it did).
        let queued_first = self.observers.credit() == 0 && !self.messages.nothing_queued();
        if self.observers.any_due() && !queued_first {
            if let Some(t) = self.transmit_notification(now, buf) {
                // Credit is spent only while something waits: the next datagram queued
                // then goes at once.
                let credit = match self.messages.nothing_queued() {
                    true => 0,
                    false => self.observers.credit().saturating_sub(1),
                };
                self.observers.set_credit(credit);
                return Some(t);
            }
        }
        match self.transmit_queued(now, buf) {
            Some(t) => {
                self.observers.set_credit(NOTIFICATIONS_PER_QUEUED);
                Some(t)
            }
            None => self.transmit_notification(now, buf),
        }
    }

    /// The next datagram of the outbox, written into `buf`. One that does not fit its
    /// destination's amplification budget is dropped; our own requests never draw on it.
    fn transmit_queued(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        while let Some((destination, source, local)) = self.messages.pop() {
            let meta = self.transmit_meta(source, local);
            let (size, fits) = match self.shared_notification(source) {
                // A CON notification is written from its round's representation.
                Some((observer, mid)) => match self.write_confirmable(observer, mid, buf) {
                    Some(size) => (size, true),
                    None => (1, false),
                },
                None => {
                    let bytes: &[u8] = match source {
                        OutSource::Slot(slot) => self.messages.slot(slot),
                        OutSource::Transmission(key) => self.transmissions.bytes(key),
                        OutSource::Reply(r) => self.messages.reply(r).unwrap_or(&[]),
                        #[cfg(feature = "multicast")]
                        OutSource::Incoming(key) => self.incoming.bytes(key),
                    };
                    let size = bytes.len();
                    let fits = size > 0 && size <= buf.len();
                    if fits {
                        buf[..size].copy_from_slice(bytes);
                    }
                    (size, fits)
                }
            };
            match source {
                OutSource::Slot(slot) => self.messages.release_slot(slot, &mut self.pool),
                #[cfg(feature = "multicast")]
                OutSource::Incoming(key) => self.finish_delayed_response(key),
                _ => {}
            }
            if fits {
                let header = covey_core::Header::parse(&buf[..size]).ok()?;
                let own = meta.request.is_some() || header.code.is_request();
                if !own
                    && !self
                        .address_validation
                        .spend(now, destination, meta.source.socket, size)
                {
                    self.stats.drop(DropCause::AmplificationLimit);
                    continue;
                }
                self.stats.transmissions += 1;
                self.stats.bytes_sent += size as u64;
                #[cfg(feature = "client")]
                let request = meta.request.or_else(|| {
                    // One of our NON requests: its token names the exchange.
                    header.code.is_request().then(|| {
                        let token = Message::parse(&buf[..size]).ok()?.token();
                        self.exchanges.by_token(&token).map(RequestId)
                    })?
                });
                #[cfg(not(feature = "client"))]
                let request = meta.request;
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

    /// The observer and message ID of a queued CON notification, which has no bytes of its
    /// own to copy.
    fn shared_notification(&self, source: OutSource) -> Option<(SlabKey, u16)> {
        let OutSource::Transmission(key) = source else {
            return None;
        };
        let t = self.transmissions.get(key)?;
        match t.owner {
            // A protected notification holds its own sealed copy.
            TransmissionOwner::Notification(observer)
                if !self.observers.get(observer)?.is_protected() =>
            {
                Some((observer, t.message_id))
            }
            _ => None,
        }
    }

    /// What a queued datagram is, as far as its queue entry tells.
    fn transmit_meta(&self, source: OutSource, local: LocalId) -> TransmitMeta {
        let mut meta = TransmitMeta {
            source: LocalAddr {
                socket: self.local_addr(local),
                ..LocalAddr::UNICAST
            },
            request: None,
            retransmission: 0,
        };
        match source {
            OutSource::Transmission(key) => {
                if let Some(t) = self.transmissions.get(key) {
                    meta.retransmission = t.retransmissions;
                    #[cfg(feature = "client")]
                    {
                        meta.request = match t.owner {
                            TransmissionOwner::Request(k) | TransmissionOwner::Ping(k) => {
                                Some(RequestId(k))
                            }
                            _ => None,
                        };
                    }
                    if meta.source.socket.is_none() {
                        meta.source.socket = self
                            .peers
                            .local(t.peer)
                            .and_then(|local| self.local_addr(local));
                    }
                }
            }
            #[cfg(feature = "multicast")]
            OutSource::Incoming(key) => {
                if let Some(inc) = self.incoming.get(key) {
                    meta.source = LocalAddr {
                        socket: inc.local,
                        multicast_group: inc.group(),
                        ..LocalAddr::UNICAST
                    };
                }
            }
            OutSource::Slot(_) | OutSource::Reply(_) => {}
        }
        meta
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
        let polled = self.events.pop_front();
        #[cfg(feature = "client")]
        {
            let announced = match polled {
                Some((_, Event::Response { key, .. })) => Some(key.0),
                _ => None,
            };
            self.held.on_poll(announced, &mut self.pool);
        }
        polled
    }

    /// A seed for the random stream of the Apps this endpoint serves, drawn from its own
    /// seed so a run is reproducible.
    pub fn app_seed(&self) -> u64 {
        self.app_seed
    }

    /// A response announced by an [`Event::Response`].
    #[cfg(feature = "client")]
    pub fn response(&self, key: ResponseKey) -> Option<Received<'_>> {
        let (held, bytes) = self.held.get(key.0)?;
        let message = Message::parse(bytes).ok()?;
        Some(Received {
            source: held.source,
            group: None,
            local: None,
            on_loopback: None,
            destination: None,
            message,
            wire_len: bytes.len(),
            body: held.body.as_deref(),
            #[cfg(feature = "oscore")]
            oscore_kid: None,
            #[cfg(feature = "edhoc")]
            edhoc_kid: None,
        })
    }

    /// An incoming request announced by an [`Event::Request`] and not answered yet.
    pub fn request(&self, id: IncomingId) -> Option<Received<'_>> {
        let inc = self.incoming.get(id.0)?;
        let bytes = self.incoming.bytes(id.0);
        let message = Message::parse(bytes).ok()?;
        Some(Received {
            source: inc.remote,
            group: inc.group(),
            local: inc.local,
            on_loopback: inc.on_loopback,
            destination: inc.destination,
            message,
            wire_len: bytes.len(),
            body: inc.body.as_deref(),
            #[cfg(feature = "oscore")]
            oscore_kid: inc
                .oscore
                .and_then(|b| self.oscore.get(b.context))
                .map(|c| c.recipient_id()),
            #[cfg(feature = "edhoc")]
            edhoc_kid: inc
                .oscore
                .and_then(|b| self.oscore.get(b.context))
                .and_then(|c| self.edhoc_peer_kid(c.recipient_id())),
        })
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
    #[cfg(feature = "client")]
    pub(crate) fn release_held(&mut self, key: SlabKey) {
        self.held.release(key, &mut self.pool);
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

    /// The peer for `addr`, which sent us something: created within its source's share of
    /// the peer table.
    pub(crate) fn peer_for(&mut self, addr: SocketAddr, now: Instant) -> Option<PeerKey> {
        self.peer_entry(addr, now, true)
    }

    /// The peer for `addr`, to which we send a request of our own choosing: created in place
    /// of an idle peer when the table is full, else of a peer of the source most beyond its
    /// share, whatever `addr`'s source holds.
    #[cfg(feature = "client")]
    pub(crate) fn peer_for_own_request(
        &mut self,
        addr: SocketAddr,
        now: Instant,
    ) -> Option<PeerKey> {
        self.peer_entry(addr, now, false)
    }

    fn peer_entry(&mut self, addr: SocketAddr, now: Instant, shared: bool) -> Option<PeerKey> {
        let first_mid = self.random_mid();
        if self.peers.is_full() && self.peers.lookup(&addr).is_none() {
            let room = if shared {
                self.make_room_for_peer(now, addr)
            } else {
                self.make_room_for_own_request(now)
            };
            if !room {
                self.stats.drop(DropCause::Overload);
                return None;
            }
        }
        let exchanges = &self.exchanges;
        let busy = |k| exchanges.is_busy(k);
        let key = self
            .peers
            .get_or_insert(addr, now, &self.config, first_mid, busy);
        if key.is_none() {
            self.stats.drop(DropCause::Overload);
        }
        key
    }

    /// A fresh random token not used by any outstanding request.
    #[cfg(feature = "client")]
    pub(crate) fn new_token(&mut self) -> Token {
        loop {
            let token = Token::from_u64(self.rng.next_u64(), self.config.token_length);
            if !self.exchanges.token_in_use(&token) {
                return token;
            }
        }
    }
}
