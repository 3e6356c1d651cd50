//! Outer Block1 on the server (RFC 8613 §4.1.3.4.2): a proxy (or a client) may split a
//! protected request into blocks with outer Block1 options, which are processed as RFC 7959
//! says before OSCORE sees anything. Each block but the last is taken in and answered 2.31
//! Continue in the clear (nothing can be verified yet); the last puts the OSCORE message
//! together, which then goes on to be verified like one that came whole, and its protected
//! response carries the outer Block1 of the last block. The client puts a response split
//! with outer Block2 together the same way (`oscore_client.rs`).

use crate::endpoint::Endpoint;
use crate::exchange::incoming_exchange::ResponseTarget;
use crate::message::wire::rebuilt;
use crate::Instant;
use alloc::vec::Vec;
use covey_core::{uint, Block, Code, Message, OptionNumber};

/// What became of a request at the outer Block1 step.
pub(crate) enum OuterBlocks {
    /// No outer Block1: the request goes on as it came.
    None,
    /// A block taken in (or refused) and answered: nothing else to do yet.
    Answered,
    /// The last block: the whole OSCORE message, and the last block's option.
    Whole(Vec<u8>, Block),
}

impl Endpoint {
    /// Takes in `message` if it is a block of a protected request split with outer Block1.
    pub(crate) fn take_outer_block1(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        multicast: bool,
        message: &Message<'_>,
    ) -> OuterBlocks {
        let Some(value) = message
            .option(OptionNumber::BLOCK1)
            .filter(|_| message.has_option(OptionNumber::OSCORE))
        else {
            return OuterBlocks::None;
        };
        let Ok(block) = Block::decode(value) else {
            self.reply_error(
                now,
                target,
                multicast,
                Code::BAD_REQUEST,
                b"invalid outer Block1 option",
            );
            return OuterBlocks::Answered;
        };
        let size1 = message.option(OptionNumber::SIZE1).and_then(uint::decode);
        let Some(body) = self.receive_block1(now, target, multicast, message, block, size1) else {
            return OuterBlocks::Answered;
        };
        // The last block's header and options but its outer Block1 and Size1, and the body.
        match rebuilt(message, &[OptionNumber::BLOCK1, OptionNumber::SIZE1], &body) {
            Some(whole) => OuterBlocks::Whole(whole, block),
            None => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::REQUEST_ENTITY_TOO_LARGE,
                    b"OSCORE message too large",
                );
                OuterBlocks::Answered
            }
        }
    }
}
