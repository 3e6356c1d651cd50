//! Answering incoming requests (RFC 7252 §5.2): piggy-backed while the ACK is still due,
//! separate otherwise, with the engine's Observe and Block options added, and once per group
//! member after a leisure delay for multicast requests.

use crate::block::slice_block2;
#[cfg(feature = "address-validation")]
use crate::endpoint::address_check::PING_LEN;
use crate::endpoint::{Endpoint, RespondError};
use crate::event::IncomingId;
use crate::exchange::incoming_exchange::{IncomingState, ObserveRequest, ResponseTarget};
use crate::message::dedup::DedupState;
use crate::message::layer::OutFailure;
use crate::message::outbox::OutSource;
use crate::message::reply_cache::ReplyRef;
use crate::message::transmission::TransmissionOwner;
use crate::message::wire::Outgoing;
use crate::request::Response;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;
use covey_core::{uint, Block, CoapOption, Code, MessageType, OptionNumber};

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
        let from = self.local_id(local);
        let outer = self.messages.set_replying_from(from);
        let result = self.respond_to(now, id, response, extra);
        self.messages.set_replying_from(outer);
        result
    }

    /// The Block2 slice of `payload` this endpoint sends for a request that asked for
    /// `requested`, with its preferred block size; see [`slice_block2`].
    pub(crate) fn slice_response<'p>(
        &self,
        payload: &'p [u8],
        requested: Option<Block>,
    ) -> Result<Option<(Block, &'p [u8])>, ()> {
        let single = self.config.single_message_payload.unwrap_or(0);
        slice_block2(payload, requested, self.config.block_szx, single)
    }

    pub(crate) fn respond_to(
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
        let mut target = inc.target();
        let (multicast, block1, block2, keeps_body) = (
            inc.group().is_some(),
            inc.block1,
            inc.block2,
            inc.keeps_body(),
        );
        let registration = inc.observe == ObserveRequest::Register
            && extra.iter().any(|o| o.number == OptionNumber::OBSERVE);
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
        let refusable = !multicast && self.is_safe_request(key);
        let token = target.token;
        let choice = self.block2_to_send(
            now,
            key,
            target.remote,
            response,
            options.as_slice(),
            target.token.as_bytes(),
            block2,
        );
        #[cfg(feature = "address-validation")]
        if choice.block != block2 && extra.is_empty() {
            // Too large for what the sender may still get: it waits for a ping's answer,
            // unless the ping would leave no room for a cut that fits without it.
            let left = self.remaining_budget(now, target.remote);
            let fallback = self.block2_within(
                key,
                left.saturating_sub(PING_LEN),
                response,
                options.as_slice(),
                token.as_bytes(),
                block2,
            );
            if (fallback.fits || !choice.fits) && self.hold_for_address_check(now, key, response) {
                return Ok(());
            }
        }
        let block2 = choice.block;
        let echo;
        if choice.echo {
            echo = self.echo_value_for(now, target.remote);
            self.stats.echo_challenges += 1;
            options.push(OptionNumber::ECHO, &echo);
        }
        let mut payload = response.payload;
        let mut code = response.code;
        let mut cache_body = false;
        // Any response may be sliced (RFC 7959 §2.2): large diagnostics and partial results too.
        match self.slice_response(response.payload, block2) {
            Ok(Some((b, chunk))) => {
                cache_body = b.more && keeps_body;
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
        let response_options = if code == response.code {
            response.options
        } else {
            &[]
        };
        let m = Outgoing {
            message_type: MessageType::NonConfirmable,
            code,
            message_id: 0,
            token: token.as_bytes(),
            options: response_options,
            extra: options.as_slice(),
            payload,
        };
        if refusable && self.exceeds_amplification_budget(now, target.remote, &m) {
            self.challenge_with_echo(now, target);
            self.remove_incoming(key);
            return Ok(());
        }
        if cache_body {
            #[cfg(feature = "block2-cache")]
            self.cache_body(now, key, response);
        }
        #[cfg(feature = "multicast")]
        if multicast {
            return self.respond_to_multicast(now, key, target, m);
        }
        if self.confirms_to_verify(now, key, &target, &m, registration) {
            target = self.answer_separately(key, target);
        }
        let result = self.send_response(now, target, m);
        // A response too large to encode leaves the request open for another answer.
        if result != Err(RespondError::TooLarge) {
            self.remove_incoming(key);
        }
        result
    }

    /// Sends a response now, choosing piggy-backed, separate CON or NON; `m`'s type and
    /// message ID are filled in here.
    pub(crate) fn send_response(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        mut m: Outgoing<'_>,
    ) -> Result<(), RespondError> {
        // A response to an OSCORE request leaves protected, whatever answers it.
        #[cfg(feature = "oscore")]
        if let Some(binding) = target.oscore {
            return self.send_protected(now, target, &m, binding);
        }
        if target.confirmable && !target.acked {
            m.message_type = MessageType::Acknowledgement;
            m.message_id = target.message_id;
            let source = self.messages.encode_out(&mut self.pool, &m, true);
            let source = source.map_err(respond_error)?;
            // Without `reply-cache` it is sent once: a duplicate finds no reply then, and a
            // safe request is served again.
            let reply = match source {
                OutSource::Reply(reply) => reply,
                _ => ReplyRef::UNKEPT,
            };
            self.messages
                .update_remembered(target.dedup, DedupState::Replied(reply));
            self.queue_datagram(target.remote, source);
            return Ok(());
        }
        let peer = self
            .peer_for(target.remote, now)
            .ok_or(RespondError::Overload)?;
        let reuse = self.lifetimes.mid_reuse;
        m.message_id = self
            .peers
            .allocate_mid(peer, now, reuse)
            .ok_or(RespondError::Overload)?;
        if target.confirmable {
            m.message_type = MessageType::Confirmable;
            let tx = self
                .transmissions
                .reserve(peer, target.remote)
                .ok_or(RespondError::Overload)?;
            if self
                .transmissions
                .buf_mut(tx)
                .encode(&m, &mut self.pool)
                .is_err()
            {
                self.transmissions.unreserve(tx);
                return Err(RespondError::TooLarge);
            }
            let ongoing = self.exchanges.in_flight(peer);
            self.start_transmission(
                now,
                tx,
                m.message_id,
                TransmissionOwner::SeparateResponse,
                ongoing,
            );
        } else {
            m.message_type = MessageType::NonConfirmable;
            let source = self.messages.encode_out(&mut self.pool, &m, false);
            self.queue_datagram(target.remote, source.map_err(respond_error)?);
        }
        Ok(())
    }

    /// Makes the response to incoming request `key` a CON of its own: a CON request is
    /// acknowledged now with an empty ACK (RFC 7252 §5.2.2), and a NON one gets a CON
    /// response, which RFC 7252 §5.2.3 lets any client receive.
    fn answer_separately(&mut self, key: SlabKey, mut target: ResponseTarget) -> ResponseTarget {
        if target.confirmable && !target.acked {
            self.send_empty(
                target.remote,
                MessageType::Acknowledgement,
                target.message_id,
                true,
            );
            self.messages
                .update_remembered(target.dedup, DedupState::EmptyAcked);
            if let Some(inc) = self.incoming.get_mut(key) {
                inc.acked = true;
            }
        }
        target.confirmable = true;
        target.acked = true;
        target
    }

    /// Answers a request directly from the engine (errors, 2.31 Continue), never calling
    /// the application. To an unverified address the diagnostic payload is shortened to
    /// what its budget still allows, so the code itself still arrives.
    pub(crate) fn reply_now(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        code: Code,
        options: &[CoapOption<'_>],
        payload: &[u8],
    ) {
        let mut m = Outgoing {
            message_type: MessageType::NonConfirmable,
            code,
            message_id: 0,
            token: target.token.as_bytes(),
            options,
            extra: &[],
            payload: &[],
        };
        let remaining = self.remaining_budget(now, target.remote);
        m.payload = match remaining {
            usize::MAX => payload,
            _ if payload.is_empty() => payload,
            _ => {
                // The payload marker takes one byte of what is left after the head.
                let room = remaining.saturating_sub(self.encoded_len(&m) + 1);
                &payload[..payload.len().min(room)]
            }
        };
        let _ = self.send_response(now, target, m);
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
}

/// What a response that could not be put out is to the application.
fn respond_error(failure: OutFailure) -> RespondError {
    match failure {
        OutFailure::NoRoom => RespondError::Overload,
        OutFailure::TooLarge => RespondError::TooLarge,
    }
}

#[cfg(all(test, not(feature = "block2-cache")))]
mod tests {
    use crate::{Config, Endpoint, Event, Instant, LocalAddr, Response};
    use covey_core::{Block, Code, Message, MessageEncoder, MessageType, OptionNumber};

    /// A CON GET of /big asking for Block2 `block`, in `buf`; its length.
    fn get_block(buf: &mut [u8], message_id: u16, block: Block) -> usize {
        let (token, mut value) = (message_id.to_be_bytes(), [0u8; 4]);
        let get = (MessageType::Confirmable, Code::GET);
        let mut m = MessageEncoder::new(buf, get.0, get.1, message_id, &token).unwrap();
        m.option(OptionNumber::URI_PATH, b"big").unwrap();
        m.option(OptionNumber::BLOCK2, block.encode(&mut value))
            .unwrap();
        m.finish()
    }

    #[test]
    fn without_the_body_cache_each_block_is_sliced_from_a_fresh_answer() {
        let mut ep = Endpoint::new(Config::mote(), 7).unwrap();
        let (remote, now) = ("[2001:db8::1]:5683".parse().unwrap(), Instant::from_secs(1));
        let mut buf = [0u8; 600];
        // The representation changes between blocks: each block comes from the answer the
        // application gives for its own request, as RFC 7959 §2.4 lets a server do.
        let bodies: [&[u8]; 3] = [&[b'a'; 40], &[b'b'; 40], &[b'c'; 40]];
        let mut got = alloc::vec::Vec::new();
        for (num, body) in (0..3).zip(bodies) {
            let asked = Block::new(num, false, 0).unwrap();
            let n = get_block(&mut buf, num as u16 + 1, asked);
            ep.handle_datagram(now, remote, LocalAddr::UNICAST, &buf[..n]);
            let Some(Event::Request(id)) = ep.poll_event() else {
                panic!("block {num} is not asked of the application");
            };
            ep.respond(now, id, &Response::with_payload(Code::CONTENT, body))
                .unwrap();
            let t = ep.poll_transmit(now, &mut buf).unwrap();
            let reply = Message::parse(&buf[..t.size]).unwrap();
            let block = reply.block2().unwrap();
            assert_eq!((block.num, block.more, block.size()), (num, num < 2, 16));
            let size2 = reply.options_of(OptionNumber::SIZE2).next();
            assert_eq!(size2.is_some(), num == 0, "Size2 in block 0 only");
            got.push(reply.payload().to_vec());
        }
        assert_eq!(got, [&[b'a'; 16][..], &[b'b'; 16], &[b'c'; 8]]);
    }
}
