//! Block-wise transfers (RFC 7959) on the server: slicing large responses into Block2
//! blocks, keeping their bodies while a transfer lasts, and reassembling Block1 uploads with
//! bounded memory.

mod body_cache;
mod expiry;
mod server;
mod slicing;
mod uploads;

pub(crate) use body_cache::BodyCache;
pub(crate) use uploads::Uploads;
