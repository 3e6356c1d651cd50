//! OSCORE on the client side (RFC 8613 §8.1, §8.4): a request protected with a security
//! context the host added, and its response verified before the application sees it.

use crate::endpoint::client::ExchangeSetup;
use crate::endpoint::echo_answer::MAX_ECHO_RETRIES;
use crate::endpoint::oscore::outer_options;
use crate::endpoint::Endpoint;
use crate::event::{Failure, RequestId};
use crate::exchange::client_exchange::ExchangeKind;
use crate::exchange::oscore_contexts::at_least;
use crate::exchange::oscore_contexts::OscoreContextId;
use crate::message::option_rules::unrecognised_critical_option;
use crate::message::wire::{encode_into, reencode, Outgoing};
use crate::request::{Request, RequestParams};
use crate::storage::datagram_buf::DatagramBuf;
use crate::storage::slab::SlabKey;
use crate::{Instant, RequestError};
use alloc::vec;
use alloc::vec::Vec;
use core::mem::take;
use core::net::SocketAddr;
use covey_core::{CoapOption, Code, Message, MessageType, OptionNumber};
use covey_oscore::OscoreError;

impl Endpoint {
    /// Starts a request to `remote` protected with `context`, as
    /// [`send_request`](Self::send_request) starts a plain one; its response is verified
    /// and arrives as the inner response, or the request fails with
    /// [`Failure::UnverifiedResponse`]. An unprotected error response (RFC 8613 §8.2: the
    /// server could not verify the request) arrives as it came. Observe, Block-wise and
    /// multicast are not supported over OSCORE yet: [`RequestError::Oscore`].
    pub fn send_protected_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
        context: OscoreContextId,
    ) -> Result<RequestId, RequestError> {
        let unsupported = remote.ip().is_multicast()
            || request.payload.len() > self.config.block_size()
            || request.options.iter().any(|o| {
                matches!(
                    o.number,
                    OptionNumber::OBSERVE | OptionNumber::BLOCK1 | OptionNumber::BLOCK2
                )
            });
        if unsupported || self.oscore.get(context.0).is_none() {
            return Err(RequestError::Oscore);
        }
        let token = match params.token {
            Some(t) if self.exchanges.token_in_use(&t) => return Err(RequestError::TokenInUse),
            Some(t) => t,
            None => self.new_token(),
        };
        let message_type = match params.confirmable {
            true => MessageType::Confirmable,
            false => MessageType::NonConfirmable,
        };
        let plain = Outgoing {
            message_type,
            code: request.method,
            message_id: 0,
            token: token.as_bytes(),
            options: request.options,
            extra: &[],
            payload: request.payload,
        };
        let (mut plain_buffer, mut sealed) = (
            take(&mut self.oscore.buffers.plain),
            take(&mut self.oscore.buffers.sealed),
        );
        let started = self.start_protected(
            now,
            remote,
            (&plain, &mut plain_buffer, &mut sealed),
            params,
            context,
        );
        self.oscore.buffers.plain = plain_buffer;
        self.oscore.buffers.sealed = sealed;
        started
    }

    /// Protects `plain` with `context`, through the two buffers, and starts its exchange.
    fn start_protected(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        (plain, plain_buffer, sealed): (&Outgoing<'_>, &mut Vec<u8>, &mut Vec<u8>),
        params: RequestParams,
        context: OscoreContextId,
    ) -> Result<RequestId, RequestError> {
        let plain_bytes = at_least(plain_buffer, plain.size_bound());
        let len = encode_into(plain, plain_bytes).map_err(|_| RequestError::TooLarge)?;
        let plain_message =
            Message::parse(&plain_bytes[..len]).map_err(|_| RequestError::TooLarge)?;
        let sealing = self.oscore.get_mut(context.0).ok_or(RequestError::Oscore)?;
        // Room for the OSCORE option (kid, kid context, Partial IV), the code byte and tag.
        let room = len + 32 + sealing.id_context().map_or(0, <[u8]>::len);
        let protected = at_least(sealed, room);
        let (len, binding) =
            sealing
                .protect_request(&plain_message, protected)
                .map_err(|e| match e {
                    OscoreError::Encode(_) | OscoreError::PlaintextTooLong => {
                        RequestError::TooLarge
                    }
                    _ => RequestError::Oscore,
                })?;
        let outer = Message::parse(&protected[..len]).map_err(|_| RequestError::TooLarge)?;
        let (options, count) = outer_options(&outer).ok_or(RequestError::TooLarge)?;
        let template = Outgoing {
            message_type: plain.message_type,
            code: outer.code(),
            message_id: 0,
            token: plain.token,
            options: &options[..count],
            extra: &[],
            payload: outer.payload(),
        };
        let setup = ExchangeSetup {
            kind: ExchangeKind::Request,
            multicast: false,
            observe: None,
            transfer: None,
            source: params.source,
            owner: params.owner,
        };
        let id = self.create_exchange(now, remote, &template, setup)?;
        // Set before any answer can come: this call sent at most the request itself.
        if let Some(ex) = self.exchanges.get_mut(id.0) {
            ex.oscore = Some((context.0, binding));
        }
        Ok(id)
    }

    /// Whether exchange `key` awaits an OSCORE-protected response.
    pub(crate) fn awaits_protected(&self, key: SlabKey) -> bool {
        self.exchanges
            .get(key)
            .is_some_and(|ex| ex.oscore.is_some())
    }

    /// Verifies the response `m` to the protected request of exchange `key` and delivers
    /// its inner response, ending the exchange; one that does not verify fails it.
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
        let Some((index, request)) = ex.oscore.clone() else {
            return;
        };
        self.peers.mark_responsive(ex.peer);
        if !m.has_option(OptionNumber::OSCORE) {
            // §8.2's errors come unprotected; a success must not.
            match m.code().is_error() && unrecognised_critical_option(m).is_none() {
                true => self.deliver(now, key, source, datagram, None, true),
                false => self.fail_exchange(now, key, Failure::UnverifiedResponse),
            }
            return;
        }
        let mut inner = take(&mut self.oscore.buffers.inner);
        // The inner response, and at the end the plaintext it is decrypted from.
        let out = at_least(&mut inner, 2 * datagram.len() + 64);
        let verified = self
            .oscore
            .get(index)
            .map(|c| c.unprotect_response(m, &request, out));
        match verified {
            Some(Ok(len)) => {
                let parsed = Message::parse(&inner[..len]);
                let challenge = parsed.as_ref().ok().and_then(|i| {
                    (i.code() == Code::UNAUTHORIZED)
                        .then(|| i.option(OptionNumber::ECHO))
                        .flatten()
                });
                let acceptable = parsed.is_ok_and(|i| unrecognised_critical_option(&i).is_none());
                let repeated =
                    challenge.is_some_and(|echo| self.repeat_with_echo(now, key, index, echo));
                match (repeated, acceptable) {
                    (true, _) => {}
                    (false, true) => self.deliver(now, key, source, &inner[..len], None, true),
                    (false, false) => self.fail_exchange(now, key, Failure::ProtocolError),
                }
            }
            _ => self.fail_exchange(now, key, Failure::UnverifiedResponse),
        }
        self.oscore.buffers.inner = inner;
    }

    /// RFC 8613 Appendix B.1.2 on the client: a protected 4.01 with Echo says the server lost
    /// its replay window. The request of exchange `key` goes again with that Echo value
    /// inside, protected anew under the next Partial IV (at most `MAX_ECHO_RETRIES` times);
    /// returns whether it did.
    fn repeat_with_echo(&mut self, now: Instant, key: SlabKey, index: usize, echo: &[u8]) -> bool {
        let Some(ex) = self.exchanges.get(key) else {
            return false;
        };
        if ex.echo_retries >= MAX_ECHO_RETRIES {
            return false;
        }
        let Some(context) = self.oscore.get_mut(index) else {
            return false;
        };
        let template = self.exchanges.template(key);
        let Ok(outer) = Message::parse(template) else {
            return false;
        };
        // Rare (once per server restart), so plain buffers of its own.
        let mut plain = vec![0; 2 * template.len() + 64];
        let Ok(len) = context.unprotect_own_request(&outer, &mut plain) else {
            return false;
        };
        let Ok(plain_request) = Message::parse(&plain[..len]) else {
            return false;
        };
        // The request with `echo` in place of any Echo it had, re-encoded as the engine
        // re-encodes a plain request's template for Echo.
        let echo_option = [CoapOption {
            number: OptionNumber::ECHO,
            value: echo,
        }];
        let mut with_echo = DatagramBuf::default();
        let protected = reencode(
            &plain[..len],
            plain_request.message_id(),
            &[OptionNumber::ECHO],
            &echo_option,
            plain_request.payload(),
            &mut with_echo,
            &mut self.pool,
        )
        .ok()
        .and_then(|()| Message::parse(with_echo.as_slice()).ok())
        .and_then(|request| {
            let mut sealed = vec![0; with_echo.as_slice().len() + 64];
            let (sealed_len, binding) = context.protect_request(&request, &mut sealed).ok()?;
            sealed.truncate(sealed_len);
            Some((sealed, binding))
        });
        with_echo.release(&mut self.pool);
        let Some((sealed, binding)) = protected else {
            return false;
        };
        let mut updated = DatagramBuf::default();
        let copied = updated.copy_from(&sealed, &mut self.pool);
        if copied {
            self.exchanges.swap_template(key, &mut updated);
        }
        updated.release(&mut self.pool);
        let Some(ex) = self.exchanges.get_mut(key).filter(|_| copied) else {
            return false;
        };
        ex.echo_retries += 1;
        ex.oscore = Some((index, binding));
        self.stats.echo_retries += 1;
        self.transmit_exchange(now, key, false);
        true
    }
}
