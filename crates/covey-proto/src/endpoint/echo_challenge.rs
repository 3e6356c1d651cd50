//! The server's side of Echo against amplification (RFC 9175 §2.4 item 3): a request echoing
//! a fresh value verifies its sender's address. Until an address is verified it may be sent
//! only what its datagrams earned (see `address_budget`); a response that does not fit what
//! is left is cut to the largest Block2 block that does, carrying an Echo value when it came
//! by unicast and there is room, so a client that knows Echo is verified by its next request
//! and one that does not still gets the body block by block. A safe request whose answer
//! cannot be cut that small is refused with 4.01 Unauthorized and an Echo option. A response
//! that draws on earlier credit, and an Observe registration's, go as a CON when they fit,
//! so the client's ACK verifies the address (every client acknowledges a CON).

use crate::endpoint::Endpoint;
use crate::event::IncomingId;
use crate::exchange::address_validation::{EchoValue, ECHO_LEN};
use crate::exchange::incoming_exchange::{IncomingState, ResponseTarget};
use crate::message::wire::Outgoing;
use crate::request::Response;
use crate::storage::datagram_buf::DatagramBuf;
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{uint, Block, CoapOption, Code, Message, MessageType, OptionNumber};

/// Options of a response besides its own that a cut accounts for (the engine adds fewer).
const MAX_EXTRA: usize = 8;

/// The size of an Empty message (an empty ACK): the header alone.
const EMPTY_MESSAGE_LEN: usize = 4;

/// The Block2 block a response goes out with, and whether it was cut for an unverified
/// sender and so carries an Echo value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block2Choice {
    /// The block to send (None: the whole body in one message).
    pub block: Option<Block>,
    /// Whether an Echo value goes with it.
    pub echo: bool,
    /// Whether it fits the budget (a cut to the smallest block may still not); an address
    /// check is tried when it does not.
    #[cfg(feature = "address-validation")]
    pub fits: bool,
}

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
            .is_some_and(|o| self.address_validation.is_fresh_echo(now, remote, o.value));
        if echoed {
            self.address_validation.verify(now, remote);
            return true;
        }
        self.is_address_verified(now, remote)
    }

    /// Whether `remote` may be sent more than its amplification budget from the socket being
    /// replied from.
    pub(crate) fn is_address_verified(&self, now: Instant, remote: SocketAddr) -> bool {
        self.address_validation.is_unlimited(
            now,
            remote,
            self.local_addr(self.messages.replying_from()),
        )
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
        if inc.group().is_some()
            || inc.state != IncomingState::Waiting
            || self
                .address_validation
                .is_unlimited(now, inc.remote, inc.local)
        {
            return false;
        }
        let target = inc.target();
        let from = self.local_id(inc.local);
        let outer = self.messages.set_replying_from(from);
        self.challenge_with_echo(now, target);
        self.messages.set_replying_from(outer);
        self.remove_incoming(id.0);
        true
    }

    /// A fresh Echo value for `remote`.
    pub(crate) fn echo_value_for(&self, now: Instant, remote: SocketAddr) -> EchoValue {
        self.address_validation.echo_value(now, remote)
    }

    /// Answers a request with 4.01 Unauthorized and a fresh Echo value for its sender.
    pub(crate) fn challenge_with_echo(&mut self, now: Instant, target: ResponseTarget) {
        let value = self.echo_value_for(now, target.remote);
        let options = [CoapOption {
            number: OptionNumber::ECHO,
            value: &value,
        }];
        self.stats.echo_challenges += 1;
        self.reply_now(now, target, Code::UNAUTHORIZED, &options, &[]);
    }

    /// Whether response `m` is more than its unverified receiver may still get.
    pub(crate) fn exceeds_amplification_budget(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        m: &Outgoing<'_>,
    ) -> bool {
        let budget = self.remaining_budget(now, remote);
        m.size_bound() > budget && self.encoded_len(m) > budget
    }

    /// Whether response `m` to incoming request `key` goes as a CON so that its ACK verifies
    /// the unverified `target`: an Observe registration's answer (notifications follow, and
    /// an unverified observer gets nothing else), or one larger than its own request earned,
    /// when it fits the budget with the empty ACK a CON request then needs first (and, but
    /// for a registration, with room for one retransmission).
    pub(crate) fn confirms_to_verify(
        &mut self,
        now: Instant,
        key: SlabKey,
        target: &ResponseTarget,
        m: &Outgoing<'_>,
        registration: bool,
    ) -> bool {
        let remaining = self.remaining_budget(now, target.remote);
        if remaining == usize::MAX {
            return false;
        }
        // The bound saves encoding the common small answer a second time.
        if !registration && m.size_bound() <= self.request_share(key) {
            return false;
        }
        let len = self.encoded_len(m);
        if !registration && len <= self.request_share(key) {
            return false;
        }
        let ack = match target.confirmable && !target.acked {
            true => EMPTY_MESSAGE_LEN,
            false => 0,
        };
        let copies = if registration { 1 } else { 2 };
        ack + copies * len <= remaining
    }

    /// The Block2 block to send for `requested`. A response larger than what an unverified
    /// sender may still get is cut to the largest block size (at least 16 bytes) that fits,
    /// at the offset asked for; a unicast one makes room for an Echo value too when it can, so a
    /// client that echoes it is verified by its next request. A cut with no room for Echo
    /// still goes out, so a client that does not know Echo gets the body (later block
    /// requests are larger and so have room).
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
    ) -> Block2Choice {
        let budget = self.remaining_budget(now, remote);
        self.block2_within(key, budget, response, extra, token, requested)
    }

    /// [`block2_to_send`](Self::block2_to_send) for a sender that may still get `budget`
    /// bytes.
    pub(crate) fn block2_within(
        &mut self,
        key: SlabKey,
        budget: usize,
        response: &Response<'_>,
        extra: &[CoapOption<'_>],
        token: &[u8],
        requested: Option<Block>,
    ) -> Block2Choice {
        let uncut = Block2Choice {
            block: requested,
            echo: false,
            #[cfg(feature = "address-validation")]
            fits: true,
        };
        if budget == usize::MAX {
            return uncut;
        }
        let whole = Outgoing {
            message_type: MessageType::NonConfirmable,
            code: response.code,
            message_id: 0,
            token,
            options: response.options,
            extra,
            payload: response.payload,
        };
        if requested.is_none()
            && response.payload.len() <= self.config.block_size()
            && whole.size_bound() <= budget
        {
            // Fits for sure without encoding it to measure.
            return uncut;
        }
        let multicast = self
            .incoming
            .get(key)
            .is_some_and(|inc| inc.group().is_some());
        let overhead = self.cut_overhead(response, extra, token, requested, 0, false);
        let largest = requested.map_or(self.config.block_szx, |b| b.szx);
        let fit = |overhead: usize| {
            (0..=largest)
                .rev()
                .find(|szx| (16usize << szx) + overhead <= budget)
        };
        let fits_whole = match requested {
            // Small enough to go without block options: its exact size.
            None if response.payload.len() <= self.config.block_size() => {
                let marker = usize::from(!response.payload.is_empty());
                self.head_len(response, extra, token) + marker + response.payload.len() <= budget
            }
            // Sliced at the endpoint's own size, with block options.
            None => overhead + response.payload.len() <= budget,
            Some(b) => {
                let exact = self.cut_overhead(response, extra, token, requested, b.szx, false);
                b.size() + exact <= budget
            }
        };
        if fits_whole {
            return uncut;
        }
        let with_echo = (!multicast)
            .then(|| fit(self.cut_overhead(response, extra, token, requested, 0, true)))
            .flatten();
        let fitting = with_echo.or_else(|| fit(overhead));
        let szx = fitting.unwrap_or(0);
        let block = match requested {
            None => Block::new(0, false, szx).ok(),
            Some(b) => Block::new((b.offset() >> (4 + szx)) as u32, false, szx)
                .ok()
                .or(Some(b)),
        };
        Block2Choice {
            block,
            echo: with_echo.is_some(),
            #[cfg(feature = "address-validation")]
            fits: fitting.is_some(),
        }
    }

    /// The bytes of a cut response but for its payload: the message with `extra`, the
    /// Block2 option of size `szx` at the offset asked for (at size 0 its number, and so the
    /// option, is longest), Size2 on the first block, an Echo value when `echo`, and the
    /// payload marker.
    fn cut_overhead(
        &mut self,
        response: &Response<'_>,
        extra: &[CoapOption<'_>],
        token: &[u8],
        requested: Option<Block>,
        szx: u8,
        echo: bool,
    ) -> usize {
        const PLACEHOLDER: CoapOption<'static> = CoapOption {
            number: OptionNumber::ECHO,
            value: &[],
        };
        let mut options = [PLACEHOLDER; MAX_EXTRA + 3];
        let kept = extra.len().min(MAX_EXTRA);
        options[..kept].copy_from_slice(&extra[..kept]);
        let offset = requested.map_or(0, |b| b.offset());
        let (mut block, mut size) = ([0u8; 4], [0u8; 4]);
        let mut n = kept;
        if let Ok(b) = Block::new((offset >> (4 + u32::from(szx))) as u32, true, szx) {
            options[n] = CoapOption {
                number: OptionNumber::BLOCK2,
                value: b.encode(&mut block),
            };
            n += 1;
        }
        if offset == 0 {
            let total = u32::try_from(response.payload.len()).unwrap_or(u32::MAX);
            options[n] = CoapOption {
                number: OptionNumber::SIZE2,
                value: uint::encode(total, &mut size),
            };
            n += 1;
        }
        let value = [0u8; ECHO_LEN];
        if echo {
            options[n] = CoapOption {
                number: OptionNumber::ECHO,
                value: &value,
            };
            n += 1;
        }
        self.head_len(response, &options[..n], token) + 1
    }

    /// Whether incoming request `key` has a safe method (GET, FETCH: RFC 7252 §5.1,
    /// RFC 8132), which may be refused and repeated without effect.
    pub(crate) fn is_safe_request(&self, key: SlabKey) -> bool {
        Message::parse(self.incoming.bytes(key))
            .is_ok_and(|m| matches!(m.code(), Code::GET | Code::FETCH))
    }

    /// What incoming request `key` alone earned its unverified sender.
    fn request_share(&self, key: SlabKey) -> usize {
        let request_len = self.incoming.bytes(key).len();
        self.config.amplification.share_of(request_len)
    }

    /// The encoded size of `response` with `extra` options, without its payload.
    fn head_len(
        &mut self,
        response: &Response<'_>,
        extra: &[CoapOption<'_>],
        token: &[u8],
    ) -> usize {
        let head = Outgoing {
            message_type: MessageType::NonConfirmable,
            code: response.code,
            message_id: 0,
            token,
            options: response.options,
            extra,
            payload: &[],
        };
        self.encoded_len(&head)
    }

    /// The encoded size of `m`, through a pooled scratch buffer.
    pub(crate) fn encoded_len(&mut self, m: &Outgoing<'_>) -> usize {
        let mut scratch = DatagramBuf::default();
        let len = match scratch.encode(m, &mut self.pool) {
            Ok(()) => scratch.as_slice().len(),
            Err(_) => m.size_bound(),
        };
        scratch.release(&mut self.pool);
        len
    }
}
