//! CoAP URIs (RFC 7252 §6): parsing `coap`/`coaps` URIs into a borrowed [`Uri`] view,
//! decomposing them into request options ([`Uri::options`]) and composing a URI back from
//! options ([`compose`]). Nothing allocates: option values are held inline in
//! [`OptionValue`] and URIs are written into a caller's [`core::fmt::Write`].

mod authority;
mod compose;
mod decompose;
mod error;
mod host;
mod normalize;
mod parse;
mod percent;
mod scheme;
mod segments;
mod value;

#[cfg(test)]
mod tests;

pub use authority::SocketAuthority;
pub use compose::compose;
pub use decompose::UriOptions;
pub use error::{ComposeError, UriError, UriErrorKind};
pub use host::Host;
pub use normalize::Normalized;
pub use parse::Uri;
pub use percent::{percent_decode, percent_encode, EncodeSet, PercentEncode};
pub use scheme::Scheme;
pub use segments::{PathSegments, QueryArgs};
pub use value::OptionValue;

/// Longest Uri-Host, Uri-Path or Uri-Query value in bytes (RFC 7252 §5.10).
pub const MAX_VALUE_LEN: usize = 255;
