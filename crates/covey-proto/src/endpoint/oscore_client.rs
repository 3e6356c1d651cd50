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
use crate::exchange::client_exchange::ExchangeState;
use crate::exchange::oscore_contexts::{at_least, OscoreContextId};
use crate::message::option_rules::unrecognised_critical_option;
use crate::message::outbox::OutSource;
use crate::request::{Request, RequestParams};
use crate::storage::slab::SlabKey;
use crate::{Instant, RequestError};
use core::mem::take;
use core::net::SocketAddr;
use covey_core::{Message, OptionNumber};

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

    /// Protects the plain request message of exchange `key` held in `at` (the exchange's
    /// next message, just encoded) in place, and binds the exchange's answers to it; true
    /// too for an exchange that is not protected.
    pub(crate) fn protect_for_exchange(&mut self, key: SlabKey, at: OutSource) -> bool {
        let Some(context) = self
            .exchanges
            .get(key)
            .and_then(|ex| ex.oscore.as_ref())
            .map(|p| p.context)
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
            sealing.protect_request(&plain, out).ok()
        });
        let done = protected.is_some_and(|(len, request)| {
            let copied = buf.copy_from(&sealed[..len], &mut self.pool);
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
