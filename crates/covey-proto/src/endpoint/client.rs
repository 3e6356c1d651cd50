//! The client role: starting requests (NSTART queueing, MID allocation), matching responses,
//! timeouts and cancellation.

use super::reliability::{Transmission, TransmissionEnd, TransmissionOwner};
use super::{Endpoint, HeldResponse, RequestError, TimerKind};
use crate::event::{Event, Failure, RequestId, ResponseKey};
use crate::outbox::OutSource;
use crate::peer::PeerKey;
use crate::request::{Request, RequestParams};
use crate::stats::{DropCause, TRACKED_ATTEMPTS};
use crate::storage::slab::SlabKey;
use crate::wire::Outgoing;
use crate::{Duration, Instant};
use core::net::SocketAddr;
use covey_core::{Code, MessageType, Token};

/// Where a client exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExchangeState {
    /// Waiting for an NSTART slot or a reusable message ID.
    Queued,
    /// A CON sent, waiting for its ACK (the transmission key).
    AwaitingAck(SlabKey),
    /// ACKed (a separate response will follow) or sent as NON.
    AwaitingResponse,
}

/// What a client exchange is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExchangeKind {
    Request,
    Ping,
}

/// An outgoing request and its progress.
#[derive(Debug)]
pub(crate) struct ClientExchange {
    pub remote: SocketAddr,
    pub peer: PeerKey,
    pub token: Token,
    pub confirmable: bool,
    pub kind: ExchangeKind,
    pub state: ExchangeState,
    /// Next exchange in the peer's NSTART queue.
    pub next_queued: Option<SlabKey>,
    /// Whether this exchange holds one of the peer's NSTART slots.
    pub counted: bool,
    /// Retransmissions its CON needed (for stats).
    pub retransmissions: u8,
}

/// Time to wait before retrying when no message ID may be reused yet.
const MID_RETRY: Duration = Duration::from_millis(100);

impl Endpoint {
    /// Starts a request to `remote`; the response arrives as [`Event::Response`] or the
    /// failure as [`Event::Failed`].
    pub fn send_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
    ) -> Result<RequestId, RequestError> {
        if remote.ip().is_multicast() && params.confirmable {
            return Err(RequestError::ConfirmableMulticast);
        }
        let token = match params.token {
            Some(t) if self.tokens.contains_key(&t) => return Err(RequestError::TokenInUse),
            Some(t) => t,
            None => self.new_token(),
        };
        let message_type = if params.confirmable {
            MessageType::Confirmable
        } else {
            MessageType::NonConfirmable
        };
        let template = Outgoing {
            message_type,
            code: request.method,
            message_id: 0,
            token: token.as_bytes(),
            options: request.options,
            extra: &[],
            payload: request.payload,
        };
        self.create_exchange(
            now,
            remote,
            token,
            params.confirmable,
            ExchangeKind::Request,
            &template,
        )
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
        self.create_exchange(
            now,
            remote,
            Token::EMPTY,
            true,
            ExchangeKind::Ping,
            &template,
        )
    }

    /// Abandons an outstanding request: no more retransmissions and no events for it.
    /// Returns false if it had already ended.
    pub fn cancel(&mut self, now: Instant, id: RequestId) -> bool {
        self.finish_exchange(now, id.0).is_some()
    }

    /// Number of outstanding requests (queued ones included).
    pub fn outstanding_requests(&self) -> usize {
        self.exchanges.len()
    }

    fn create_exchange(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        token: Token,
        confirmable: bool,
        kind: ExchangeKind,
        template: &Outgoing<'_>,
    ) -> Result<RequestId, RequestError> {
        let peer = self.peer_for(remote, now).ok_or(RequestError::Overload)?;
        let key = self
            .exchanges
            .insert(ClientExchange {
                remote,
                peer,
                token,
                confirmable,
                kind,
                state: ExchangeState::Queued,
                next_queued: None,
                counted: false,
                retransmissions: 0,
            })
            .map_err(|_| RequestError::Overload)?;
        if self.exchange_bufs[key.index()].encode(template).is_err() {
            self.exchanges.remove(key);
            return Err(RequestError::TooLarge);
        }
        let nstart = self.config.transmission.nstart;
        let max_queued = self.config.max_queued_per_peer;
        let Some(p) = self.peers.get_mut(peer) else {
            self.exchanges.remove(key);
            return Err(RequestError::Overload);
        };
        let start_now = p.in_flight < nstart && p.queue_head.is_none();
        if !start_now && p.queue_len >= max_queued {
            self.exchanges.remove(key);
            return Err(RequestError::Overload);
        }
        p.refs += 1;
        p.last_used = now;
        if kind == ExchangeKind::Request {
            self.tokens.insert(token, key);
        }
        if start_now {
            self.begin_exchange(now, key);
        } else {
            self.enqueue(peer, key);
        }
        Ok(RequestId(key))
    }

    fn enqueue(&mut self, peer: PeerKey, key: SlabKey) {
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        let tail = p.queue_tail.replace(key);
        if tail.is_none() {
            p.queue_head = Some(key);
        }
        p.queue_len += 1;
        if let Some(t) = tail.and_then(|t| self.exchanges.get_mut(t)) {
            t.next_queued = Some(key);
        }
    }

    /// Sends the first transmission of a queued exchange.
    fn begin_exchange(&mut self, now: Instant, key: SlabKey) {
        let reuse = self.config.mid_reuse();
        let Some(ex) = self.exchanges.get(key) else {
            return;
        };
        let (peer, remote, confirmable, kind) = (ex.peer, ex.remote, ex.confirmable, ex.kind);
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        let Some(mid) = p.allocate_mid(now, reuse) else {
            // Every message ID of the next block is still within its reuse interval.
            self.stats.mid_exhausted += 1;
            self.set_timer_for(TimerKind::Exchange, key, now + MID_RETRY);
            return;
        };
        let ongoing = p.in_flight;
        p.in_flight += 1;
        if let Some(ex) = self.exchanges.get_mut(key) {
            ex.counted = true;
        }
        self.exchange_bufs[key.index()].set_message_id(mid);
        if confirmable {
            let Some(tx) = self.reserve_transmission(peer, remote) else {
                self.fail_exchange(now, key, Failure::Overload);
                return;
            };
            let (template, tx_buf) = (
                &self.exchange_bufs[key.index()],
                &mut self.transmission_bufs[tx.index()],
            );
            tx_buf.copy_from(template.as_slice());
            let owner = match kind {
                ExchangeKind::Request => TransmissionOwner::Request(key),
                ExchangeKind::Ping => TransmissionOwner::Ping(key),
            };
            if let Some(ex) = self.exchanges.get_mut(key) {
                ex.state = ExchangeState::AwaitingAck(tx);
            }
            self.start_transmission(now, peer, remote, mid, owner, tx, ongoing);
        } else {
            let Some(slot) = self.outbox.take_slot() else {
                self.fail_exchange(now, key, Failure::Overload);
                return;
            };
            let ok = self
                .outbox
                .buf_mut(slot)
                .copy_from(self.exchange_bufs[key.index()].as_slice());
            if !ok {
                self.outbox.release(slot);
                self.fail_exchange(now, key, Failure::Overload);
                return;
            }
            self.outbox.push(remote, OutSource::Slot(slot));
            if let Some(ex) = self.exchanges.get_mut(key) {
                ex.state = ExchangeState::AwaitingResponse;
            }
            let timeout = self.config.response_timeout;
            self.set_timer_for(TimerKind::Exchange, key, now + timeout);
        }
    }

    /// Removes an exchange, frees its NSTART slot and starts the next queued one.
    pub(crate) fn finish_exchange(&mut self, now: Instant, key: SlabKey) -> Option<ClientExchange> {
        let ex = self.exchanges.remove(key)?;
        self.exchange_bufs[key.index()].clear();
        if ex.kind == ExchangeKind::Request && self.tokens.get(&ex.token) == Some(&key) {
            self.tokens.remove(&ex.token);
        }
        self.cancel_timer_for(TimerKind::Exchange, key);
        if let ExchangeState::AwaitingAck(tx) = ex.state {
            self.end_transmission(now, tx, TransmissionEnd::TimedOut);
        }
        if ex.state == ExchangeState::Queued && !ex.counted {
            self.unlink_queued(ex.peer, key, ex.next_queued);
        }
        if let Some(p) = self.peers.get_mut(ex.peer) {
            p.refs = p.refs.saturating_sub(1);
            if ex.counted {
                p.in_flight = p.in_flight.saturating_sub(1);
            }
        }
        self.start_queued(now, ex.peer);
        Some(ex)
    }

    fn unlink_queued(&mut self, peer: PeerKey, key: SlabKey, next: Option<SlabKey>) {
        let Some(p) = self.peers.get(peer) else {
            return;
        };
        let mut prev: Option<SlabKey> = None;
        let mut cursor = p.queue_head;
        while let Some(c) = cursor {
            if c == key {
                break;
            }
            prev = Some(c);
            cursor = self.exchanges.get(c).and_then(|e| e.next_queued);
        }
        if cursor != Some(key) {
            return; // not in the queue (waiting for a message ID)
        }
        match prev {
            Some(pk) => {
                if let Some(pe) = self.exchanges.get_mut(pk) {
                    pe.next_queued = next;
                }
            }
            None => {
                if let Some(p) = self.peers.get_mut(peer) {
                    p.queue_head = next;
                }
            }
        }
        if let Some(p) = self.peers.get_mut(peer) {
            if p.queue_tail == Some(key) {
                p.queue_tail = prev;
            }
            p.queue_len = p.queue_len.saturating_sub(1);
        }
    }

    /// Starts queued exchanges while the peer has free NSTART slots.
    fn start_queued(&mut self, now: Instant, peer: PeerKey) {
        let nstart = self.config.transmission.nstart;
        loop {
            let Some(p) = self.peers.get_mut(peer) else {
                return;
            };
            if p.in_flight >= nstart {
                return;
            }
            let Some(head) = p.queue_head else {
                return;
            };
            let next = self.exchanges.get(head).and_then(|e| e.next_queued);
            if let Some(p) = self.peers.get_mut(peer) {
                p.queue_head = next;
                if next.is_none() {
                    p.queue_tail = None;
                }
                p.queue_len = p.queue_len.saturating_sub(1);
            }
            if let Some(e) = self.exchanges.get_mut(head) {
                e.next_queued = None;
            }
            self.begin_exchange(now, head);
        }
    }

    pub(crate) fn fail_exchange(&mut self, now: Instant, key: SlabKey, failure: Failure) {
        if self.finish_exchange(now, key).is_some() {
            self.stats.failed += 1;
            self.push_event(Event::Failed {
                id: RequestId(key),
                failure,
            });
        }
    }

    /// What happens to a client exchange when its CON transmission ends.
    pub(crate) fn on_transmission_ended(
        &mut self,
        now: Instant,
        t: Transmission,
        end: TransmissionEnd,
    ) {
        match t.owner {
            TransmissionOwner::Request(key) => match end {
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
                    self.fail_after_transmission(now, key, Failure::Timeout)
                }
            },
            TransmissionOwner::Ping(key) => {
                if let Some(ex) = self.exchanges.get_mut(key) {
                    ex.state = ExchangeState::AwaitingResponse;
                }
                match end {
                    TransmissionEnd::TimedOut => self.fail_exchange(now, key, Failure::Timeout),
                    _ => {
                        if self.finish_exchange(now, key).is_some() {
                            self.push_event(Event::Pong(RequestId(key)));
                        }
                    }
                }
            }
            TransmissionOwner::SeparateResponse => {}
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
        match self.exchanges.get(key).map(|e| e.state) {
            Some(ExchangeState::Queued) => self.begin_exchange(now, key),
            Some(ExchangeState::AwaitingResponse) => self.fail_exchange(now, key, Failure::Timeout),
            _ => {}
        }
    }

    /// Hands a matched response to the application and ends the exchange.
    pub(crate) fn deliver_response(
        &mut self,
        now: Instant,
        key: SlabKey,
        source: SocketAddr,
        datagram: &[u8],
    ) {
        let Ok(held) = self.held.insert(HeldResponse { source }) else {
            self.stats.drop(DropCause::Overload);
            return;
        };
        self.held_bufs[held.index()].copy_from(datagram);
        let retransmissions = match self.finish_exchange(now, key) {
            Some(ex) => ex.retransmissions,
            None => {
                self.held.remove(held);
                return;
            }
        };
        self.stats.completed_after[(retransmissions as usize).min(TRACKED_ATTEMPTS - 1)] += 1;
        if !self.push_event(Event::Response {
            id: RequestId(key),
            key: ResponseKey(held),
            last: true,
        }) {
            self.held.remove(held);
        }
    }
}
