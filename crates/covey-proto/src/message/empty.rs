//! Empty messages (RFC 7252 §4.2–4.3): the ACK or RST that carries no request or response.

use crate::message::outbox::{OutSource, Outbox};
use crate::message::reply_cache::ReplyCache;
use crate::message::wire::Outgoing;
use crate::storage::buffer_pool::BufferPool;
use covey_core::{Code, MessageType};

/// Encodes an empty ACK or RST with message ID `mid`: with `cache`, into the reply cache
/// (remembered for duplicates), else into an outbox slot. Returns where it is, for the
/// caller to queue, or `None` when there was no room or it could not be encoded.
pub(crate) fn encode_empty(
    replies: &mut ReplyCache,
    outbox: &mut Outbox,
    pool: &mut BufferPool,
    message_type: MessageType,
    mid: u16,
    cache: bool,
) -> Option<OutSource> {
    let m = Outgoing {
        message_type,
        code: Code::EMPTY,
        message_id: mid,
        token: &[],
        options: &[],
        extra: &[],
        payload: &[],
    };
    #[cfg(feature = "reply-cache")]
    if cache {
        let reply = replies.encode(&m).ok()?;
        return Some(OutSource::Reply(reply));
    }
    // Without the cache a reply is kept only until it is sent.
    #[cfg(not(feature = "reply-cache"))]
    let _ = (replies, cache);
    let slot = outbox.take_slot()?;
    if outbox.buf_mut(slot).encode(&m, pool).is_ok() {
        Some(OutSource::Slot(slot))
    } else {
        outbox.release(slot, pool);
        None
    }
}
