//! Block-wise transfers (RFC 7959) on the server: slicing large responses into Block2
//! blocks, keeping their bodies while a transfer lasts, and reassembling Block1 uploads with
//! bounded memory.

mod body_cache;
mod slicing;
mod transfers;
#[cfg(feature = "block1-uploads")]
mod uploads;

pub(crate) use slicing::slice_block2;
pub(crate) use transfers::{BlockTransfers, TransferKey};
#[cfg(feature = "block1-uploads")]
pub(crate) use uploads::UploadStep;
