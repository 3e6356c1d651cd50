//! CoAP wire format (RFC 7252 and extensions): zero-copy parsing into a [`Message`] view,
//! encoding into caller-owned buffers with [`MessageEncoder`], option and content-format
//! registries, typed option values, URIs (RFC 7252 §6) and the CoRE link format (RFC 6690).
//!
//! `no_std` and allocation-free: every function works on borrowed slices or fixed arrays.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod block;
pub mod code;
pub mod content_format;
pub mod encode;
pub mod error;
pub mod link_format;
pub mod message;
pub mod message_type;
pub mod option;
pub mod option_registry;
pub mod precondition;
pub mod token;
pub mod uint;
pub mod uri;

pub use block::Block;
pub use code::Code;
pub use content_format::ContentFormat;
pub use encode::{EncodeError, MessageEncoder};
pub use error::{ParseError, ParseErrorKind};
pub use message::{Header, Message};
pub use message_type::MessageType;
pub use option::{CoapOption, OptionIter};
pub use option_registry::{OptionDefinition, OptionFormat, OptionNumber, OptionRule};
pub use token::Token;

/// The CoAP protocol version this crate speaks (the only one defined).
pub const VERSION: u8 = 1;
/// The byte that separates options from the payload.
pub const PAYLOAD_MARKER: u8 = 0xFF;
/// Largest token length RFC 7252 allows.
pub const MAX_TOKEN_LEN: usize = 8;
