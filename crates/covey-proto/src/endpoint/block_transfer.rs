//! The endpoint's side of block-wise transfers (RFC 7959): the key that names a transfer,
//! slicing responses with this endpoint's block size, serving later blocks from the kept
//! body, and the timer on which idle uploads and kept bodies expire even on a server with
//! nothing else to do. Block1 uploads come in through `block1_upload.rs`; the transfers
//! themselves are the block layer's [`BlockTransfers`](crate::block::BlockTransfers).

use super::Endpoint;
use crate::block::TransferKey;
use crate::Instant;
#[cfg(feature = "block2-cache")]
use crate::{
    event::IncomingId, message::wire::Outgoing, request::Response,
    storage::datagram_buf::DatagramBuf, storage::slab::SlabKey,
};
#[cfg(feature = "block2-cache")]
use alloc::vec::Vec;
use core::net::SocketAddr;
use covey_core::Message;
#[cfg(feature = "block2-cache")]
use covey_core::{Block, CoapOption, MessageType};

impl Endpoint {
    /// The block-wise transfer request `message` from `remote` belongs to. A request
    /// verified with an OSCORE context (`context`) has transfers apart from plain ones and
    /// other contexts', so a body kept for one is never served to another; the outer
    /// blocks of a protected message are told apart by its OSCORE option (RFC 8613
    /// §4.1.3.4.2: one message, one kid and Partial IV).
    pub(crate) fn transfer_key(
        &self,
        remote: SocketAddr,
        message: &Message<'_>,
        context: Option<usize>,
    ) -> TransferKey {
        let (remote, mut hash) = self.block_transfers.key(remote, message);
        if let Some(c) = context {
            hash ^= (c as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        // Without OSCORE, a request with the option never gets here (it is critical).
        #[cfg(feature = "oscore")]
        if let Some(oscore) = message.option(covey_core::OptionNumber::OSCORE) {
            // FNV-1a: only blocks from one remote are told apart by it.
            let fnv = oscore.iter().fold(0xCBF2_9CE4_8422_2325_u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01B3)
            });
            hash = hash.rotate_left(17) ^ fnv;
        }
        (remote, hash)
    }

    /// The transfer key of incoming request `key` (its stored datagram), if it parses.
    #[cfg(feature = "block2-cache")]
    pub(crate) fn incoming_transfer_key(&self, key: SlabKey) -> Option<TransferKey> {
        let inc = self.incoming.get(key)?;
        let request = Message::parse(self.incoming.bytes(key)).ok()?;
        Some(self.transfer_key(inc.remote, &request, inc.target().oscore_context()))
    }

    /// Keeps the whole body of a response that is being sliced, keyed by the request.
    #[cfg(feature = "block2-cache")]
    pub(crate) fn cache_body(&mut self, now: Instant, key: SlabKey, response: &Response<'_>) {
        let Some(transfer) = self.incoming_transfer_key(key) else {
            return;
        };
        let head = Outgoing {
            message_type: MessageType::NonConfirmable,
            code: response.code,
            message_id: 0,
            token: &[],
            options: response.options,
            extra: &[],
            payload: &[],
        };
        let mut buf = DatagramBuf::default();
        if buf.encode(&head, &mut self.pool).is_ok() {
            {
                let verified = self.address_validation.verifier(now);
                let (head, body) = (buf.as_slice().to_vec(), response.payload.to_vec());
                self.block_transfers
                    .keep_body(now, transfer, head, body, &verified);
            }
            self.arm_block_expiry();
        }
        buf.release(&mut self.pool);
    }

    /// Answers a later Block2 request from the cached body, if there is one.
    #[cfg(feature = "block2-cache")]
    pub(crate) fn serve_cached_block(
        &mut self,
        now: Instant,
        id: IncomingId,
        transfer: TransferKey,
        block: Block,
    ) -> bool {
        let Some(cached) = self.block_transfers.take_fresh_body(now, &transfer) else {
            return false;
        };
        let Ok(head) = Message::parse(&cached.head) else {
            return false;
        };
        let options: Vec<CoapOption<'_>> = head.options().collect();
        let response = Response {
            code: head.code(),
            options: &options,
            payload: &cached.body,
        };
        let Some(inc) = self.incoming.get_mut(id.0) else {
            return false;
        };
        inc.from_cache = true;
        let (remote, token) = (inc.remote, inc.token);
        // The block that goes out may be smaller than the one asked for (an unverified
        // client's budget): the body is kept until its true last block has left.
        let sent = self
            .block2_to_send(
                now,
                id.0,
                remote,
                &response,
                &[],
                token.as_bytes(),
                Some(block),
            )
            .block
            .unwrap_or(block);
        let served = self.respond(now, id, &response).is_ok();
        let last = sent.offset() + sent.size() >= cached.body.len();
        drop(options);
        if !last {
            self.block_transfers.put_back_body(transfer, cached);
        }
        served
    }

    /// Forgets uploads idle for EXCHANGE_LIFETIME and bodies past their lifetime, and sets
    /// the timer for the next to go.
    pub(crate) fn expire_block_state(&mut self, now: Instant) {
        self.block_transfers.expire(now);
        self.arm_block_expiry();
    }

    /// Sets the block-expiry timer to when the next upload or body goes (or cancels it).
    pub(crate) fn arm_block_expiry(&mut self) {
        let next = self.block_transfers.next_expiry();
        let id = self.timer_layout.block_expiry_id();
        match next {
            Some(at) => self.timers.set(id, at),
            None => self.timers.cancel(id),
        }
    }
}
