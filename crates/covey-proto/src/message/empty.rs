//! Empty messages (RFC 7252 §4.2–4.3): the ACK or RST that carries no request or response.

use crate::message::wire::Outgoing;
use covey_core::{Code, MessageType};

/// An empty ACK or RST with message ID `mid`.
pub(crate) fn empty(message_type: MessageType, mid: u16) -> Outgoing<'static> {
    Outgoing {
        message_type,
        code: Code::EMPTY,
        message_id: mid,
        token: &[],
        options: &[],
        extra: &[],
        payload: &[],
    }
}
