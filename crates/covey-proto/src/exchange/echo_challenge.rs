//! The server's side of Echo against amplification (RFC 9175 §2.4 item 3): a request echoing
//! a fresh value verifies its sender's address; until then a response larger than the
//! amplification budget becomes 4.01 Unauthorized with an Echo option, an Observe
//! registration is challenged the same way before any notification flows, and a response
//! that cannot be refused (to a multicast request, or to an unsafe method already carried
//! out) is cut to a Block2 block that fits.

use crate::endpoint::Endpoint;
use crate::event::IncomingId;
use crate::exchange::incoming_exchange::{IncomingState, ResponseTarget};
use crate::message::wire::Outgoing;
use crate::request::Response;
use crate::storage::datagram_buf::DatagramBuf;
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{Block, CoapOption, Code, Message, MessageType, OptionNumber};

/// Bytes a Block2 (num 0) and a Size2 option add to a response at most, with the payload
/// marker.
const BLOCK_OPTIONS_BOUND: usize = 3 + 5 + 1;

impl Endpoint {
    /// Takes a request's Echo option in: a fresh value issued to `remote` verifies it.
    /// Returns whether `remote` may now be sent more than the amplification budget.
    pub(crate) fn take_echo(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        message: &Message<'_>,
    ) -> bool {
        let limit = &self.config.amplification;
        if !limit.enabled {
            return true;
        }
        let echoed = message
            .options()
            .find(|o| o.number == OptionNumber::ECHO)
            .is_some_and(|o| {
                self.address_verification
                    .is_fresh(now, remote, o.value, limit)
            });
        if echoed {
            self.address_verification.mark_verified(now, remote, limit);
            return true;
        }
        self.address_verification.is_verified(now, remote)
    }

    /// Whether `remote` may be sent more than the amplification budget.
    pub(crate) fn is_address_verified(&self, now: Instant, remote: SocketAddr) -> bool {
        !self.config.amplification.enabled || self.address_verification.is_verified(now, remote)
    }

    /// Answers request `id` with 4.01 Unauthorized and an Echo value when its sender's
    /// address is not verified (RFC 9175 §2.4), so an App can ask for verification before
    /// costly work whose answer may exceed the amplification budget (the engine would
    /// otherwise refuse that answer after the work). Returns whether it did; a multicast
    /// request is never challenged (its errors are suppressed).
    pub fn challenge_unverified(&mut self, now: Instant, id: IncomingId) -> bool {
        let Some(inc) = self.incoming.get(id.0) else {
            return false;
        };
        if inc.group.is_some()
            || inc.state != IncomingState::Waiting
            || self.is_address_verified(now, inc.remote)
        {
            return false;
        }
        let target = inc.target();
        let outer = self.replying_from;
        self.replying_from = self.local_id(inc.local);
        self.challenge_with_echo(now, target);
        self.replying_from = outer;
        self.remove_incoming(id.0);
        true
    }

    /// Answers a request with 4.01 Unauthorized and a fresh Echo value for its sender.
    pub(crate) fn challenge_with_echo(&mut self, now: Instant, target: ResponseTarget) {
        let value =
            self.address_verification
                .echo_value(now, target.remote, &self.config.amplification);
        let options = [CoapOption {
            number: OptionNumber::ECHO,
            value: &value,
        }];
        self.stats.echo_challenges += 1;
        self.reply_now(now, target, Code::UNAUTHORIZED, &options, &[]);
    }

    /// Whether response `m` to incoming request `key` is more than an unverified sender may
    /// get.
    pub(crate) fn exceeds_amplification_budget(
        &mut self,
        now: Instant,
        key: SlabKey,
        remote: SocketAddr,
        m: &Outgoing<'_>,
    ) -> bool {
        let budget = self.amplification_budget(key);
        if m.size_bound() <= budget || self.is_address_verified(now, remote) {
            return false;
        }
        self.encoded_len(m) > budget
    }

    /// The Block2 block to send for `requested`. What cannot be refused with 4.01 (a
    /// response to a multicast request, whose errors are suppressed, or to an unsafe method
    /// already carried out) is cut to an unverified sender's budget: the largest block size
    /// (at least 16 bytes) that fits, at the offset asked for.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn block2_to_send(
        &mut self,
        now: Instant,
        key: SlabKey,
        remote: SocketAddr,
        response: &Response<'_>,
        extra: &[CoapOption<'_>],
        token: &[u8],
        requested: Option<Block>,
    ) -> Option<Block> {
        let multicast = self
            .incoming
            .get(key)
            .is_some_and(|inc| inc.group.is_some());
        if (!multicast && self.is_safe_request(key)) || self.is_address_verified(now, remote) {
            return requested;
        }
        let budget = self.amplification_budget(key);
        let head = Outgoing {
            message_type: MessageType::NonConfirmable,
            code: response.code,
            message_id: 0,
            token,
            options: response.options,
            extra,
            payload: &[],
        };
        let overhead = self.encoded_len(&head) + BLOCK_OPTIONS_BOUND;
        let largest = requested.map_or(self.config.block_szx, |b| b.szx).min(6);
        let fit = (0..=largest)
            .rev()
            .find(|szx| (16usize << szx) + overhead <= budget)
            .unwrap_or(0);
        match requested {
            None if overhead + response.payload.len() <= budget => None,
            None => Block::new(0, false, fit).ok(),
            Some(b) if b.szx <= fit => Some(b),
            Some(b) => Block::new((b.offset() >> (4 + fit)) as u32, false, fit)
                .ok()
                .or(Some(b)),
        }
    }

    /// Whether incoming request `key` has a safe method (GET, FETCH: RFC 7252 §5.1,
    /// RFC 8132), which may be refused and repeated without effect.
    pub(crate) fn is_safe_request(&self, key: SlabKey) -> bool {
        Message::parse(self.incoming_bufs.get(key.index()))
            .is_ok_and(|m| matches!(m.code(), Code::GET | Code::FETCH))
    }

    /// The most an unverified sender may get for incoming request `key`.
    fn amplification_budget(&self, key: SlabKey) -> usize {
        let request_len = self.incoming_bufs.get(key.index()).len();
        self.config.amplification.budget(request_len)
    }

    /// The encoded size of `m`, through a pooled scratch buffer.
    fn encoded_len(&mut self, m: &Outgoing<'_>) -> usize {
        let mut scratch = DatagramBuf::default();
        let len = match scratch.encode(m, &mut self.pool) {
            Ok(()) => scratch.as_slice().len(),
            Err(_) => m.size_bound(),
        };
        scratch.release(&mut self.pool);
        len
    }
}
