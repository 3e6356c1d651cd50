//! OSCORE (RFC 8613): object security for CoAP. Derives a security context from pre-shared
//! keying material and turns plain CoAP requests and responses into protected ones and back,
//! sans-IO: messages are [`covey_core::Message`] views in and caller-owned buffers out.
//!
//! Only the mandatory algorithms are supported: AES-CCM-16-64-128 and HKDF-SHA-256.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod aad;
mod aead;
mod cbor;
pub mod context;
mod derive;
pub mod error;
mod inner;
pub mod kid;
pub mod nonce;
pub mod option_class;
pub mod oscore_option;
pub mod partial_iv;
mod protect;
pub mod replay;
mod stack_buf;
mod unprotect;

pub use context::{next_reservation, ContextInput, RequestId, SecurityContext, MAX_ID_LEN};
pub use error::OscoreError;
pub use kid::Kid;
pub use nonce::{nonce, NONCE_LEN};
pub use option_class::OptionClass;
pub use oscore_option::OscoreOption;
pub use partial_iv::{PartialIv, MAX_SEQUENCE_NUMBER};
pub use protect::ResponsePartialIv;
pub use replay::{NotificationNumber, ReplayWindow};

/// COSE algorithm identifier of AES-CCM-16-64-128, the AEAD this crate uses.
pub const ALG_AEAD: u64 = 10;
/// Key length of AES-CCM-16-64-128 in bytes.
pub const KEY_LEN: usize = 16;
/// Authentication tag length of AES-CCM-16-64-128 in bytes.
pub const TAG_LEN: usize = 8;
