//! DTLS 1.2 for `coaps://` (RFC 7252 §9): a sans-IO session table that wraps the engine's
//! plaintext datagrams in records, one session per (local socket, peer), through the `dimpl`
//! DTLS engine.

mod alert;
mod config;
mod credentials;
mod known_peers;
mod peer_certificate;
mod peer_prefix;
mod psk_resolver;
mod record;
mod session;
mod session_table;
mod signature_algorithms;
mod stats;
mod trust_anchors;

pub use config::{DtlsConfig, DtlsLimits};
pub use credentials::{CertifiedKey, CredentialsError, PskKeys, MAX_PSK_IDENTITY, MAX_PSK_KEY};
pub use session_table::{SessionTable, TableTransmit};
pub use stats::{DtlsState, DtlsStats};
pub use trust_anchors::TrustAnchors;

/// The default port of `coaps://` (RFC 7252 §6.2).
pub const DEFAULT_PORT: u16 = 5684;
