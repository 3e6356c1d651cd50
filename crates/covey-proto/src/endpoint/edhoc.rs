//! EDHOC Responder in the engine (RFC 9528 Appendix A.2): POSTs to /.well-known/edhoc carry
//! message_1 (after CBOR `true`) or message_3 (after C_R) and are answered by the engine; a
//! completed session adds its OSCORE security context (Appendix A.1) to the endpoint.

use crate::endpoint::Endpoint;
use crate::exchange::incoming_exchange::ResponseTarget;
use crate::message::wire::rebuilt;
use crate::{Duration, Instant};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use covey_core::{CoapOption, Code, Message, OptionNumber};
use covey_edhoc::transport::{parse_request, split_combined_payload, EdhocRequest};
use covey_edhoc::{OwnIdentity, Responder, ResponderAwaitingMessage3, TrustedPeers};
use covey_oscore::SecurityContext;

/// Content-Format application/edhoc+cbor-seq (RFC 9528 §10.9).
const EDHOC_CBOR_SEQ: &[u8] = &[64];

/// How the engine answers EDHOC as Responder.
#[derive(Debug, Clone)]
pub struct EdhocConfig {
    /// This endpoint's credential and private key.
    pub own: OwnIdentity,
    /// The Initiators' credentials it accepts.
    pub trusted: TrustedPeers,
    /// Sessions waiting for message_3 at most; more message_1s get 5.03.
    pub max_sessions: usize,
}

/// A session waiting for message_3.
#[derive(Debug)]
struct Pending {
    c_r: Vec<u8>,
    started: Instant,
    state: ResponderAwaitingMessage3,
}

/// The Responder's sessions in progress and the peers of the contexts EDHOC added.
#[derive(Debug)]
pub(crate) struct EdhocResponderTable {
    config: EdhocConfig,
    pending: Vec<Pending>,
    /// (OSCORE Recipient ID, peer credential kid hex) of each context EDHOC set up.
    peers: Vec<(Vec<u8>, String)>,
}

impl EdhocResponderTable {
    /// The EDHOC credential kid (hex) of the peer behind the context with `recipient_id`.
    pub(crate) fn peer_kid(&self, recipient_id: &[u8]) -> Option<&str> {
        self.peers
            .iter()
            .find(|(id, _)| id == recipient_id)
            .map(|(_, kid)| kid.as_str())
    }
}

/// Whether `message` is a POST to /.well-known/edhoc.
pub(crate) fn is_edhoc_request(message: &Message<'_>) -> bool {
    message.code() == Code::POST && message.uri_path().eq([".well-known", "edhoc"])
}

impl Endpoint {
    /// Answers EDHOC as Responder at /.well-known/edhoc with `config` (RFC 9528 Appendix A.2).
    pub fn enable_edhoc(&mut self, config: EdhocConfig) {
        self.edhoc = Some(alloc::boxed::Box::new(EdhocResponderTable {
            config,
            pending: Vec::new(),
            peers: Vec::new(),
        }));
    }

    /// Whether `message` is an EDHOC + OSCORE request (RFC 9668 §3.2) for this endpoint,
    /// which answers EDHOC.
    pub(crate) fn is_combined_edhoc(&self, message: &Message<'_>) -> bool {
        self.edhoc.is_some()
            && message.has_option(OptionNumber::EDHOC)
            && message.has_option(OptionNumber::OSCORE)
    }

    /// The EDHOC peer kid (hex) of the OSCORE context with `recipient_id`, if EDHOC set it up.
    pub fn edhoc_peer_kid(&self, recipient_id: &[u8]) -> Option<&str> {
        self.edhoc.as_ref()?.peer_kid(recipient_id)
    }

    /// Answers an EDHOC request; `false` when EDHOC is not enabled and the request goes on.
    pub(crate) fn answer_edhoc(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        message: &Message<'_>,
    ) -> bool {
        let Some(mut table) = self.edhoc.take() else {
            return false;
        };
        let lifetime = self.config.transmission.exchange_lifetime();
        let (code, payload) = self.edhoc_step(now, lifetime, &mut table, message.payload());
        self.edhoc = Some(table);
        let options = [crate::opt(OptionNumber::CONTENT_FORMAT, EDHOC_CBOR_SEQ)];
        let options: &[CoapOption<'_>] = if code == Code::CHANGED && !payload.is_empty() {
            &options
        } else {
            &[]
        };
        self.reply_now(now, target, code, options, &payload);
        true
    }

    fn edhoc_step(
        &mut self,
        now: Instant,
        lifetime: Duration,
        table: &mut EdhocResponderTable,
        payload: &[u8],
    ) -> (Code, Vec<u8>) {
        let refuse = |e: covey_edhoc::EdhocError| (Code::BAD_REQUEST, e.to_string().into_bytes());
        match parse_request(payload) {
            Err(e) => refuse(e),
            Ok(EdhocRequest::Message1(message_1)) => {
                // Sessions never completed make room once their exchange lifetime is over.
                table.pending.retain(|p| now < p.started + lifetime);
                if table.pending.len() >= table.config.max_sessions {
                    return (
                        Code::SERVICE_UNAVAILABLE,
                        b"too many EDHOC sessions in progress".to_vec(),
                    );
                }
                let oscore = &self.oscore;
                let table_ref = &*table;
                // A free C_R first; when every one is taken, the C_R of the EDHOC context used
                // least recently, which gives it up and is replaced once this session
                // completes (the Responder passes over C_I, which C_R must differ from).
                let rank = |id: &[u8]| {
                    if table_ref.pending.iter().any(|p| p.c_r == id) {
                        None
                    } else if (0..)
                        .map_while(|i| oscore.get(i))
                        .all(|c| c.recipient_id() != id)
                    {
                        Some(0)
                    } else {
                        oscore
                            .last_verified(id, |c| replaceable(table_ref, c))
                            .map(|stamp| stamp.saturating_add(1))
                    }
                };
                match Responder::respond(&table.config.own, message_1, rank) {
                    Err(e @ covey_edhoc::EdhocError::NoFreeConnectionId) => {
                        (Code::SERVICE_UNAVAILABLE, e.to_string().into_bytes())
                    }
                    Err(e) => refuse(e),
                    Ok((state, message_2)) => {
                        table.pending.push(Pending {
                            c_r: state.c_r().to_vec(),
                            started: now,
                            state,
                        });
                        (Code::CHANGED, message_2)
                    }
                }
            }
            Ok(EdhocRequest::Message3 { c_r, message_3 }) => {
                match self.complete_edhoc(now, table, c_r, message_3) {
                    Ok(message_4) => (Code::CHANGED, message_4),
                    Err(refusal) => refusal,
                }
            }
        }
    }

    /// The context EDHOC set up that verified a request least recently, of those no
    /// session in progress is about to replace.
    fn least_recent_edhoc_context(&self, table: &EdhocResponderTable) -> Option<usize> {
        self.oscore.least_recent(|c| replaceable(table, c))
    }

    /// Verifies `message_3` of the session waiting under `c_r` and adds its OSCORE context,
    /// in the place of the EDHOC context with the same Recipient ID (one whose C_R the
    /// session took over) or, when no more fit, of the one used least recently; returns
    /// message_4, or the error response that refuses it.
    fn complete_edhoc(
        &mut self,
        now: Instant,
        table: &mut EdhocResponderTable,
        c_r: &[u8],
        message_3: &[u8],
    ) -> Result<Vec<u8>, (Code, Vec<u8>)> {
        let Some(index) = table.pending.iter().position(|p| p.c_r == c_r) else {
            return Err((
                Code::BAD_REQUEST,
                b"no EDHOC session with this C_R".to_vec(),
            ));
        };
        let pending = table.pending.swap_remove(index);
        let (established, message_4) = pending
            .state
            .receive_message_3(message_3, &table.config.trusted)
            .map_err(|e| (Code::BAD_REQUEST, e.to_string().into_bytes()))?;
        let no_room = || {
            (
                Code::SERVICE_UNAVAILABLE,
                b"no room for another OSCORE context".to_vec(),
            )
        };
        let context = established.security_context().map_err(|_| no_room())?;
        let replaced = match self.oscore.serving_with(&established.recipient_id) {
            Some(same_id) => Some(same_id),
            None if self.oscore.is_full() => {
                Some(self.least_recent_edhoc_context(table).ok_or_else(no_room)?)
            }
            None => None,
        };
        match replaced {
            Some(index) => {
                if let Some(old) = self.oscore.get(index).map(|c| c.recipient_id().to_vec()) {
                    table.peers.retain(|(id, _)| *id != old);
                }
                self.replace_oscore_context(now, index, context);
            }
            None => {
                self.add_oscore_context(context).map_err(|_| no_room())?;
            }
        }
        table
            .peers
            .retain(|(id, _)| *id != established.recipient_id);
        table
            .peers
            .push((established.recipient_id, established.peer_kid));
        Ok(message_4)
    }

    /// An EDHOC + OSCORE request (RFC 9668 §3.3.1): message_3, which goes first in the
    /// payload, completes the session whose C_R is the OSCORE kid and adds its context;
    /// the request without the EDHOC option and message_3 is returned, for OSCORE to verify
    /// with that context as any other. `None` once answered with an error (message_4 is
    /// not sent: the protected response confirms the key).
    pub(crate) fn take_combined_edhoc(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        message: &Message<'_>,
    ) -> Option<Vec<u8>> {
        let mut table = self.edhoc.take()?;
        let kid = message
            .option(OptionNumber::OSCORE)
            .and_then(|value| covey_oscore::OscoreOption::parse(value).ok())
            .and_then(|option| option.kid);
        let completed = match (kid, split_combined_payload(message.payload())) {
            (None, _) => Err((Code::BAD_OPTION, b"malformed OSCORE message".to_vec())),
            (_, Err(e)) => Err((Code::BAD_REQUEST, e.to_string().into_bytes())),
            (Some(c_r), Ok((message_3, _))) => self.complete_edhoc(now, &mut table, c_r, message_3),
        };
        self.edhoc = Some(table);
        if let Err((code, diagnostic)) = completed {
            self.reply_now(now, target, code, &[], &diagnostic);
            return None;
        }
        let (_, ciphertext) = split_combined_payload(message.payload()).ok()?;
        rebuilt(message, &[OptionNumber::EDHOC], ciphertext)
    }
}

/// Whether context `c` is one EDHOC set up that no session in progress is about to replace:
/// it may give its place, and its C_R, to a new session.
fn replaceable(table: &EdhocResponderTable, c: &SecurityContext) -> bool {
    let id = c.recipient_id();
    table.peers.iter().any(|(peer, _)| peer == id) && !table.pending.iter().any(|p| p.c_r == id)
}
