//! Requests larger than the endpoint accepts (RFC 7252 §4.6, §5.9.2.9): a CON is answered
//! 4.13 Request Entity Too Large with Size1 from its header and token alone, so the client
//! learns why instead of retransmitting into silence; anything else that large is dropped.

use crate::endpoint::Endpoint;
use crate::exchange::incoming_exchange::ResponseTarget;
use crate::hash::{fingerprint, MidKey};
use crate::message::dedup::DedupState;
use crate::message::outbox::OutSource;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{uint, Block, CoapOption, Code, Header, MessageType, OptionNumber, Token};

impl Endpoint {
    /// Answers an oversized unicast CON request with 4.13, Size1 (the largest body this
    /// endpoint takes) and, where it takes Block1 uploads, Block1 (the block size it
    /// prefers, RFC 7959 §2.9.3).
    /// The datagram may be cut short by the driver's buffer: only the header and token
    /// are read.
    pub(crate) fn answer_too_large(&mut self, now: Instant, remote: SocketAddr, datagram: &[u8]) {
        let Ok(header) = Header::parse(datagram) else {
            return;
        };
        let token_end = 4 + usize::from(header.token_length);
        let token = datagram.get(4..token_end).and_then(Token::new);
        let (true, true, Some(token)) = (
            header.message_type == MessageType::Confirmable,
            header.code.is_request(),
            token,
        ) else {
            return;
        };
        let key = MidKey::new(remote, header.message_id);
        let print = fingerprint(&self.hasher, datagram);
        if let Some(state) = self.messages.recall(&key, print) {
            // A retransmission: the 4.13 goes again from the reply cache.
            self.stats.duplicates += 1;
            if let DedupState::Replied(reply) = state {
                if self.messages.reply(reply).is_some() {
                    self.queue_datagram(remote, OutSource::Reply(reply));
                }
            }
            return;
        }
        let expires = now + self.lifetimes.exchange;
        let dedup = self
            .messages
            .remember(now, key, print, DedupState::Ignore, expires);
        let target = ResponseTarget {
            remote,
            message_id: header.message_id,
            token,
            confirmable: true,
            acked: false,
            dedup,
            #[cfg(feature = "oscore")]
            oscore: None,
        };
        let (mut size, mut block) = ([0u8; 4], [0u8; 4]);
        let size1 = CoapOption {
            number: OptionNumber::SIZE1,
            value: uint::encode(self.largest_body(), &mut size),
        };
        // The validated block_szx is 0 to 6, so the hint is always there.
        let hint = Block {
            num: 0,
            more: false,
            szx: self.config.block_szx,
        };
        let block1 = CoapOption {
            number: OptionNumber::BLOCK1,
            value: hint.encode(&mut block),
        };
        let (options, diagnostic): (&[CoapOption<'_>], &[u8]) =
            match cfg!(feature = "block1-uploads") {
                true => (
                    &[block1, size1],
                    b"request larger than one message; send it block-wise",
                ),
                false => (&[size1], b"request larger than one message"),
            };
        self.reply_now(
            now,
            target,
            Code::REQUEST_ENTITY_TOO_LARGE,
            options,
            diagnostic,
        );
    }

    /// The largest request body this endpoint takes (Size1 of a 4.13): one message's, or
    /// `max_body_size` reassembled from Block1 blocks.
    fn largest_body(&self) -> u32 {
        let largest = match cfg!(feature = "block1-uploads") {
            true => self.config.max_body_size,
            false => self.config.max_message_size,
        };
        u32::try_from(largest).unwrap_or(u32::MAX)
    }
}
