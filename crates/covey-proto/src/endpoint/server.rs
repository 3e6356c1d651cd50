//! The server role: incoming requests, deduplication, piggy-backed and separate responses,
//! 4.02 for unrecognised critical options, 5.03 under overload, multicast leisure and
//! error suppression.

use super::reliability::TransmissionOwner;
use super::{Endpoint, RespondError, TimerKind};
use crate::dedup::{DedupKey, DedupState};
use crate::event::{Event, IncomingId};
use crate::outbox::OutSource;
use crate::request::Response;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::wire::Outgoing;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{
    uint, CoapOption, Code, Message, MessageType, OptionNumber, ParseErrorKind, Token,
};

/// Where an incoming request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IncomingState {
    /// Waiting for the application's response.
    Waiting,
    /// Answered; the response waits for its leisure delay (multicast).
    DelayedResponse,
}

/// A request the application has not answered yet.
#[derive(Debug)]
pub(crate) struct IncomingExchange {
    pub remote: SocketAddr,
    pub message_id: u16,
    pub token: Token,
    pub confirmable: bool,
    pub multicast: bool,
    /// An empty ACK was sent: the response must be separate.
    pub acked: bool,
    pub state: IncomingState,
}

/// Everything needed to address a response to a request.
#[derive(Debug, Clone, Copy)]
struct ResponseTarget {
    remote: SocketAddr,
    message_id: u16,
    token: Token,
    confirmable: bool,
    acked: bool,
}

impl Endpoint {
    /// Answers an incoming request: piggy-backed in the ACK while the request is still
    /// unacknowledged, otherwise as a separate response; after a leisure delay when it
    /// came by multicast (error responses to multicast requests are suppressed).
    pub fn respond(
        &mut self,
        now: Instant,
        id: IncomingId,
        response: &Response<'_>,
    ) -> Result<(), RespondError> {
        let key = id.0;
        let inc = self.incoming.get(key).ok_or(RespondError::UnknownRequest)?;
        if inc.state != IncomingState::Waiting {
            return Err(RespondError::UnknownRequest);
        }
        let target = ResponseTarget {
            remote: inc.remote,
            message_id: inc.message_id,
            token: inc.token,
            confirmable: inc.confirmable,
            acked: inc.acked,
        };
        if inc.multicast {
            return self.respond_to_multicast(now, key, target, response);
        }
        let result = self.send_response(now, target, response);
        self.remove_incoming(key);
        result
    }

    fn respond_to_multicast(
        &mut self,
        now: Instant,
        key: SlabKey,
        target: ResponseTarget,
        response: &Response<'_>,
    ) -> Result<(), RespondError> {
        if response.code.is_error() {
            self.stats.drop(DropCause::MulticastSuppressed);
            self.remove_incoming(key);
            return Ok(());
        }
        let Some(peer) = self.peer_for(target.remote, now) else {
            self.remove_incoming(key);
            return Err(RespondError::Overload);
        };
        let reuse = self.config.mid_reuse();
        let Some(mid) = self
            .peers
            .get_mut(peer)
            .and_then(|p| p.allocate_mid(now, reuse))
        else {
            self.remove_incoming(key);
            return Err(RespondError::Overload);
        };
        let m = Outgoing {
            message_type: MessageType::NonConfirmable,
            code: response.code,
            message_id: mid,
            token: target.token.as_bytes(),
            options: response.options,
            extra: &[],
            payload: response.payload,
        };
        if self.incoming_bufs[key.index()].encode(&m).is_err() {
            self.remove_incoming(key);
            return Err(RespondError::TooLarge);
        }
        if let Some(inc) = self.incoming.get_mut(key) {
            inc.state = IncomingState::DelayedResponse;
        }
        let leisure = self.config.transmission.default_leisure;
        let delay = leisure.mul_f64(self.rng.next_f64());
        self.set_timer_for(TimerKind::Incoming, key, now + delay);
        Ok(())
    }

    /// Sends a response now, choosing piggy-backed, separate CON or NON.
    fn send_response(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        response: &Response<'_>,
    ) -> Result<(), RespondError> {
        if target.confirmable && !target.acked {
            let m = Outgoing {
                message_type: MessageType::Acknowledgement,
                code: response.code,
                message_id: target.message_id,
                token: target.token.as_bytes(),
                options: response.options,
                extra: &[],
                payload: response.payload,
            };
            let reply = self
                .replies
                .encode(&m)
                .map_err(|_| RespondError::TooLarge)?;
            self.dedup.update(
                &(target.remote, target.message_id),
                DedupState::Replied(reply),
            );
            self.outbox.push(target.remote, OutSource::Reply(reply));
            return Ok(());
        }
        let peer = self
            .peer_for(target.remote, now)
            .ok_or(RespondError::Overload)?;
        let reuse = self.config.mid_reuse();
        let mid = self
            .peers
            .get_mut(peer)
            .and_then(|p| p.allocate_mid(now, reuse))
            .ok_or(RespondError::Overload)?;
        let message_type = if target.confirmable {
            MessageType::Confirmable
        } else {
            MessageType::NonConfirmable
        };
        let m = Outgoing {
            message_type,
            code: response.code,
            message_id: mid,
            token: target.token.as_bytes(),
            options: response.options,
            extra: &[],
            payload: response.payload,
        };
        if target.confirmable {
            let tx = self
                .reserve_transmission(peer, target.remote)
                .ok_or(RespondError::Overload)?;
            if self.transmission_bufs[tx.index()].encode(&m).is_err() {
                self.transmissions.remove(tx);
                return Err(RespondError::TooLarge);
            }
            let ongoing = self.peers.get(peer).map_or(0, |p| p.in_flight);
            self.start_transmission(
                now,
                peer,
                target.remote,
                mid,
                TransmissionOwner::SeparateResponse,
                tx,
                ongoing,
            );
        } else {
            let slot = self.outbox.take_slot().ok_or(RespondError::Overload)?;
            if self.outbox.buf_mut(slot).encode(&m).is_err() {
                self.outbox.release(slot);
                return Err(RespondError::TooLarge);
            }
            self.outbox.push(target.remote, OutSource::Slot(slot));
        }
        Ok(())
    }

    fn remove_incoming(&mut self, key: SlabKey) {
        if self.incoming.remove(key).is_some() {
            self.incoming_bufs[key.index()].clear();
            self.cancel_timer_for(TimerKind::Incoming, key);
        }
    }

    /// A delayed (multicast) response left through `poll_transmit`.
    pub(crate) fn finish_delayed_response(&mut self, key: SlabKey) {
        self.remove_incoming(key);
    }

    pub(crate) fn on_incoming_timeout(&mut self, now: Instant, index: usize) {
        let Some(key) = self.incoming.key_at(index) else {
            return;
        };
        let Some(inc) = self.incoming.get_mut(key) else {
            return;
        };
        match inc.state {
            IncomingState::DelayedResponse => {
                let remote = inc.remote;
                self.outbox.push(remote, OutSource::Incoming(key));
            }
            IncomingState::Waiting if inc.confirmable && !inc.acked => {
                // The application is slow: acknowledge now, respond separately later.
                inc.acked = true;
                let (remote, mid) = (inc.remote, inc.message_id);
                self.send_empty(remote, MessageType::Acknowledgement, mid, true);
                self.dedup.update(&(remote, mid), DedupState::EmptyAcked);
                self.stats.separate_responses += 1;
                let expiry = self.config.response_timeout;
                self.set_timer_for(TimerKind::Incoming, key, now + expiry);
            }
            IncomingState::Waiting => {
                // Never answered: forget it so the slot can serve others.
                let (remote, mid) = (inc.remote, inc.message_id);
                self.dedup.update(&(remote, mid), DedupState::Ignore);
                self.remove_incoming(key);
            }
        }
    }

    /// Sends an empty ACK or RST; with `cache`, remembers it for duplicates.
    pub(crate) fn send_empty(
        &mut self,
        remote: SocketAddr,
        message_type: MessageType,
        mid: u16,
        cache: bool,
    ) -> Option<crate::reply_cache::ReplyRef> {
        let m = Outgoing {
            message_type,
            code: Code::EMPTY,
            message_id: mid,
            token: &[],
            options: &[],
            extra: &[],
            payload: &[],
        };
        if cache {
            let reply = self.replies.encode(&m).ok()?;
            self.outbox.push(remote, OutSource::Reply(reply));
            Some(reply)
        } else {
            let slot = self.outbox.take_slot()?;
            if self.outbox.buf_mut(slot).encode(&m).is_ok() {
                self.outbox.push(remote, OutSource::Slot(slot));
            } else {
                self.outbox.release(slot);
            }
            None
        }
    }

    /// A request arrived (CON or NON, already known not to be a duplicate).
    pub(crate) fn handle_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        multicast: bool,
        message: &Message<'_>,
        datagram: &[u8],
        dedup_key: DedupKey,
        fingerprint: u64,
    ) {
        let confirmable = message.message_type() == MessageType::Confirmable;
        if multicast && confirmable {
            // RFC 7252 §8.1: multicast requests are NON; a CON by multicast is ignored.
            self.stats.drop(DropCause::FormatError);
            return;
        }
        let lifetime = if confirmable {
            self.config.transmission.exchange_lifetime()
        } else {
            self.config.transmission.non_lifetime()
        };
        let target = ResponseTarget {
            remote,
            message_id: message.message_id(),
            token: message.token(),
            confirmable,
            acked: false,
        };
        if let Some(number) = unrecognised_critical_option(message) {
            self.dedup.insert(
                now,
                dedup_key,
                fingerprint,
                DedupState::Ignore,
                now + lifetime,
            );
            if multicast {
                self.stats.drop(DropCause::MulticastSuppressed);
                return;
            }
            if !confirmable {
                // RFC 7252 §5.4.1: a NON with an unrecognised critical option is rejected.
                self.send_empty(remote, MessageType::Reset, message.message_id(), false);
                return;
            }
            let mut diagnostic = DiagnosticText::new();
            let _ = core::fmt::write(
                &mut diagnostic,
                format_args!("unrecognised critical option {}", number.0),
            );
            let _ = self.send_response(
                now,
                target,
                &Response::with_payload(Code::BAD_OPTION, diagnostic.as_bytes()),
            );
            return;
        }
        let inserted = self.incoming.insert(IncomingExchange {
            remote,
            message_id: message.message_id(),
            token: message.token(),
            confirmable,
            multicast,
            acked: false,
            state: IncomingState::Waiting,
        });
        let Ok(key) = inserted else {
            self.stats.drop(DropCause::Overload);
            if multicast {
                return;
            }
            self.dedup.insert(
                now,
                dedup_key,
                fingerprint,
                DedupState::Ignore,
                now + lifetime,
            );
            let mut age = [0u8; 4];
            let max_age = uint::encode(self.config.overload_max_age, &mut age);
            let options = [CoapOption {
                number: OptionNumber::MAX_AGE,
                value: max_age,
            }];
            let busy = Response {
                code: Code::SERVICE_UNAVAILABLE,
                options: &options,
                payload: b"server busy",
            };
            let _ = self.send_response(now, target, &busy);
            return;
        };
        self.incoming_bufs[key.index()].copy_from(datagram);
        let state = if confirmable {
            DedupState::Processing(IncomingId(key))
        } else {
            DedupState::Ignore
        };
        self.dedup
            .insert(now, dedup_key, fingerprint, state, now + lifetime);
        let wait = if confirmable {
            self.config.piggyback_window
        } else {
            self.config.response_timeout
        };
        self.set_timer_for(TimerKind::Incoming, key, now + wait);
        if !self.push_event(Event::Request(IncomingId(key))) {
            self.remove_incoming(key);
        }
    }

    /// A duplicate of a request seen before: answer as the first time, never call the
    /// application again.
    pub(crate) fn handle_duplicate_request(
        &mut self,
        remote: SocketAddr,
        message: &Message<'_>,
        state: DedupState,
    ) {
        self.stats.duplicates += 1;
        if message.message_type() != MessageType::Confirmable {
            return;
        }
        match state {
            DedupState::Replied(reply) => {
                if self.replies.get(reply).is_some() {
                    self.outbox.push(remote, OutSource::Reply(reply));
                }
            }
            DedupState::EmptyAcked => {
                self.send_empty(
                    remote,
                    MessageType::Acknowledgement,
                    message.message_id(),
                    false,
                );
            }
            DedupState::Processing(_) | DedupState::Ignore => {}
        }
    }
}

/// The first critical option the engine and registry do not recognise (unknown number,
/// or a known one out of its length bounds), if any.
fn unrecognised_critical_option(message: &Message<'_>) -> Option<OptionNumber> {
    if let Some(o) = message
        .options()
        .find(|o| o.number.is_critical() && !o.number.is_known())
    {
        return Some(o.number);
    }
    match message.validate_options() {
        Err(e) => match e.kind {
            ParseErrorKind::OptionLengthOutOfBounds { number, .. }
            | ParseErrorKind::OptionRepeated { number }
                if number.is_critical() =>
            {
                Some(number)
            }
            _ => None,
        },
        Ok(()) => None,
    }
}

/// A short diagnostic payload built without allocating.
struct DiagnosticText {
    buf: [u8; 64],
    len: usize,
}

impl DiagnosticText {
    fn new() -> DiagnosticText {
        DiagnosticText {
            buf: [0; 64],
            len: 0,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl core::fmt::Write for DiagnosticText {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = (self.len + s.len()).min(self.buf.len());
        let n = end - self.len;
        self.buf[self.len..end].copy_from_slice(&s.as_bytes()[..n]);
        self.len = end;
        Ok(())
    }
}
