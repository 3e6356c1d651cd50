//! The client role: starting requests (MID allocation, NSTART admission), transmitting them,
//! and ending them by cancellation, timeout, RST or an unreachable peer.

use crate::endpoint::{Endpoint, RequestError, TimerKind};
use crate::event::{AppId, Event, Failure, RequestId};
use crate::exchange::client_exchange::{
    BlockTransfer, ClientExchange, ExchangeKind, ExchangeState, ObserveState,
};
use crate::exchange::client_table::InsertError;
use crate::message::outbox::OutSource;
use crate::message::peer::PeerKey;
use crate::message::transmission::{Transmission, TransmissionEnd, TransmissionOwner};
use crate::message::wire::reencode;
use crate::message::wire::Outgoing;
use crate::request::{Request, RequestParams};
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::DatagramBuf;
use crate::storage::slab::SlabKey;
use crate::{Duration, Instant};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::net::SocketAddr;
use covey_core::{uint, Block, CoapOption, Code, Message, MessageType, OptionNumber, Token};

/// Extra state a new exchange starts with.
#[derive(Debug, Default)]
pub(crate) struct ExchangeSetup {
    pub(crate) kind: ExchangeKind,
    pub(crate) multicast: bool,
    pub(crate) observe: Option<ObserveState>,
    pub(crate) transfer: Option<Box<BlockTransfer>>,
    /// The local socket to send from, when the caller named one.
    pub(crate) source: Option<SocketAddr>,
    /// The App whose exchange this is.
    pub(crate) owner: AppId,
    /// The OSCORE context (index) that protects each of its requests.
    #[cfg(feature = "oscore")]
    pub(crate) oscore: Option<usize>,
    /// EDHOC message_3 for its first message to carry (RFC 9668 §3.2).
    #[cfg(feature = "oscore")]
    pub(crate) edhoc_message_3: Option<Vec<u8>>,
}

impl Endpoint {
    /// Starts a request to `remote`; the response arrives as [`Event::Response`] or the
    /// failure as [`Event::Failed`]. A payload larger than one block is uploaded with
    /// Block1, a Block2 response is fetched to the end, an Observe 0 option registers an
    /// observation, and a group address makes a multicast request.
    pub fn send_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
    ) -> Result<RequestId, RequestError> {
        self.start_request(now, remote, request, params, ExchangeSetup::default())
    }

    /// [`Self::send_request`] with the setup `base` gives (its OSCORE context).
    pub(crate) fn start_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
        base: ExchangeSetup,
    ) -> Result<RequestId, RequestError> {
        if remote.ip().is_multicast() && params.confirmable {
            return Err(RequestError::ConfirmableMulticast);
        }
        let token = match params.token {
            Some(t) if self.exchanges.token_in_use(&t) => return Err(RequestError::TokenInUse),
            Some(t) => t,
            None => self.new_token(),
        };
        let message_type = if params.confirmable {
            MessageType::Confirmable
        } else {
            MessageType::NonConfirmable
        };
        let upload = request.payload.len() > self.config.block_size();
        if request.payload.len() > self.config.max_body_size {
            return Err(RequestError::TooLarge);
        }
        let kept_echo = match request
            .options
            .iter()
            .any(|o| o.number == OptionNumber::ECHO)
        {
            true => None,
            false => self.kept_echoes.take(remote),
        };
        let echo = kept_echo.as_ref().map(|e| CoapOption {
            number: OptionNumber::ECHO,
            value: e.value(),
        });
        let template = Outgoing {
            message_type,
            code: request.method,
            message_id: 0,
            token: token.as_bytes(),
            options: request.options,
            extra: echo.as_slice(),
            payload: if upload { &[] } else { request.payload },
        };
        let observe = request
            .options
            .iter()
            .any(|o| o.number == OptionNumber::OBSERVE && uint::decode(o.value) == Some(0));
        let early_block2 = request
            .options
            .iter()
            .find(|o| o.number == OptionNumber::BLOCK2)
            .and_then(|o| Block::decode(o.value).ok());
        let transfer = (upload || early_block2.is_some()).then(|| {
            Box::new(BlockTransfer {
                upload: if upload {
                    request.payload.to_vec()
                } else {
                    Vec::new()
                },
                // The validated block_szx is 0 to 6: the first block always exists (it
                // cannot fall to `None`, which would send the request without its body).
                upload_block: upload.then_some(Block {
                    num: 0,
                    more: true,
                    szx: self.config.block_szx,
                }),
                download_block: early_block2,
                ..BlockTransfer::default()
            })
        });
        let setup = ExchangeSetup {
            kind: ExchangeKind::Request,
            multicast: remote.ip().is_multicast(),
            observe: observe.then_some(ObserveState { freshest: None }),
            transfer,
            source: params.source,
            owner: params.owner,
            #[cfg(feature = "oscore")]
            oscore: base.oscore,
            #[cfg(feature = "oscore")]
            edhoc_message_3: base.edhoc_message_3,
        };
        #[cfg(not(feature = "oscore"))]
        let ExchangeSetup { .. } = base;
        self.create_exchange(now, remote, &template, setup)
    }

    /// Ends an observation politely: a GET with Observe 1 and the same token
    /// (RFC 7641 §3.6). Returns the id of that deregistration request.
    pub fn cancel_observation(
        &mut self,
        now: Instant,
        id: RequestId,
    ) -> Result<RequestId, RequestError> {
        let Some(ex) = self.exchanges.get(id.0) else {
            return Err(RequestError::UnknownRequest);
        };
        let (remote, token, confirmable, owner) = (ex.remote, ex.token, ex.confirmable, ex.owner);
        // A protected observation is cancelled by a request protected alike.
        let setup = ExchangeSetup {
            #[cfg(feature = "oscore")]
            oscore: ex.oscore.as_ref().map(|p| p.context),
            ..ExchangeSetup::default()
        };
        let template = self.exchanges.template(id.0);
        let mut copy = DatagramBuf::default();
        let extra = [CoapOption {
            number: OptionNumber::OBSERVE,
            value: &[1],
        }];
        let payload = Message::parse(template).map(|m| m.payload()).unwrap_or(&[]);
        reencode(
            template,
            0,
            &[OptionNumber::OBSERVE],
            &extra,
            payload,
            &mut copy,
            &mut self.pool,
        )
        .map_err(|_| RequestError::TooLarge)?;
        self.finish_exchange(now, id.0);
        let message = Message::parse(copy.as_slice()).map_err(|_| RequestError::TooLarge)?;
        let options: Vec<CoapOption<'_>> = message.options().collect();
        let request = Request {
            method: message.code(),
            options: &options,
            payload: message.payload(),
        };
        let params = RequestParams {
            confirmable,
            token: Some(token),
            source: None,
            owner,
        };
        self.start_request(now, remote, &request, params, setup)
    }

    /// Sends a CoAP ping (an empty CON); the peer's RST arrives as [`Event::Pong`].
    pub fn ping(&mut self, now: Instant, remote: SocketAddr) -> Result<RequestId, RequestError> {
        let template = Outgoing {
            message_type: MessageType::Confirmable,
            code: Code::EMPTY,
            message_id: 0,
            token: &[],
            options: &[],
            extra: &[],
            payload: &[],
        };
        let setup = ExchangeSetup {
            kind: ExchangeKind::Ping,
            ..ExchangeSetup::default()
        };
        self.create_exchange(now, remote, &template, setup)
    }

    /// Abandons an outstanding request: no more retransmissions and no events for it.
    /// Returns false if it had already ended.
    pub fn cancel(&mut self, now: Instant, id: RequestId) -> bool {
        self.finish_exchange(now, id.0).is_some()
    }

    /// Every outstanding request to `remote` fails with [`Failure::Unreachable`].
    pub(crate) fn fail_requests_to(&mut self, now: Instant, remote: SocketAddr) {
        for index in 0..self.exchanges.capacity() {
            let Some(key) = self.exchanges.key_at(index) else {
                continue;
            };
            if self.exchanges.get(key).is_some_and(|e| e.remote == remote) {
                self.fail_exchange(now, key, Failure::Unreachable);
            }
        }
    }

    /// Number of outstanding requests (queued ones included).
    pub fn outstanding_requests(&self) -> usize {
        self.exchanges.len()
    }

    pub(crate) fn create_exchange(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        template: &Outgoing<'_>,
        setup: ExchangeSetup,
    ) -> Result<RequestId, RequestError> {
        let token = Token::new(template.token).unwrap_or_default();
        let confirmable = template.message_type == MessageType::Confirmable;
        let kind = setup.kind;
        let peer = self
            .peer_for_own_request(remote, now)
            .ok_or(RequestError::Overload)?;
        if let Some(source) = setup.source {
            let local = self.local_id(Some(source));
            self.peers.set_local(peer, local);
        }
        let inserted = self.exchanges.insert(
            ClientExchange {
                remote,
                peer,
                token,
                confirmable,
                kind,
                state: ExchangeState::Queued,
                next_queued: None,
                counted: false,
                retransmissions: 0,
                multicast: setup.multicast,
                observe: setup.observe,
                transfer: setup.transfer,
                echo_retries: 0,
                owner: setup.owner,
                #[cfg(feature = "oscore")]
                oscore: setup.oscore.map(|context| {
                    crate::exchange::client_exchange::ProtectedExchange {
                        context,
                        request: None,
                        notifications: covey_oscore::NotificationNumber::new(),
                        outer: None,
                        edhoc_message_3: setup.edhoc_message_3,
                    }
                }),
            },
            template,
            &mut self.pool,
        );
        let key = inserted.map_err(|e| match e {
            InsertError::Full => RequestError::Overload,
            InsertError::TooLarge => RequestError::TooLarge,
        })?;
        let nstart = self.config.transmission.nstart;
        let max_queued = self.config.max_queued_per_peer;
        if self.peers.addr(peer).is_none() {
            self.exchanges.discard(key);
            return Err(RequestError::Overload);
        }
        let start_now = self.exchanges.may_start(peer, nstart);
        if !start_now && self.exchanges.queued(peer) >= max_queued {
            self.exchanges.discard(key);
            return Err(RequestError::Overload);
        }
        self.peers.hold(peer);
        self.peers.touch(peer, now);
        self.exchanges.index_token(key);
        if start_now {
            self.begin_exchange(now, key);
        } else {
            self.exchanges.enqueue(peer, key);
        }
        Ok(RequestId(key))
    }

    /// Starts queued exchanges while the peer has free NSTART slots.
    pub(crate) fn start_queued(&mut self, now: Instant, peer: PeerKey) {
        let Some(outer) = self.exchanges.start_starting(peer) else {
            return;
        };
        let nstart = self.config.transmission.nstart;
        while let Some(head) = self.exchanges.next_to_start(peer, nstart) {
            self.begin_exchange(now, head);
        }
        self.exchanges.stop_starting(outer);
    }

    /// Sends the first transmission of a queued exchange, taking an NSTART slot.
    pub(crate) fn begin_exchange(&mut self, now: Instant, key: SlabKey) {
        self.transmit_exchange(now, key, true);
    }

    /// Sends the exchange's next request message (the first one, or the next block of a
    /// block-wise transfer) with a fresh message ID.
    pub(crate) fn transmit_exchange(&mut self, now: Instant, key: SlabKey, first: bool) {
        let reuse = self.lifetimes.mid_reuse;
        let Some(ex) = self.exchanges.get(key) else {
            return;
        };
        let (peer, remote, confirmable, kind, multicast) =
            (ex.peer, ex.remote, ex.confirmable, ex.kind, ex.multicast);
        if self.peers.addr(peer).is_none() {
            return;
        }
        if let Some(at) = self.peers.probe_wait(peer, now) {
            // PROBING_RATE: an unresponsive peer gets at most its byte budget.
            if let Some(ex) = self.exchanges.get_mut(key) {
                ex.state = ExchangeState::Queued;
            }
            self.set_timer_for(TimerKind::Exchange, key, at);
            return;
        }
        let Some(mid) = self.peers.allocate_mid(peer, now, reuse) else {
            // Every message ID of the next block is still within its reuse interval, which
            // may last EXCHANGE_LIFETIME: the request fails now rather than wait unseen
            // past the time any exchange may take (as the server's own messages do).
            self.stats.mid_exhausted += 1;
            self.fail_exchange(now, key, Failure::MessageIdsExhausted);
            return;
        };
        let ongoing = self.exchanges.in_flight(peer);
        if first {
            self.exchanges.count(peer, key);
        }
        let owner = match kind {
            ExchangeKind::Request => TransmissionOwner::Request(key),
            ExchangeKind::Ping => TransmissionOwner::Ping(key),
        };
        if confirmable {
            let Some(tx) = self.transmissions.reserve(peer, remote) else {
                self.fail_exchange(now, key, Failure::Overload);
                return;
            };
            let encoded = match self.exchanges.get(key) {
                Some(ex) => encode_request(
                    ex,
                    self.exchanges.template(key),
                    mid,
                    self.transmissions.buf_mut(tx),
                    &mut self.pool,
                ),
                None => false,
            };
            #[cfg(feature = "oscore")]
            if encoded && !self.protect_for_exchange(key, OutSource::Transmission(tx)) {
                self.transmissions.unreserve(tx);
                self.fail_exchange(now, key, Failure::ProtectionFailed);
                return;
            }
            if !encoded {
                self.transmissions.unreserve(tx);
                self.fail_exchange(now, key, Failure::Overload);
                return;
            }
            if let Some(ex) = self.exchanges.get_mut(key) {
                ex.state = ExchangeState::AwaitingAck(tx);
            }
            let size = self.transmissions.bytes(tx).len();
            self.charge_probe(now, peer, size);
            self.start_transmission(now, tx, mid, owner, ongoing);
        } else {
            let Some(slot) = self.messages.take_slot() else {
                self.fail_exchange(now, key, Failure::Overload);
                return;
            };
            let encoded = match self.exchanges.get(key) {
                Some(ex) => encode_request(
                    ex,
                    self.exchanges.template(key),
                    mid,
                    self.messages.slot_mut(slot),
                    &mut self.pool,
                ),
                None => false,
            };
            #[cfg(feature = "oscore")]
            if encoded && !self.protect_for_exchange(key, OutSource::Slot(slot)) {
                self.messages.release_slot(slot, &mut self.pool);
                self.fail_exchange(now, key, Failure::ProtectionFailed);
                return;
            }
            if !encoded {
                self.messages.release_slot(slot, &mut self.pool);
                self.fail_exchange(now, key, Failure::Overload);
                return;
            }
            let size = self.messages.slot(slot).len();
            self.charge_probe(now, peer, size);
            self.queue_datagram(remote, OutSource::Slot(slot));
            if let Some(ex) = self.exchanges.get_mut(key) {
                ex.state = ExchangeState::AwaitingResponse;
            }
            let timeout = if multicast {
                self.config.multicast_window()
            } else {
                self.config.response_timeout
            };
            self.set_timer_for(TimerKind::Exchange, key, now + timeout);
        }
    }

    /// Spends `bytes` of an unresponsive peer's PROBING_RATE budget.
    fn charge_probe(&mut self, now: Instant, peer: PeerKey, bytes: usize) {
        let rate = u64::from(self.config.transmission.probing_rate);
        let wait = Duration::from_nanos((bytes as u64).saturating_mul(1_000_000_000) / rate);
        self.peers.charge_probe(peer, now, wait);
    }

    /// Removes an exchange, frees its NSTART slot and starts the next queued one.
    pub(crate) fn finish_exchange(&mut self, now: Instant, key: SlabKey) -> Option<ClientExchange> {
        let ex = self.exchanges.remove(key, &mut self.pool)?;
        self.cancel_timer_for(TimerKind::Exchange, key);
        if let ExchangeState::AwaitingAck(tx) = ex.state {
            self.end_transmission(now, tx, TransmissionEnd::TimedOut);
        }
        self.peers.release(ex.peer);
        if ex.counted {
            self.exchanges.uncount(ex.peer);
        }
        self.start_queued(now, ex.peer);
        Some(ex)
    }

    pub(crate) fn fail_exchange(&mut self, now: Instant, key: SlabKey, failure: Failure) {
        if let Some(ex) = self.finish_exchange(now, key) {
            self.stats.failed += 1;
            self.push_event_for(
                ex.owner,
                Event::Failed {
                    id: RequestId(key),
                    failure,
                },
            );
        }
    }

    /// What happens to request exchange `key` when its CON transmission `t` ends.
    pub(crate) fn on_request_transmission_ended(
        &mut self,
        now: Instant,
        key: SlabKey,
        t: Transmission,
        end: TransmissionEnd,
    ) {
        match end {
            TransmissionEnd::Acknowledged => {
                let timeout = self.config.response_timeout;
                if let Some(ex) = self.exchanges.get_mut(key) {
                    ex.state = ExchangeState::AwaitingResponse;
                    ex.retransmissions = t.retransmissions;
                    self.set_timer_for(TimerKind::Exchange, key, now + timeout);
                }
            }
            TransmissionEnd::Reset => self.fail_after_transmission(now, key, Failure::Reset),
            TransmissionEnd::TimedOut => {
                if let Some(peer) = self.exchanges.get(key).map(|e| e.peer) {
                    self.peers.mark_unresponsive(peer, now);
                }
                self.fail_after_transmission(now, key, Failure::Timeout)
            }
        }
    }

    /// What happens to exchange `key` when its ping (an empty CON) ends: a pong, or a
    /// timeout.
    pub(crate) fn on_ping_ended(&mut self, now: Instant, key: SlabKey, end: TransmissionEnd) {
        if let Some(ex) = self.exchanges.get_mut(key) {
            ex.state = ExchangeState::AwaitingResponse;
        }
        match end {
            TransmissionEnd::TimedOut => self.fail_exchange(now, key, Failure::Timeout),
            _ => {
                if let Some(ex) = self.finish_exchange(now, key) {
                    self.push_event_for(ex.owner, Event::Pong(RequestId(key)));
                }
            }
        }
    }

    fn fail_after_transmission(&mut self, now: Instant, key: SlabKey, failure: Failure) {
        // The transmission is already gone; do not end it twice.
        if let Some(ex) = self.exchanges.get_mut(key) {
            ex.state = ExchangeState::AwaitingResponse;
        }
        self.fail_exchange(now, key, failure);
    }

    pub(crate) fn on_exchange_timeout(&mut self, now: Instant, index: usize) {
        let Some(key) = self.exchanges.key_at(index) else {
            return;
        };
        let Some(ex) = self.exchanges.get(key) else {
            return;
        };
        match ex.state {
            ExchangeState::Queued => {
                let first = !ex.counted;
                self.transmit_exchange(now, key, first)
            }
            ExchangeState::AwaitingResponse if ex.multicast => {
                // The multicast window closed: no further responses are expected.
                if let Some(ex) = self.finish_exchange(now, key) {
                    self.push_event_for(ex.owner, Event::Finished(RequestId(key)));
                }
            }
            ExchangeState::AwaitingResponse => {
                self.peers.mark_unresponsive(ex.peer, now);
                self.fail_exchange(now, key, Failure::Timeout)
            }
            ExchangeState::AwaitingAck(_) | ExchangeState::Observing => {}
        }
    }
}

/// Encodes the exchange's next request into `out` with message ID `mid`: the stored
/// request, plus the Block1/Block2 options and upload slice of a transfer.
fn encode_request(
    ex: &ClientExchange,
    template: &[u8],
    mid: u16,
    out: &mut DatagramBuf,
    pool: &mut BufferPool,
) -> bool {
    let Some(t) = ex.transfer.as_deref() else {
        let ok = out.copy_from(template, pool);
        out.set_message_id(mid);
        return ok;
    };
    let (mut b1, mut b2, mut s1) = ([0u8; 4], [0u8; 4], [0u8; 4]);
    let placeholder = CoapOption {
        number: OptionNumber::BLOCK1,
        value: &[],
    };
    let mut extra = [placeholder; 3];
    let mut n = 0;
    let mut payload: &[u8] = Message::parse(template).map(|m| m.payload()).unwrap_or(&[]);
    if let Some(b) = t.upload_block {
        let start = b.offset().min(t.upload.len());
        let end = (start + b.size()).min(t.upload.len());
        payload = &t.upload[start..end];
        let block = Block {
            more: end < t.upload.len(),
            ..b
        };
        extra[n] = CoapOption {
            number: OptionNumber::BLOCK1,
            value: block.encode(&mut b1),
        };
        n += 1;
        if b.num == 0 {
            extra[n] = CoapOption {
                number: OptionNumber::SIZE1,
                value: uint::encode(t.upload.len() as u32, &mut s1),
            };
            n += 1;
        }
    }
    if let Some(b) = t.download_block {
        extra[n] = CoapOption {
            number: OptionNumber::BLOCK2,
            value: b.encode(&mut b2),
        };
        n += 1;
    }
    let skip = [
        OptionNumber::BLOCK1,
        OptionNumber::BLOCK2,
        OptionNumber::SIZE1,
    ];
    reencode(template, mid, &skip, &extra[..n], payload, out, pool).is_ok()
}
