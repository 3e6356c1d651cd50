//! Block-wise transfers (RFC 7959) on the server: slicing large responses into Block2
//! blocks, keeping their bodies while a transfer lasts, and reassembling Block1 uploads with
//! bounded memory.

#[cfg(feature = "block2-cache")]
mod body_cache;
mod slicing;
#[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
mod transfers;
#[cfg(feature = "block1-uploads")]
mod uploads;

pub(crate) use slicing::slice_block2;
#[cfg(any(feature = "block1-uploads", feature = "block2-cache"))]
pub(crate) use transfers::{BlockTransfers, TransferKey};
#[cfg(feature = "block1-uploads")]
pub(crate) use uploads::UploadStep;
