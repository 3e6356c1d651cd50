//! OSCORE on the client side (RFC 8613 §8.1, §8.4): a request protected with a security
//! context the host added, and its response verified before the application sees it.
//! OSCORE sits below Block-wise and Observe here: the exchange keeps the plain request, each
//! message it sends (the first, each block, one repeated with Echo) is protected anew as it
//! is encoded, and each answer is verified into its inner message, which then goes the way
//! a plain answer goes (inner Block2 and Block1, RFC 8613 §4.1.3.4.1; notifications ordered
//! by their Partial IV, §7.4.1).

use crate::endpoint::client::ExchangeSetup;
use crate::endpoint::Endpoint;
use crate::event::{Failure, RequestId};
use crate::exchange::client_exchange::{ExchangeState, OuterDownload};
use crate::exchange::oscore_contexts::{at_least, OscoreContextId};
use crate::message::option_rules::unrecognised_critical_option;
use crate::message::outbox::OutSource;
use crate::message::wire::{rebuilt, reencode};
use crate::request::{Request, RequestParams};
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::DatagramBuf;
use crate::storage::slab::SlabKey;
use crate::{Instant, RequestError};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::take;
use core::net::SocketAddr;
use covey_core::{Block, CoapOption, Message, OptionNumber};

impl Endpoint {
    /// Starts a request to `remote` protected with `context`, as
    /// [`send_request`](Self::send_request) starts a plain one, Observe and Block-wise
    /// included; each response is verified and arrives as the inner response, or the
    /// request fails with [`Failure::UnverifiedResponse`]. An unprotected error response
    /// (RFC 8613 §8.2: the server could not verify the request) arrives as it came. A
    /// multicast request needs Group OSCORE: [`RequestError::Oscore`].
    pub fn send_protected_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
        context: OscoreContextId,
    ) -> Result<RequestId, RequestError> {
        if remote.ip().is_multicast() || self.oscore.get(context.0).is_none() {
            return Err(RequestError::Oscore);
        }
        let setup = ExchangeSetup {
            oscore: Some(context.0),
            ..ExchangeSetup::default()
        };
        self.start_request(now, remote, request, params, setup)
    }

    /// [`Self::send_protected_request`] as an EDHOC + OSCORE request (RFC 9668 §3.2): its
    /// first message carries the EDHOC option and `message_3` before its ciphertext, which
    /// completes the handshake `context` came from at the server.
    pub fn send_edhoc_oscore_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
        (context, message_3): (OscoreContextId, &[u8]),
    ) -> Result<RequestId, RequestError> {
        if remote.ip().is_multicast() || self.oscore.get(context.0).is_none() {
            return Err(RequestError::Oscore);
        }
        let setup = ExchangeSetup {
            oscore: Some(context.0),
            edhoc_message_3: Some(message_3.to_vec()),
            ..ExchangeSetup::default()
        };
        self.start_request(now, remote, request, params, setup)
    }

    /// Protects the plain request message of exchange `key` held in `at` (the exchange's
    /// next message, just encoded) in place, and binds the exchange's answers to it; true
    /// too for an exchange that is not protected.
    pub(crate) fn protect_for_exchange(&mut self, key: SlabKey, at: OutSource) -> bool {
        let Some((context, again, message_3)) = self
            .exchanges
            .get_mut(key)
            .and_then(|ex| ex.oscore.as_mut())
            .map(|p| {
                // Asking for the next outer block: the same request under the same Partial IV.
                let again = p
                    .outer
                    .as_ref()
                    .and_then(|o| Some((o.next, p.request.clone()?)));
                (p.context, again, p.edhoc_message_3.take())
            })
        else {
            return true;
        };
        let buf = match at {
            OutSource::Transmission(tx) => self.transmissions.buf_mut(tx),
            OutSource::Slot(slot) => self.messages.slot_mut(slot),
            _ => return false,
        };
        let mut sealed = take(&mut self.oscore.buffers.sealed);
        let protected = Message::parse(buf.as_slice()).ok().and_then(|plain| {
            let sealing = self.oscore.get_mut(context)?;
            // Room for the OSCORE option (kid, kid context, Partial IV), the code byte and tag.
            let room = buf.as_slice().len() + 32 + sealing.id_context().map_or(0, <[u8]>::len);
            let out = at_least(&mut sealed, room);
            match &again {
                Some((_, id)) => {
                    let len = sealing.protect_request_again(&plain, id, out).ok()?;
                    Some((len, id.clone()))
                }
                None => sealing.protect_request(&plain, out).ok(),
            }
        });
        let done = protected.is_some_and(|(len, request)| {
            let copied = match (again, &message_3) {
                (Some((block, _)), _) => {
                    with_outer_block2(&sealed[..len], block, buf, &mut self.pool)
                }
                (None, Some(m3)) => with_edhoc_message_3(&sealed[..len], m3, buf, &mut self.pool),
                (None, None) => buf.copy_from(&sealed[..len], &mut self.pool),
            };
            if let Some(p) = self
                .exchanges
                .get_mut(key)
                .and_then(|ex| ex.oscore.as_mut())
            {
                p.request = Some(request);
            }
            copied
        });
        self.oscore.buffers.sealed = sealed;
        done
    }

    /// Takes in `m`, one outer Block2 block of the protected response to exchange `key`
    /// (RFC 8613 §4.1.3.4.2: a proxy split it): asks for the next one and returns `None`,
    /// or returns the whole protected response once the last is in. A block out of order
    /// or past `max_body_size` fails the exchange.
    fn take_outer_block2(
        &mut self,
        now: Instant,
        key: SlabKey,
        m: &Message<'_>,
        block: Block,
    ) -> Option<Vec<u8>> {
        let max_body = self.config.max_body_size;
        let p = self.exchanges.get_mut(key)?.oscore.as_mut()?;
        let outer = p.outer.get_or_insert_with(|| {
            Box::new(OuterDownload {
                next: block,
                body: Vec::new(),
            })
        });
        let failure = if block.offset() != outer.body.len() {
            let (asked, got) = (outer.body.len() as u32, block.offset() as u32);
            Some(Failure::UnexpectedBlock { asked, got })
        } else if outer.body.len() + m.payload().len() > max_body {
            Some(Failure::ResponseTooLarge)
        } else {
            None
        };
        if let Some(failure) = failure {
            self.fail_exchange(now, key, failure);
            return None;
        }
        outer.body.extend_from_slice(m.payload());
        if block.more {
            match Block::new(block.num + 1, false, block.szx) {
                Ok(next) => outer.next = next,
                Err(_) => {
                    self.fail_exchange(now, key, Failure::ProtocolError);
                    return None;
                }
            }
            self.transmit_exchange(now, key, false);
            return None;
        }
        let outer = p.outer.take()?;
        rebuilt(m, &[OptionNumber::BLOCK2, OptionNumber::SIZE2], &outer.body)
    }

    /// Whether exchange `key` is an established observation.
    fn is_observing(&self, key: SlabKey) -> bool {
        self.exchanges
            .get(key)
            .is_some_and(|ex| ex.state == ExchangeState::Observing)
    }

    /// Whether exchange `key` awaits OSCORE-protected answers.
    pub(crate) fn awaits_protected(&self, key: SlabKey) -> bool {
        self.exchanges
            .get(key)
            .is_some_and(|ex| ex.oscore.is_some())
    }

    /// Verifies the answer `m` to the protected request of exchange `key` (a response, or a
    /// notification of its observation) and hands its inner message on as a plain answer
    /// is handled; one that does not verify fails the exchange.
    pub(crate) fn on_protected_response(
        &mut self,
        now: Instant,
        key: SlabKey,
        source: SocketAddr,
        m: &Message<'_>,
        datagram: &[u8],
    ) {
        let Some(ex) = self.exchanges.get(key) else {
            return;
        };
        let Some((context, Some(request))) =
            ex.oscore.as_ref().map(|p| (p.context, p.request.clone()))
        else {
            return;
        };
        let registered = ex.observe.is_some();
        self.peers.mark_responsive(ex.peer);
        if !m.has_option(OptionNumber::OSCORE) {
            // §8.2's errors come unprotected; a success must not.
            match m.code().is_error() && unrecognised_critical_option(m).is_none() {
                true => self.deliver(now, key, source, datagram, None, true),
                false => self.fail_exchange(now, key, Failure::UnverifiedResponse),
            }
            return;
        }
        // A response a proxy split into outer blocks is put together first.
        let whole;
        let whole_message;
        let (m, datagram) = match m.block2() {
            None => (m, datagram),
            Some(block) => {
                let Some(bytes) = self.take_outer_block2(now, key, m, block) else {
                    return;
                };
                whole = bytes;
                let Ok(parsed) = Message::parse(&whole) else {
                    self.fail_exchange(now, key, Failure::ProtocolError);
                    return;
                };
                whole_message = parsed;
                (&whole_message, &whole[..])
            }
        };
        let mut inner = take(&mut self.oscore.buffers.inner);
        // The inner message, and at the end the plaintext it is decrypted from.
        let out = at_least(&mut inner, 2 * datagram.len() + 64);
        let (exchanges, contexts) = (&mut self.exchanges, &self.oscore);
        let verified = contexts.get(context).and_then(|c| {
            // A notification is fresh only above the last one's Partial IV (§7.4.1).
            let notifications = exchanges
                .get_mut(key)?
                .oscore
                .as_mut()
                .map(|p| &mut p.notifications)
                .filter(|_| registered && m.observe().is_some());
            match notifications {
                Some(number) => c.unprotect_notification(m, &request, number, out).ok(),
                None => c.unprotect_response(m, &request, out).ok(),
            }
        });
        let parsed = verified.and_then(|len| Some((Message::parse(&inner[..len]).ok()?, len)));
        match parsed {
            Some((plain, len)) if unrecognised_critical_option(&plain).is_none() => {
                // The inner Observe of a notification is empty (§4.1.3.5.2): the outer
                // value orders it, its Partial IV having proved it fresh.
                self.on_plain_response(now, key, source, &plain, &inner[..len], m.observe());
            }
            Some(_) => self.fail_exchange(now, key, Failure::ProtocolError),
            None if registered && m.observe().is_some() && self.is_observing(key) => {
                // A replayed or forged notification does not end a verified observation.
                self.stats.drop(crate::stats::DropCause::StaleNotification);
            }
            None => self.fail_exchange(now, key, Failure::UnverifiedResponse),
        }
        self.oscore.buffers.inner = inner;
    }
}

/// Writes `sealed`, a protected request, into `out` with the outer Block2 option `block`
/// added; false when it does not fit.
fn with_outer_block2(
    sealed: &[u8],
    block: Block,
    out: &mut DatagramBuf,
    pool: &mut BufferPool,
) -> bool {
    let Ok(m) = Message::parse(sealed) else {
        return false;
    };
    let mut value = [0u8; 4];
    let extra = [CoapOption {
        number: OptionNumber::BLOCK2,
        value: block.encode(&mut value),
    }];
    reencode(sealed, m.message_id(), &[], &extra, m.payload(), out, pool).is_ok()
}

/// Writes `sealed`, a protected request, into `out` as an EDHOC + OSCORE request (RFC 9668
/// §3.2.1): with the EDHOC option and `message_3` before its ciphertext.
fn with_edhoc_message_3(
    sealed: &[u8],
    message_3: &[u8],
    out: &mut DatagramBuf,
    pool: &mut BufferPool,
) -> bool {
    let Ok(m) = Message::parse(sealed) else {
        return false;
    };
    let extra = [CoapOption {
        number: OptionNumber::EDHOC,
        value: &[],
    }];
    let payload: Vec<u8> = message_3.iter().chain(m.payload()).copied().collect();
    reencode(sealed, m.message_id(), &[], &extra, &payload, out, pool).is_ok()
}
