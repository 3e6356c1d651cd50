//! Answers whose code is no response code (a request code in an ACK, or a reserved class
//! 1, 3, 6 or 7): format errors (RFC 7252 §4.2, §4.3) that end the request they answer.

use crate::endpoint::Endpoint;
#[cfg(feature = "client")]
use crate::event::Failure;
#[cfg(feature = "client")]
use crate::message::transmission::{TransmissionEnd, TransmissionOwner};
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{MessageType, Token};

#[cfg(feature = "client")]
impl Endpoint {
    /// A message from `remote` whose code is no response code was rejected (and counted);
    /// the request it answers, matched by message ID for an ACK and by token otherwise,
    /// fails now: the request did arrive, and asking again would fetch the same answer.
    /// One of many answers to a multicast request ends nothing.
    pub(crate) fn fail_on_invalid_code(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        kind: MessageType,
        message_id: u16,
        token: Option<Token>,
    ) {
        let exchange = match kind {
            MessageType::Acknowledgement => {
                let Some(tx) = self.transmissions.find(remote, message_id) else {
                    return;
                };
                let Some(TransmissionOwner::Request(key)) =
                    self.transmissions.get(tx).map(|t| t.owner)
                else {
                    return;
                };
                self.end_transmission(now, tx, TransmissionEnd::Acknowledged);
                Some(key)
            }
            MessageType::Confirmable | MessageType::NonConfirmable => {
                token.and_then(|t| self.exchanges.by_token(&t)).filter(|k| {
                    self.exchanges
                        .get(*k)
                        .is_some_and(|e| !e.multicast && e.remote == remote)
                })
            }
            MessageType::Reset => None,
        };
        if let Some(key) = exchange {
            self.fail_exchange(now, key, Failure::InvalidResponseCode);
        }
    }
}

#[cfg(not(feature = "client"))]
impl Endpoint {
    /// A server-only endpoint (no `client` feature) has no request such an answer could end.
    pub(crate) fn fail_on_invalid_code(
        &mut self,
        _now: Instant,
        _remote: SocketAddr,
        _kind: MessageType,
        _message_id: u16,
        _token: Option<Token>,
    ) {
    }
}
