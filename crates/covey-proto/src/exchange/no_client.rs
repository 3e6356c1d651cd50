//! What a server-only build (no `client` feature) answers where the server side asks about
//! the endpoint's own requests: there are none.

use crate::message::peer::PeerKey;

/// The client table of an endpoint that sends no requests.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoClientExchanges;

impl NoClientExchanges {
    /// Requests in flight to `peer`, for a blind RTO's count of ongoing exchanges: none.
    pub fn in_flight(&self, _peer: PeerKey) -> usize {
        0
    }

    /// Whether an exchange of ours keeps `peer`'s entry from being evicted: never.
    pub fn is_busy(&self, _peer: PeerKey) -> bool {
        false
    }
}
