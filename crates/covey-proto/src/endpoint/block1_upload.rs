//! Block1 uploads taken in on the server (RFC 7959 §2.5), answering 2.31 Continue, and 4.08,
//! 4.00, 4.13 or 5.03 along the way.

use super::Endpoint;
use crate::block::UploadStep;
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
        let key = self.transfer_key(target.remote, message, target.oscore_context());
        let step = {
            let verified = self.address_validation.verifier(now);
            self.block_transfers
                .receive_block1(now, key, b, message.payload(), size1, &verified)
        };
        self.arm_block_expiry();
        match step {
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
            UploadStep::Busy => {
                self.stats.drop(crate::stats::DropCause::Overload);
                if !multicast {
                    self.reply_busy(now, target);
                }
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
}
