//! Responses held for the application until its next `poll_event`.

use alloc::vec::Vec;
use core::net::SocketAddr;

/// A response held until the application's next `poll_event`.
#[derive(Debug)]
pub(crate) struct HeldResponse {
    pub source: SocketAddr,
    /// The whole body of a block-wise transfer.
    pub body: Option<Vec<u8>>,
}
