//! How the server keeps itself from being used as an amplifier (RFC 7252 §11.3,
//! RFC 9175 §2.4, and QUIC's budget for unvalidated paths, RFC 9000 §8.1): what a peer whose
//! address is not verified may receive, and how long Echo values and verifications last.

use crate::Duration;

/// Limits on what is sent to peers that have not shown they receive at their address.
#[derive(Debug, Clone)]
pub struct AmplificationLimit {
    /// Whether the limits apply at all (off: every peer is answered in full).
    pub enabled: bool,
    /// An unverified address may be sent at most this many times the bytes it sent, counted
    /// over every datagram either way (RFC 9175 and RFC 9000 suggest 3).
    pub factor: u32,
    /// How long an Echo value stays acceptable after it is issued (at most twice this).
    pub echo_lifetime: Duration,
    /// How long a peer stays verified after it echoed a fresh value.
    pub verified_lifetime: Duration,
    /// Verified peer addresses remembered at once; beyond, the soonest to expire goes.
    pub max_verified_peers: usize,
    /// Unverified addresses whose bytes are counted at once; beyond, the oldest account is
    /// forgotten (and its address starts again with nothing to spend).
    pub max_unverified_peers: usize,
    /// How long an unverified address's account lasts after its last datagram either way
    /// (at least EXCHANGE_LIFETIME, so retransmissions are still counted).
    pub account_lifetime: Duration,
}

impl Default for AmplificationLimit {
    /// RFC 9175's limits, on wherever the build has them (the `address-validation` feature):
    /// a node's build without it gets a default it can run, and refuses only a limit asked for.
    fn default() -> AmplificationLimit {
        AmplificationLimit {
            enabled: cfg!(feature = "address-validation"),
            factor: 3,
            echo_lifetime: Duration::from_secs(60),
            verified_lifetime: Duration::from_secs(600),
            max_verified_peers: 1024,
            max_unverified_peers: 1024,
            account_lifetime: Duration::from_secs(300),
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

    /// What a `request_len`-byte request alone earns an unverified peer: a response larger
    /// than this draws on what earlier datagrams earned, and goes as a CON when it can, so
    /// its acknowledgement verifies the address.
    pub fn share_of(&self, request_len: usize) -> usize {
        request_len.saturating_mul(self.factor as usize)
    }
}
