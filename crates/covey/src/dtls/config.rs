//! How a DTLS session table is set up: credentials and the bounds that keep its memory fixed.

use std::time::Duration;

use super::credentials::{CertifiedKey, PskKeys};
use super::trust_anchors::TrustAnchors;

/// What a DTLS endpoint proves itself with, and its limits.
#[derive(Debug, Clone, Default)]
pub struct DtlsConfig {
    /// Pre-shared keys: a client presents the first, a server accepts any (suite
    /// TLS_PSK_WITH_AES_128_CCM_8).
    pub psk: Option<PskKeys>,
    /// An ECDSA certificate and key (suites TLS_ECDHE_ECDSA_WITH_AES_*_GCM); used instead of
    /// the pre-shared keys when both are given.
    pub certificate: Option<CertifiedKey>,
    /// Whether a server asks clients for a certificate of their own (certificate mode only).
    pub require_client_certificate: bool,
    /// The CAs that vouch for peers' certificates: a peer's subject is part of its identity
    /// only when its certificate validates against them; without, peers are known by their
    /// certificate's fingerprint alone.
    pub trust_anchors: Option<TrustAnchors>,
    /// Bounds on sessions and handshakes.
    pub limits: DtlsLimits,
}

/// Bounds on the session table: its memory is at most about
/// `(max_sessions + max_handshakes)` sessions.
#[derive(Debug, Clone)]
pub struct DtlsLimits {
    /// Established sessions at once; beyond, the least recently active one is dropped.
    pub max_sessions: usize,
    /// Handshakes in progress at once.
    pub max_handshakes: usize,
    /// Handshakes peers open from one prefix (IPv4 /24, IPv6 /64), whatever the address and
    /// port; an address in `known_peers` has a share of its own.
    pub max_handshakes_per_prefix: usize,
    /// Handshake slots only addresses that authenticated recently (and this side's own
    /// handshakes) may use, so strangers cannot fill them all; at most half the slots.
    pub reserved_handshakes: usize,
    /// How many recently authenticated addresses are remembered for the reserve.
    pub known_peers: usize,
    /// How long an established session may stay silent before it is closed.
    pub idle_timeout: Duration,
    /// How long a handshake may take.
    pub handshake_timeout: Duration,
    /// How long a peer's handshake may take once it returned the cookie: all that is left
    /// then is its last flight, so a peer that stops there frees its slot this soon.
    pub stall_timeout: Duration,
    /// Plaintext datagrams that may wait for a client's handshake to finish.
    pub max_queued: usize,
    /// The largest record sent (dimpl's MTU).
    pub mtu: usize,
    /// The largest Certificate message (the peer's certificate chain, in bytes) a handshake
    /// accepts; a larger one fails the handshake.
    pub max_peer_certificate: usize,
}

impl Default for DtlsLimits {
    fn default() -> DtlsLimits {
        DtlsLimits {
            max_sessions: 1024,
            max_handshakes: 64,
            max_handshakes_per_prefix: 8,
            reserved_handshakes: 16,
            known_peers: 256,
            idle_timeout: Duration::from_secs(600),
            handshake_timeout: Duration::from_secs(30),
            stall_timeout: Duration::from_secs(5),
            max_queued: 32,
            mtu: 1400,
            max_peer_certificate: 16 * 1024,
        }
    }
}

/// The most a record adds to the plaintext it carries: its header (13 bytes), an explicit
/// nonce (8) and an authentication tag (16), as for the AES-GCM suites.
const RECORD_OVERHEAD: usize = 13 + 8 + 16;

impl DtlsLimits {
    /// The largest datagram a session sends: a datagram of a handshake flight (up to the
    /// MTU), or a record carrying a plaintext datagram of up to `max_plaintext` bytes.
    pub fn max_datagram(&self, max_plaintext: usize) -> usize {
        self.mtu.max(max_plaintext + RECORD_OVERHEAD)
    }
}

impl DtlsConfig {
    /// Pre-shared keys with default limits.
    pub fn psk(keys: PskKeys) -> DtlsConfig {
        DtlsConfig {
            psk: Some(keys),
            ..DtlsConfig::default()
        }
    }

    /// A certificate with default limits; a server does not ask clients for one.
    pub fn certificate(certified: CertifiedKey) -> DtlsConfig {
        DtlsConfig {
            certificate: Some(certified),
            ..DtlsConfig::default()
        }
    }
}
