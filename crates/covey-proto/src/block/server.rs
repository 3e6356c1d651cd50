//! The server's block-wise steps (RFC 7959): taking Block1 uploads in, answering 2.31,
//! 4.08 and 4.13 along the way, and slicing responses with this endpoint's block size.

use super::slicing::slice_block2;
use super::uploads::UploadStep;
use crate::endpoint::Endpoint;
use crate::exchange::incoming_exchange::ResponseTarget;
use crate::Instant;
use alloc::vec::Vec;
use covey_core::{uint, Block, CoapOption, Code, Message, OptionNumber};

impl Endpoint {
    /// Takes Block1 block `b` of a request in: the whole body once the last block arrived,
    /// else `None` after answering (2.31 Continue, or 4.08, 4.00, 4.13 as RFC 7959 says).
    pub(crate) fn receive_block1(
        &mut self,
        now: Instant,
        target: ResponseTarget,
        multicast: bool,
        message: &Message<'_>,
        b: Block,
        size1: Option<u32>,
    ) -> Option<Vec<u8>> {
        let key = self.uploads.key(target.remote, message);
        match self.uploads.receive(now, key, b, message.payload(), size1) {
            UploadStep::Continue(ack) => {
                let mut value = [0u8; 4];
                let options = [CoapOption {
                    number: OptionNumber::BLOCK1,
                    value: ack.encode(&mut value),
                }];
                self.reply_now(now, target, Code::CONTINUE, &options, &[]);
                None
            }
            UploadStep::Complete(whole) => Some(whole),
            UploadStep::Incomplete => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::REQUEST_ENTITY_INCOMPLETE,
                    b"missing block",
                );
                None
            }
            UploadStep::BadBlock => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::BAD_REQUEST,
                    b"block payload is not the block size",
                );
                None
            }
            UploadStep::TooLarge(limit) => {
                let mut value = [0u8; 4];
                let options = [CoapOption {
                    number: OptionNumber::SIZE1,
                    value: uint::encode(limit as u32, &mut value),
                }];
                if !multicast {
                    self.reply_now(
                        now,
                        target,
                        Code::REQUEST_ENTITY_TOO_LARGE,
                        &options,
                        b"request body too large",
                    );
                }
                None
            }
        }
    }

    /// The Block2 slice of `payload` this endpoint sends for a request that asked for
    /// `requested`, with its preferred block size; see [`slice_block2`].
    pub(crate) fn slice_response<'p>(
        &self,
        payload: &'p [u8],
        requested: Option<Block>,
    ) -> Result<Option<(Block, &'p [u8])>, ()> {
        slice_block2(payload, requested, self.config.block_szx)
    }
}
