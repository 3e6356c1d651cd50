//! EDHOC (RFC 9528) over CoAP to set up OSCORE security contexts without pre-shared keys,
//! sans-IO: byte strings in, byte strings and a [`covey_oscore::SecurityContext`] out.
//!
//! Wraps the `lakers` implementation; supports method 3 (STAT-STAT), cipher suite 2
//! (AES-CCM-16-64-128, SHA-256, P-256) and credentials as CCS identified by kid.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod credential;
pub mod credential_dir;
pub mod error;
pub mod established;
pub mod initiator;
pub mod responder;
pub mod transport;

pub use credential::{OwnIdentity, TrustedPeers};
pub use error::EdhocError;
pub use established::Established;
pub use initiator::{Initiator, InitiatorAwaitingMessage2, InitiatorAwaitingMessage4};
pub use responder::{Responder, ResponderAwaitingMessage3};

/// The CoAP path of the EDHOC resource (RFC 9528 Appendix A.2).
pub const WELL_KNOWN_EDHOC: &str = "/.well-known/edhoc";

/// The crypto backend: RustCrypto with the operating system's random numbers.
pub(crate) fn crypto() -> lakers_crypto_rustcrypto::Crypto<rand_core::OsRng> {
    lakers_crypto_rustcrypto::Crypto::new(rand_core::OsRng)
}
