//! The receive path: parsing, format errors, ACK/RST matching, and routing of requests and
//! responses (RFC 7252 §4.2–4.3, §5.3.2).

use crate::endpoint::{Endpoint, LocalAddr, Reception};
use crate::hash::fingerprint;
use crate::hash::MidKey;
use crate::message::dedup::DedupState;
use crate::message::outbox::LocalId;
use crate::message::transmission::TransmissionEnd;
use crate::stats::DropCause;
use crate::stats::DROP_CAUSES;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{Header, Message, MessageType, ParseErrorKind, Token};

impl Endpoint {
    /// Feeds one received datagram from `remote` into the endpoint and says what became of
    /// it. Replies leave from `local.socket` when the driver names it.
    // Not inlined: in a driver's loop its locals would hold the loop's frame for good (0.7
    // KiB of a mote's stack).
    #[inline(never)]
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        local: LocalAddr,
        datagram: &[u8],
    ) -> Reception {
        let (duplicates, drops) = (self.stats.duplicates, self.stats.drops);
        let from = self.local_id(local.socket);
        self.messages.set_replying_from(from);
        self.receive(now, remote, local, datagram);
        self.messages.set_replying_from(LocalId::default());
        if from != LocalId::default() {
            if let Some(k) = self.peers.lookup(&remote) {
                self.peers.set_local(k, from);
            }
        }
        if self.stats.duplicates != duplicates {
            return Reception::Duplicate;
        }
        match (0..DROP_CAUSES).find(|&i| self.stats.drops[i] != drops[i]) {
            Some(i) => Reception::Rejected(DropCause::ALL[i]),
            None => Reception::Accepted,
        }
    }

    fn receive(&mut self, now: Instant, remote: SocketAddr, local: LocalAddr, datagram: &[u8]) {
        self.stats.received += 1;
        self.stats.bytes_received += datagram.len() as u64;
        if local.is_spoofed_loopback(remote) {
            // Not answered: the answer would go to this host's own loopback.
            self.stats.drop(DropCause::SpoofedLoopback);
            return;
        }
        if local.multicast_group.is_some() && !cfg!(feature = "multicast") {
            // This build answers no group (it joined none).
            self.stats.drop(DropCause::MulticastSuppressed);
            return;
        }
        self.address_validation
            .earn(now, remote, local.socket, datagram.len());
        let multicast = local.group().is_some();
        if datagram.len() > self.config.max_message_size {
            self.stats.drop(DropCause::TooLarge);
            if !multicast {
                self.answer_too_large(now, remote, datagram);
            }
            return;
        }
        let message = match Message::parse(datagram) {
            Ok(m) => m,
            Err(e) => {
                self.stats.drop(DropCause::FormatError);
                // A CON we cannot parse is rejected with RST (never to multicast requests);
                // anything else, or a wrong version, is dropped silently.
                if let Ok(h) = Header::parse(datagram) {
                    if h.message_type == MessageType::Confirmable && !multicast {
                        self.send_empty(remote, MessageType::Reset, h.message_id, false);
                    }
                    if let ParseErrorKind::ReservedCodeClass(_) = e.kind {
                        let token = datagram
                            .get(4..4 + usize::from(h.token_length))
                            .and_then(Token::new);
                        self.fail_on_invalid_code(now, remote, h.message_type, h.message_id, token);
                    }
                }
                return;
            }
        };
        match message.message_type() {
            MessageType::Acknowledgement | MessageType::Reset => {
                self.handle_ack_or_reset(now, remote, &message, datagram)
            }
            MessageType::Confirmable | MessageType::NonConfirmable => {
                self.handle_con_or_non(now, remote, local, &message, datagram)
            }
        }
    }

    fn handle_ack_or_reset(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        message: &Message<'_>,
        datagram: &[u8],
    ) {
        let code = message.code();
        let reset = message.message_type() == MessageType::Reset;
        // RSTs are always Empty; ACKs are Empty or carry a response.
        if reset && !code.is_empty() {
            self.stats.drop(DropCause::FormatError);
            return;
        }
        if !reset && !code.is_empty() && !code.is_response() {
            self.stats.drop(DropCause::FormatError);
            let (mid, token) = (message.message_id(), Some(message.token()));
            self.fail_on_invalid_code(now, remote, MessageType::Acknowledgement, mid, token);
            return;
        }
        let Some(tx) = self.transmissions.find(remote, message.message_id()) else {
            // An RST may reject a NON notification, ending that observation.
            if !(reset && self.reset_notification(now, remote, message.message_id())) {
                self.stats.drop(DropCause::Unmatched);
                self.address_validation.wrong_guess(remote);
            }
            return;
        };
        let Some(t) = self.transmissions.get(tx) else {
            self.stats.drop(DropCause::Unmatched);
            return;
        };
        let owner = t.owner;
        // Only the receiver of that CON knows its message ID.
        self.acknowledged_by(now, remote);
        if code.is_response() {
            #[cfg(feature = "client")]
            self.on_piggybacked_response(now, tx, owner, remote, message, datagram);
            #[cfg(not(feature = "client"))]
            {
                // No request of ours: nothing to match an answer to.
                let _ = (owner, datagram);
                self.stats.drop(DropCause::Unmatched);
            }
            return;
        }
        let end = if reset {
            TransmissionEnd::Reset
        } else {
            TransmissionEnd::Acknowledged
        };
        if let Some(t) = self.end_transmission(now, tx, end) {
            self.on_transmission_ended(now, t, end);
        }
    }

    fn handle_con_or_non(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        local: LocalAddr,
        message: &Message<'_>,
        datagram: &[u8],
    ) {
        let multicast = local.group().is_some();
        let confirmable = message.message_type() == MessageType::Confirmable;
        let code = message.code();
        if code.is_empty() {
            // An Empty CON is a ping: answer with RST. An Empty NON is meaningless.
            if confirmable && !multicast {
                self.send_empty(remote, MessageType::Reset, message.message_id(), false);
            } else {
                self.stats.drop(DropCause::FormatError);
            }
            return;
        }
        if !code.is_request() && !code.is_response() {
            // A reserved class (3): a format error, rejected with RST when confirmable.
            self.stats.drop(DropCause::FormatError);
            if confirmable && !multicast {
                self.send_empty(remote, MessageType::Reset, message.message_id(), false);
            }
            let (kind, mid) = (message.message_type(), message.message_id());
            self.fail_on_invalid_code(now, remote, kind, mid, Some(message.token()));
            return;
        }
        let dedup_key = MidKey::new(remote, message.message_id());
        let print = fingerprint(&self.hasher, datagram);
        if let Some(state) = self.messages.recall(&dedup_key, print) {
            if code.is_request() {
                if !self.duplicate_needs_reprocessing(message, state) {
                    self.handle_duplicate_request(remote, message, state);
                    return;
                }
            } else {
                self.handle_duplicate_request(remote, message, state);
                return;
            }
        }
        if code.is_request() {
            self.handle_request(now, remote, local, message, datagram, dedup_key, print);
        } else {
            self.handle_separate_response(
                now, remote, multicast, message, datagram, dedup_key, print,
            );
        }
    }

    /// A duplicate whose cached reply was overwritten: safe methods are served again
    /// (RFC 7252 §4.5 allows it for idempotent requests), others are not.
    fn duplicate_needs_reprocessing(&self, message: &Message<'_>, state: DedupState) -> bool {
        let DedupState::Replied(reply) = state else {
            return false;
        };
        use covey_core::Code;
        self.messages.reply(reply).is_none()
            && matches!(
                message.code(),
                Code::GET | Code::PUT | Code::DELETE | Code::FETCH | Code::IPATCH
            )
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_separate_response(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        multicast: bool,
        message: &Message<'_>,
        datagram: &[u8],
        dedup_key: MidKey,
        print: u64,
    ) {
        let confirmable = message.message_type() == MessageType::Confirmable;
        let lifetime = if confirmable {
            self.lifetimes.exchange
        } else {
            self.lifetimes.non
        };
        #[cfg(not(feature = "client"))]
        let _ = datagram;
        #[cfg(feature = "client")]
        if self.on_separate_response(now, remote, message, datagram, (dedup_key, print), lifetime) {
            return;
        }
        // Nobody asked: reject, so a server stops notifying a forgotten observation.
        self.stats.drop(DropCause::Unmatched);
        if !multicast {
            let reply = self.send_empty(
                remote,
                MessageType::Reset,
                message.message_id(),
                confirmable,
            );
            let state = reply.map_or(DedupState::Ignore, DedupState::Replied);
            self.messages
                .remember(now, dedup_key, print, state, now + lifetime);
        }
    }
}
