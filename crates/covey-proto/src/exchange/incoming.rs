//! The server role: incoming requests, deduplication, piggy-backed and separate responses,
//! 4.02 for unrecognised critical options, 5.03 under overload, block-wise slicing and
//! reassembly, multicast leisure and error suppression.

use crate::endpoint::{Endpoint, LocalAddr, RespondError, TimerKind};
use crate::event::AppId;
use crate::event::{Event, IncomingId};
use crate::exchange::incoming_exchange::ObserveRequest;
use crate::exchange::incoming_exchange::{IncomingExchange, IncomingState, ResponseTarget};
use crate::message::dedup::{DedupKey, DedupState};
use crate::message::option_rules::RequestOptions;
use crate::message::outbox::OutSource;
use crate::message::transmission::TransmissionOwner;
use crate::message::wire::Outgoing;
use crate::request::Response;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{uint, Block, CoapOption, Code, Message, MessageType, OptionNumber};

/// Engine-added options of one response (Observe, Block1, Block2, Size2) plus the caller's.
struct ExtraOptions<'a> {
    options: [CoapOption<'a>; 8],
    len: usize,
}

impl<'a> ExtraOptions<'a> {
    fn new() -> ExtraOptions<'a> {
        ExtraOptions {
            options: [CoapOption {
                number: OptionNumber::OBSERVE,
                value: &[],
            }; 8],
            len: 0,
        }
    }

    fn push(&mut self, number: OptionNumber, value: &'a [u8]) {
        if self.len < self.options.len() {
            self.options[self.len] = CoapOption { number, value };
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[CoapOption<'a>] {
        &self.options[..self.len]
    }
}

impl Endpoint {
    /// Answers an incoming request: piggy-backed in the ACK while the request is still
    /// unacknowledged, otherwise as a separate response; after a leisure delay when it
    /// came by multicast (error responses to multicast requests are suppressed). A payload
    /// larger than one block is sent block-wise.
    pub fn respond(
        &mut self,
        now: Instant,
        id: IncomingId,
        response: &Response<'_>,
    ) -> Result<(), RespondError> {
        self.respond_with_extra(now, id, response, &[])
    }

    pub(crate) fn respond_with_extra(
        &mut self,
        now: Instant,
        id: IncomingId,
        response: &Response<'_>,
        extra: &[CoapOption<'_>],
    ) -> Result<(), RespondError> {
        let local = self.incoming.get(id.0).and_then(|inc| inc.local);
        let outer = self.replying_from;
        self.replying_from = self.local_id(local);
        let result = self.respond_to(now, id, response, extra);
        self.replying_from = outer;
        result
    }

    fn respond_to(
        &mut self,
        now: Instant,
        id: IncomingId,
        response: &Response<'_>,
        extra: &[CoapOption<'_>],
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
            dedup: inc.dedup,
        };
        let (multicast, block1, block2, from_cache) =
            (inc.group.is_some(), inc.block1, inc.block2, inc.from_cache);
        if multicast && response.code.is_error() {
            self.stats.drop(DropCause::MulticastSuppressed);
            self.remove_incoming(key);
            return Ok(());
        }
        let mut options = ExtraOptions::new();
        for o in extra {
            options.push(o.number, o.value);
        }
        let (mut b1, mut b2, mut s2) = ([0u8; 4], [0u8; 4], [0u8; 4]);
        if let Some(b) = block1.filter(|_| response.code.is_success()) {
            options.push(
                OptionNumber::BLOCK1,
                Block { more: false, ..b }.encode(&mut b1),
            );
        }
        let mut payload = response.payload;
        let mut code = response.code;
        let mut cache_body = false;
        // Any response may be sliced (RFC 7959 §2.2): large diagnostics and partial results too.
        match self.slice_response(response.payload, block2) {
            Ok(Some((b, chunk))) => {
                cache_body = b.more && !from_cache;
                options.push(OptionNumber::BLOCK2, b.encode(&mut b2));
                if b.num == 0 {
                    options.push(
                        OptionNumber::SIZE2,
                        uint::encode(response.payload.len() as u32, &mut s2),
                    );
                }
                payload = chunk;
            }
            Ok(None) => {}
            Err(()) => {
                code = Code::BAD_REQUEST;
                payload = b"block out of range";
            }
        }
        if cache_body {
            self.cache_body(now, key, target.remote, response);
        }
        let response_options = if code == response.code {
            response.options
        } else {
            &[]
        };
        let m = Outgoing {
            message_type: MessageType::NonConfirmable,
            code,
            message_id: 0,
            token: target.token.as_bytes(),
            options: response_options,
            extra: options.as_slice(),
            payload,
        };
        if multicast {
            return self.respond_to_multicast(now, key, target, m);
        }
        let result = self.send_response(now, target, m);
        // A response too large to encode leaves the request open for another answer.
        if result != Err(RespondError::TooLarge) {
            self.remove_incoming(key);
        }
        result
    }

    fn respond_to_multicast(
        &mut self,
        now: Instant,
        key: SlabKey,
        target: ResponseTarget,
        mut m: Outgoing<'_>,
    ) -> Result<(), RespondError> {
        let Some(peer) = self.peer_for(target.remote, now) else {
            self.remove_incoming(key);
            return Err(RespondError::Overload);
        };
        let reuse = self.lifetimes.mid_reuse;
        let Some(mid) = self
            .peers
            .get_mut(peer)
            .and_then(|p| p.allocate_mid(now, reuse))
        else {
            self.remove_incoming(key);
            return Err(RespondError::Overload);
        };
        m.message_id = mid;
        if self
            .incoming_bufs
            .slot(key.index())
            .encode(&m, &mut self.pool)
            .is_err()
        {
            return Err(RespondError::TooLarge);
        }
        if let Some(inc) = self.incoming.get_mut(key) {
            inc.state = IncomingState::DelayedResponse;
        }
        // RFC 7252 §8.2: answer at a random instant within the leisure period.
        let size = self.incoming_bufs.get(key.index()).len();
        let leisure = self.config.leisure_for(size);
        let delay = crate::transmission_parameters::TransmissionParameters {
            ack_random_factor: 2.0,
            ..self.config.transmission
        }
        .dither(leisure, self.rng.next_f64())
        .saturating_sub(leisure);
        self.set_timer_for(TimerKind::Incoming, key, now + delay);
        Ok(())
    }

    /// Sends a response now, choosing piggy-backed, separate CON or NON; `m`'s type and
    /// message ID are filled in here.
    fn send_response(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        mut m: Outgoing<'_>,
    ) -> Result<(), RespondError> {
        if target.confirmable && !target.acked {
            m.message_type = MessageType::Acknowledgement;
            m.message_id = target.message_id;
            let reply = self
                .replies
                .encode(&m, &mut self.pool)
                .map_err(|_| RespondError::TooLarge)?;
            self.dedup.update(target.dedup, DedupState::Replied(reply));
            self.queue_datagram(target.remote, OutSource::Reply(reply));
            return Ok(());
        }
        let peer = self
            .peer_for(target.remote, now)
            .ok_or(RespondError::Overload)?;
        let reuse = self.lifetimes.mid_reuse;
        m.message_id = self
            .peers
            .get_mut(peer)
            .and_then(|p| p.allocate_mid(now, reuse))
            .ok_or(RespondError::Overload)?;
        if target.confirmable {
            m.message_type = MessageType::Confirmable;
            let tx = self
                .reserve_transmission(peer, target.remote)
                .ok_or(RespondError::Overload)?;
            if self
                .transmission_bufs
                .slot(tx.index())
                .encode(&m, &mut self.pool)
                .is_err()
            {
                self.transmissions.remove(tx);
                return Err(RespondError::TooLarge);
            }
            let ongoing = self.peers.get(peer).map_or(0, |p| p.in_flight);
            self.start_transmission(
                now,
                tx,
                m.message_id,
                TransmissionOwner::SeparateResponse,
                ongoing,
            );
        } else {
            m.message_type = MessageType::NonConfirmable;
            let slot = self.outbox.take_slot().ok_or(RespondError::Overload)?;
            if self
                .outbox
                .buf_mut(slot)
                .encode(&m, &mut self.pool)
                .is_err()
            {
                self.outbox.release(slot, &mut self.pool);
                return Err(RespondError::TooLarge);
            }
            self.queue_datagram(target.remote, OutSource::Slot(slot));
        }
        Ok(())
    }

    /// Answers a request directly from the engine (errors, 2.31 Continue), never calling
    /// the application.
    pub(crate) fn reply_now(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        code: Code,
        options: &[CoapOption<'_>],
        payload: &[u8],
    ) {
        let m = Outgoing {
            message_type: MessageType::NonConfirmable,
            code,
            message_id: 0,
            token: target.token.as_bytes(),
            options,
            extra: &[],
            payload,
        };
        let _ = self.send_response(now, target, m);
    }

    fn remove_incoming(&mut self, key: SlabKey) {
        if self.incoming.remove(key).is_some() {
            self.incoming_bufs.release(key.index(), &mut self.pool);
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
        // The empty ACK leaves from the socket the request came to.
        let local = self.incoming.get(key).and_then(|inc| inc.local);
        self.replying_from = self.local_id(local);
        self.incoming_timeout(now, key);
        self.replying_from = crate::message::outbox::LocalId::default();
    }

    fn incoming_timeout(&mut self, now: Instant, key: crate::storage::slab::SlabKey) {
        let Some(inc) = self.incoming.get_mut(key) else {
            return;
        };
        match inc.state {
            IncomingState::DelayedResponse => {
                let remote = inc.remote;
                self.queue_datagram(remote, OutSource::Incoming(key));
            }
            IncomingState::Waiting if inc.confirmable && !inc.acked => {
                // The application is slow: acknowledge now, respond separately later.
                inc.acked = true;
                let (remote, mid, dedup) = (inc.remote, inc.message_id, inc.dedup);
                self.send_empty(remote, MessageType::Acknowledgement, mid, true);
                self.dedup.update(dedup, DedupState::EmptyAcked);
                self.stats.separate_responses += 1;
                let expiry = self.config.response_timeout;
                self.set_timer_for(TimerKind::Incoming, key, now + expiry);
            }
            IncomingState::Waiting => {
                // Never answered: forget it so the slot can serve others.
                let dedup = inc.dedup;
                self.dedup.update(dedup, DedupState::Ignore);
                self.remove_incoming(key);
            }
        }
    }

    /// A request arrived (CON or NON, already known not to be a duplicate).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn handle_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        local_addr: LocalAddr,
        message: &Message<'_>,
        datagram: &[u8],
        dedup_key: DedupKey,
        fingerprint: u64,
    ) {
        let (group, local) = (local_addr.multicast_group, local_addr.socket);
        let multicast = group.is_some();
        let confirmable = message.message_type() == MessageType::Confirmable;
        if multicast && confirmable {
            // RFC 7252 §8.1: multicast requests are NON; a CON by multicast is ignored.
            self.stats.drop(DropCause::FormatError);
            return;
        }
        let lifetime = if confirmable {
            self.lifetimes.exchange
        } else {
            self.lifetimes.non
        };
        // Until the application answers, duplicates of a CON wait for its response.
        let dedup = self.dedup.insert(
            now,
            dedup_key,
            fingerprint,
            DedupState::Ignore,
            now + lifetime,
        );
        let target = ResponseTarget {
            remote,
            message_id: message.message_id(),
            token: message.token(),
            confirmable,
            acked: false,
            dedup,
        };
        let scan = RequestOptions::scan(message);
        if let Some(number) = scan.unrecognised_critical {
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
            self.reply_now(now, target, Code::BAD_OPTION, &[], diagnostic.as_bytes());
            return;
        }
        let block2 = match scan.block2.map(Block::decode) {
            Some(Err(_)) => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::BAD_REQUEST,
                    b"invalid Block2 option",
                );
                return;
            }
            Some(Ok(b)) => Some(b),
            None => None,
        };
        let mut body = None;
        let mut block1 = None;
        match scan.block1.map(Block::decode) {
            Some(Err(_)) => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::BAD_REQUEST,
                    b"invalid Block1 option",
                );
                return;
            }
            Some(Ok(b)) => {
                let size1 = scan.size1.and_then(uint::decode);
                let Some(whole) = self.receive_block1(now, target, multicast, message, b, size1)
                else {
                    return;
                };
                body = Some(whole);
                block1 = Some(b);
            }
            None => {}
        }
        let observe = match scan.observe.and_then(uint::decode) {
            Some(0) if matches!(message.code(), Code::GET | Code::FETCH) => {
                ObserveRequest::Register
            }
            Some(1) => ObserveRequest::Deregister,
            _ => ObserveRequest::None,
        };
        let inserted = self.incoming.insert(IncomingExchange {
            remote,
            message_id: message.message_id(),
            token: message.token(),
            confirmable,
            group,
            local,
            dedup,
            from_cache: false,
            acked: false,
            state: IncomingState::Waiting,
            body,
            block1,
            block2,
            observe,
        });
        let Ok(key) = inserted else {
            self.stats.drop(DropCause::Overload);
            if multicast {
                return;
            }
            let mut age = [0u8; 4];
            let options = [CoapOption {
                number: OptionNumber::MAX_AGE,
                value: uint::encode(self.config.overload_max_age, &mut age),
            }];
            self.reply_now(
                now,
                target,
                Code::SERVICE_UNAVAILABLE,
                &options,
                b"server busy",
            );
            return;
        };
        self.incoming_bufs
            .slot(key.index())
            .copy_from(datagram, &mut self.pool);
        if confirmable {
            self.dedup
                .update(dedup, DedupState::Processing(IncomingId(key)));
        }
        let wait = if confirmable {
            self.config.piggyback_window
        } else {
            self.config.response_timeout
        };
        self.set_timer_for(TimerKind::Incoming, key, now + wait);
        if let Some(b) = block2.filter(|b| b.num > 0 && block1.is_none()) {
            let transfer = self.uploads.key(remote, message);
            if self.serve_cached_block(now, IncomingId(key), transfer, b) {
                return;
            }
        }
        if !self.push_event_for(AppId(0), Event::Request(IncomingId(key))) {
            self.remove_incoming(key);
        }
    }

    pub(crate) fn reply_error(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        multicast: bool,
        code: Code,
        diagnostic: &[u8],
    ) {
        if multicast {
            self.stats.drop(DropCause::MulticastSuppressed);
            return;
        }
        self.reply_now(now, target, code, &[], diagnostic);
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
                    self.queue_datagram(remote, OutSource::Reply(reply));
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
