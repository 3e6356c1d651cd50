//! How the server keeps itself from being used as an amplifier (RFC 7252 §11.3,
//! RFC 9175 §2.4): what a peer whose address is not verified may receive, and how long
//! Echo values and verifications last.

use crate::Duration;

/// Limits on what is sent to peers that have not shown they receive at their address.
#[derive(Debug, Clone)]
pub struct AmplificationLimit {
    /// Whether the limits apply at all (off: every peer is answered in full).
    pub enabled: bool,
    /// A response larger than this many times its request, to an unverified peer, is cut
    /// to a Block2 block that fits, with an Echo option (RFC 9175 suggests 3).
    pub factor: u32,
    /// How long an Echo value stays acceptable after it is issued (at most twice this).
    pub echo_lifetime: Duration,
    /// How long a peer stays verified after it echoed a fresh value.
    pub verified_lifetime: Duration,
    /// Verified peer addresses remembered at once; beyond, the soonest to expire goes.
    pub max_verified_peers: usize,
}

impl Default for AmplificationLimit {
    fn default() -> AmplificationLimit {
        AmplificationLimit {
            enabled: true,
            factor: 3,
            echo_lifetime: Duration::from_secs(60),
            verified_lifetime: Duration::from_secs(600),
            max_verified_peers: 1024,
        }
    }
}

impl AmplificationLimit {
    /// No limit: every peer is treated as verified.
    pub fn off() -> AmplificationLimit {
        AmplificationLimit {
            enabled: false,
            ..AmplificationLimit::default()
        }
    }

    /// The largest response (bytes) an unverified peer may get for a `request_len`-byte
    /// request.
    pub fn budget(&self, request_len: usize) -> usize {
        request_len.saturating_mul(self.factor as usize)
    }
}
