//! OSCORE on the server side (RFC 8613 §8.2, §8.3): a protected request is verified with the
//! security context its kid names and goes on as its inner request; the response to it is
//! protected with that context before it is stored or sent. Failures get §8.2's unprotected
//! errors and never reach the application.

use crate::endpoint::{Endpoint, RespondError};
use crate::exchange::incoming_exchange::ResponseTarget;
use crate::exchange::oscore_contexts::{
    at_least, AddOscoreContextError, OscoreBinding, OscoreContextId,
};
use crate::message::wire::{encode_into, Outgoing};
use crate::stats::DropCause;
use crate::Instant;
use core::mem::take;
use covey_core::{Block, CoapOption, Code, Message, OptionNumber};
use covey_oscore::{OscoreError, OscoreOption, ResponsePartialIv, SecurityContext};

/// Reserves more sender sequence numbers for an OSCORE context (RFC 8613 Appendix B.1.1):
/// called with the context's next number and its limit, it returns a new limit once it has
/// stored that the numbers below it are taken (so a restart resumes above them), or `None`
/// while it does not need to.
pub type SequenceReservation = alloc::boxed::Box<dyn FnMut(u64, u64) -> Option<u64> + Send>;

/// What became of a request at the OSCORE step.
pub(crate) enum Intake {
    /// No OSCORE option: the plain path, untouched.
    Plain,
    /// Refused and answered (or dropped); nothing else is to be done.
    Refused,
    /// Verified: the inner request's datagram, the first bytes of the OSCORE buffers'
    /// `inner`, and what its response is bound to.
    Verified(usize, OscoreBinding),
    /// Verified, but the context's replay window is lost and the request did not prove its
    /// freshness: to be answered 4.01 with the context's Echo value (Appendix B.1.2).
    Challenge(OscoreBinding),
}

/// The most options an OSCORE message carries outside its ciphertext: the Class U options
/// and the outer Observe, each at most once, and the OSCORE option, with room to spare.
const MAX_OUTER_OPTIONS: usize = 16;

/// The options of `outer`, a protected message, in an array: no allocation per message.
/// `None` if it has more than [`MAX_OUTER_OPTIONS`].
pub(crate) fn outer_options<'a>(
    outer: &Message<'a>,
) -> Option<([CoapOption<'a>; MAX_OUTER_OPTIONS], usize)> {
    let none = CoapOption {
        number: OptionNumber(0),
        value: &[],
    };
    let mut options = [none; MAX_OUTER_OPTIONS];
    let mut len = 0;
    for option in outer.options() {
        *options.get_mut(len)? = option;
        len += 1;
    }
    Some((options, len))
}

impl Endpoint {
    /// Adds a security context, under which requests whose kid is its Recipient ID are
    /// verified and their responses protected, and with which
    /// [`send_protected_request`](Self::send_protected_request) protects requests.
    pub fn add_oscore_context(
        &mut self,
        context: SecurityContext,
    ) -> Result<OscoreContextId, AddOscoreContextError> {
        let challenge = self.rng.next_u64().to_be_bytes();
        self.oscore.add(context, Some(challenge))
    }

    /// The next sender sequence number of context `id` and the one it stops before: a host
    /// that persists reservations (RFC 8613 Appendix B.1.1) reserves more as they near.
    pub fn oscore_sender_sequence(&self, id: OscoreContextId) -> Option<(u64, u64)> {
        let context = self.oscore.get(id.0)?;
        Some((
            context.sender_sequence_number(),
            context.sender_sequence_limit(),
        ))
    }

    /// Lets context `id` send sequence numbers up to `limit` (exclusive), once the host has
    /// stored that they are reserved, so a restart resumes above them.
    pub fn set_oscore_sender_sequence_limit(&mut self, id: OscoreContextId, limit: u64) {
        if let Some(context) = self.oscore.get_mut(id.0) {
            context.set_sender_sequence_limit(limit);
        }
    }

    /// Asks `reserve` whether context `id` needs more sequence numbers reserved, and raises
    /// its limit to what `reserve` stored; a host calls it after each round of work.
    pub fn renew_oscore_reservation(
        &mut self,
        id: OscoreContextId,
        reserve: &mut SequenceReservation,
    ) {
        if let Some((next, limit)) = self.oscore_sender_sequence(id) {
            if let Some(new_limit) = reserve(next, limit) {
                self.set_oscore_sender_sequence_limit(id, new_limit);
            }
        }
    }

    /// Adds a context only to protect requests this endpoint sends with
    /// [`send_protected_request`](Self::send_protected_request): no request is verified with
    /// it, so several such contexts (one per server asked) may share a Recipient ID.
    pub fn add_oscore_sending_context(
        &mut self,
        context: SecurityContext,
    ) -> Result<OscoreContextId, AddOscoreContextError> {
        self.oscore.add(context, None)
    }

    /// Puts `context` in the place of `id`, a context added with
    /// [`add_oscore_sending_context`](Self::add_oscore_sending_context) that is no longer
    /// used (a host reuses the slot rather than grow the table); answers to requests still
    /// in flight under the old one fail verification. False if `id` is not such a context.
    pub fn replace_oscore_sending_context(
        &mut self,
        id: OscoreContextId,
        context: SecurityContext,
    ) -> bool {
        self.oscore.replace_sending(id.0, context)
    }

    /// Puts `context` in the place of context `index` (one EDHOC set up, given up for a new
    /// session); the observations bound to the old one end.
    #[cfg(feature = "edhoc")]
    pub(crate) fn replace_oscore_context(
        &mut self,
        now: Instant,
        index: usize,
        context: SecurityContext,
    ) {
        let bound: alloc::vec::Vec<_> = self
            .oscore
            .observations
            .iter()
            .filter(|(_, b)| b.context == index)
            .map(|(key, _)| *key)
            .collect();
        for key in bound {
            self.remove_observer(now, key);
        }
        let challenge = self.rng.next_u64().to_be_bytes();
        self.oscore.replace(index, context, challenge);
    }

    /// Answers a request of unknown freshness (Intake::Challenge) with a protected 4.01
    /// carrying the context's Echo value, which the client repeats it with.
    pub(crate) fn challenge_freshness(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        binding: OscoreBinding,
    ) {
        let Some(challenge) = self.oscore.challenge(binding.context) else {
            return;
        };
        self.stats.oscore_refused += 1;
        let echo = [CoapOption {
            number: OptionNumber::ECHO,
            value: &challenge,
        }];
        let target = ResponseTarget {
            oscore: Some(binding),
            ..target
        };
        self.reply_now(now, target, Code::UNAUTHORIZED, &echo, b"");
    }

    /// Verifies `message` if it carries the OSCORE option, answering a failure itself.
    pub(crate) fn unprotect_request(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        multicast: bool,
        message: &Message<'_>,
        datagram: &[u8],
    ) -> Intake {
        let Some(value) = message.option(OptionNumber::OSCORE) else {
            return Intake::Plain;
        };
        if multicast {
            // Group OSCORE is another protocol; a pairwise context never answers a group.
            self.stats.drop(DropCause::MulticastSuppressed);
            return Intake::Refused;
        }
        let mut inner = take(&mut self.oscore.buffers.inner);
        let verified = OscoreOption::parse(value).and_then(|option| {
            let index = self
                .oscore
                .find(&option)
                .ok_or(OscoreError::UnknownContext)?;
            let challenge = self.oscore.challenge(index);
            let context = self
                .oscore
                .get_mut(index)
                .ok_or(OscoreError::UnknownContext)?;
            // The inner request is no longer than the outer one but for option deltas; the
            // plaintext it is decrypted from goes at the end.
            let out = at_least(&mut inner, 2 * datagram.len() + 64);
            let verified = match context.unprotect_request(message, out) {
                Err(OscoreError::FreshnessUnknown) => {
                    // Appendix B.1.2: after a restart, fresh only with the Echo value sent.
                    let (len, request) =
                        context.unprotect_request_of_unknown_freshness(message, out)?;
                    let proven = Message::parse(&out[..len]).is_ok_and(|inner| {
                        inner.option(OptionNumber::ECHO) == challenge.as_ref().map(|c| &c[..])
                    });
                    if proven {
                        context.recover_replay_window(&request.partial_iv);
                    }
                    (len, request, proven)
                }
                other => {
                    let (len, request) = other?;
                    (len, request, true)
                }
            };
            let (len, request, fresh) = verified;
            self.oscore.mark_verified(index);
            let binding = OscoreBinding {
                context: index,
                partial_iv: request.partial_iv,
                fresh,
                outer_block1: None,
            };
            Ok((len, binding))
        });
        self.oscore.buffers.inner = inner;
        match verified {
            Ok((_, binding)) if !binding.fresh => Intake::Challenge(binding),
            Ok((len, binding)) => Intake::Verified(len, binding),
            Err(e) => {
                self.stats.oscore_refused += 1;
                let code = e.response_code().unwrap_or(Code::BAD_REQUEST);
                let diagnostic = e.diagnostic().unwrap_or(match e {
                    OscoreError::MalformedPlaintext => "malformed inner request",
                    _ => "malformed OSCORE message",
                });
                // §8.2: errors are sent unprotected, with Max-Age 0 so no cache keeps them.
                let max_age = [CoapOption {
                    number: OptionNumber::MAX_AGE,
                    value: &[],
                }];
                self.reply_now(now, target, code, &max_age, diagnostic.as_bytes());
                Intake::Refused
            }
        }
    }

    /// Sends `m` protected under `binding`, as `send_response` would send it plain.
    pub(crate) fn send_protected(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        m: &Outgoing<'_>,
        binding: OscoreBinding,
    ) -> Result<(), RespondError> {
        let mut plain = take(&mut self.oscore.buffers.plain);
        let mut sealed = take(&mut self.oscore.buffers.sealed);
        // A fresh request's one response may reuse its nonce; not a challenge (the
        // request may be a replay) nor a registration's first notification (§8.3).
        let registers = m.extra.iter().any(|o| o.number == OptionNumber::OBSERVE);
        let nonce = match binding.fresh && !registers {
            true => ResponsePartialIv::FromRequest,
            false => ResponsePartialIv::Own,
        };
        let sent = self
            .protect_response(m, binding, nonce, &mut plain, &mut sealed)
            .and_then(|len| {
                let outer = Message::parse(&sealed[..len]).map_err(|_| RespondError::TooLarge)?;
                let (options, count) = outer_options(&outer).ok_or(RespondError::TooLarge)?;
                // The answer to a request put together from outer blocks acknowledges the
                // last one (RFC 7959 §2.3).
                let mut value = [0u8; 4];
                let block1 = binding.outer_block1.map(|b| CoapOption {
                    number: OptionNumber::BLOCK1,
                    value: Block { more: false, ..b }.encode(&mut value),
                });
                let m = Outgoing {
                    code: outer.code(),
                    options: &options[..count],
                    extra: block1.as_slice(),
                    payload: outer.payload(),
                    ..*m
                };
                let target = ResponseTarget {
                    oscore: None,
                    ..target
                };
                self.send_response(now, target, m)
            });
        self.oscore.buffers.plain = plain;
        self.oscore.buffers.sealed = sealed;
        sent
    }

    /// Writes the OSCORE message protecting `m` under `binding`, sealed with `nonce`, into
    /// `sealed`, encoding `m` in `plain` first; returns its length. Its type and message ID are the caller's to
    /// set when it re-encodes it.
    pub(crate) fn protect_response(
        &mut self,
        m: &Outgoing<'_>,
        binding: OscoreBinding,
        nonce: ResponsePartialIv,
        plain: &mut alloc::vec::Vec<u8>,
        sealed: &mut alloc::vec::Vec<u8>,
    ) -> Result<usize, RespondError> {
        let plain = at_least(plain, m.size_bound());
        let len = encode_into(m, plain).map_err(|_| RespondError::TooLarge)?;
        let plain = Message::parse(&plain[..len]).map_err(|_| RespondError::TooLarge)?;
        let request = self
            .oscore
            .request_id(binding)
            .ok_or(RespondError::UnknownRequest)?;
        let context = self
            .oscore
            .get_mut(binding.context)
            .ok_or(RespondError::UnknownRequest)?;
        // Room for the OSCORE option, the code byte, the tag and longer option deltas.
        let out = at_least(sealed, len + 32);
        context
            .protect_response(&plain, &request, nonce, out)
            .map_err(|_| RespondError::TooLarge)
    }
}
