//! The server's side of Echo against amplification (RFC 9175 §2.4 item 3): a request echoing
//! a fresh value verifies its sender's address; until then a response larger than the
//! amplification budget becomes 4.01 Unauthorized with an Echo option, an Observe
//! registration is challenged the same way before any notification flows, and a response
//! to a multicast request is cut to a Block2 block that fits.

use crate::endpoint::Endpoint;
use crate::exchange::incoming_exchange::ResponseTarget;
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

    /// For a response to a multicast request from an unverified sender that would exceed the
    /// amplification budget: the first Block2 block, of the largest size that fits (at
    /// least 16 bytes), to send instead of the whole payload.
    pub(crate) fn bounded_multicast_block(
        &mut self,
        now: Instant,
        key: SlabKey,
        remote: SocketAddr,
        response: &Response<'_>,
        extra: &[CoapOption<'_>],
        token: &[u8],
    ) -> Option<Block> {
        if self.is_address_verified(now, remote) {
            return None;
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
        if overhead + response.payload.len() <= budget {
            return None;
        }
        let largest = self.config.block_szx.min(6);
        let szx = (0..=largest)
            .rev()
            .find(|szx| (16usize << szx) + overhead <= budget)
            .unwrap_or(0);
        Block::new(0, false, szx).ok()
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
