//! Why a URI could not be parsed or composed.

use crate::OptionNumber;

/// A URI that could not be parsed: what rule it broke and at which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct UriError {
    /// The rule broken.
    pub kind: UriErrorKind,
    /// Byte offset in the input where the problem starts.
    pub offset: usize,
}

impl UriError {
    pub(crate) const fn new(kind: UriErrorKind, offset: usize) -> UriError {
        UriError { kind, offset }
    }
}

/// The rules of a CoAP URI (RFC 3986, RFC 6874, RFC 7252 §6) a string can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UriErrorKind {
    /// No scheme: a relative reference or not a URI at all.
    NotAbsolute,
    /// A scheme other than `coap` or `coaps`.
    UnsupportedScheme,
    /// The scheme is not followed by `//` and an authority.
    MissingAuthority,
    /// User information (`user@`) in the authority.
    UserInfo,
    /// The host is empty.
    EmptyHost,
    /// A character a host may not hold, or a malformed IP literal.
    InvalidHost,
    /// An IPv6 zone id not written as `%25` and unreserved or percent-encoded characters.
    InvalidZone,
    /// A port that is not a decimal number up to 65535.
    InvalidPort,
    /// A `#fragment`, which CoAP URIs may not have.
    Fragment,
    /// A character not allowed in the path or query.
    InvalidCharacter,
    /// A `%` not followed by two hexadecimal digits.
    InvalidPercentEncoding,
    /// A percent-decoded host, path segment or query argument that is not UTF-8.
    InvalidUtf8,
    /// A percent-decoded value that does not fit (over 255 bytes for an option).
    ValueTooLong,
}

impl core::fmt::Display for UriErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            UriErrorKind::NotAbsolute => "not an absolute URI (no scheme)",
            UriErrorKind::UnsupportedScheme => "scheme is not coap or coaps",
            UriErrorKind::MissingAuthority => "expected \"//\" and a host after the scheme",
            UriErrorKind::UserInfo => "user information is not allowed in a CoAP URI",
            UriErrorKind::EmptyHost => "empty host",
            UriErrorKind::InvalidHost => "invalid host",
            UriErrorKind::InvalidZone => "invalid IPv6 zone id (expected %25 and a name)",
            UriErrorKind::InvalidPort => "invalid port (expected a number up to 65535)",
            UriErrorKind::Fragment => "fragment not allowed in a CoAP URI",
            UriErrorKind::InvalidCharacter => "character not allowed here in a URI",
            UriErrorKind::InvalidPercentEncoding => {
                "bad percent-encoding (expected % and two hex digits)"
            }
            UriErrorKind::InvalidUtf8 => "percent-decoded text is not UTF-8",
            UriErrorKind::ValueTooLong => "value longer than 255 bytes after percent-decoding",
        })
    }
}

impl core::fmt::Display for UriError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.kind)
    }
}

impl core::error::Error for UriError {}

/// Why options could not be composed into a URI (RFC 7252 §6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComposeError {
    /// A Uri-Host that is empty, over 255 bytes or not UTF-8.
    InvalidHost,
    /// A Uri-Port longer than 2 bytes.
    InvalidPort,
    /// A Uri-Path or Uri-Query value over 255 bytes or not UTF-8.
    InvalidValue(OptionNumber),
    /// Uri-Host or Uri-Port given more than once.
    Repeated(OptionNumber),
    /// A URI option after one with a higher number.
    OutOfOrder(OptionNumber),
    /// The output writer failed (for example, its buffer is full).
    Write,
}

impl From<core::fmt::Error> for ComposeError {
    fn from(_: core::fmt::Error) -> ComposeError {
        ComposeError::Write
    }
}

impl core::fmt::Display for ComposeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ComposeError::InvalidHost => f.write_str("Uri-Host is empty, too long or not UTF-8"),
            ComposeError::InvalidPort => f.write_str("Uri-Port is longer than 2 bytes"),
            ComposeError::InvalidValue(n) => write!(f, "{n} is longer than 255 bytes or not UTF-8"),
            ComposeError::Repeated(n) => write!(f, "{n} occurs more than once"),
            ComposeError::OutOfOrder(n) => write!(f, "{n} is out of ascending option order"),
            ComposeError::Write => f.write_str("the output could not be written"),
        }
    }
}

impl core::error::Error for ComposeError {}
