//! A tap on every datagram the driver sends and receives, for exchange traces (`covey -v`).

use std::net::SocketAddr;
use std::sync::Arc;

/// Which way a traced datagram went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceDirection {
    /// Handed to the socket.
    Sent,
    /// Read from the socket.
    Received,
}

/// One datagram seen by the driver.
#[derive(Debug, Clone, Copy)]
pub struct Trace<'a> {
    /// Sent or received.
    pub direction: TraceDirection,
    /// The other side.
    pub peer: SocketAddr,
    /// The datagram as on the wire.
    pub datagram: &'a [u8],
}

/// A callback invoked for every traced datagram (keep it quick: it runs on the driver).
pub type TraceFn = Arc<dyn Fn(&Trace<'_>) + Send + Sync>;
