//! Message format errors (RFC 7252 §3, §4.2–4.3, §5.4.1), each with the offset where it was found.

use crate::OptionNumber;

/// A message that could not be parsed: what rule it broke and at which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseError {
    /// The rule broken.
    pub kind: ParseErrorKind,
    /// Byte offset in the datagram where the problem starts.
    pub offset: usize,
}

/// The message format rules a datagram can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// Fewer than the 4 header bytes.
    TruncatedHeader,
    /// Version field other than 1: the RFC says to ignore the datagram silently.
    UnsupportedVersion(u8),
    /// Token length 9–15 (reserved).
    ReservedTokenLength(u8),
    /// The datagram ends inside the token.
    TruncatedToken,
    /// Code class 1, 6 or 7 (reserved).
    ReservedCodeClass(u8),
    /// An Empty message (0.00) with a token, options or payload.
    EmptyMessageNotEmpty,
    /// A payload marker with no payload after it.
    PayloadMarkerWithoutPayload,
    /// Option delta nibble 15 in a byte other than the payload marker.
    ReservedDeltaNibble,
    /// Option length nibble 15.
    ReservedLengthNibble,
    /// The datagram ends inside an option header or value.
    TruncatedOption,
    /// The running option number exceeds 65535.
    OptionNumberOverflow,
    /// A known option's value length lies outside its registered bounds.
    OptionLengthOutOfBounds {
        /// The option.
        number: OptionNumber,
        /// Its value length.
        len: usize,
    },
    /// A non-repeatable known option occurs more than once.
    OptionRepeated {
        /// The option.
        number: OptionNumber,
    },
}

impl ParseError {
    /// The error for `kind` found at byte `offset`.
    pub const fn new(kind: ParseErrorKind, offset: usize) -> ParseError {
        ParseError { kind, offset }
    }
}

impl ParseErrorKind {
    /// The rule in words, as the CLI prints it.
    pub fn describe(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ParseErrorKind::TruncatedHeader => {
                f.write_str("message shorter than the 4-byte header")
            }
            ParseErrorKind::UnsupportedVersion(v) => write!(f, "version {v} is not CoAP version 1"),
            ParseErrorKind::ReservedTokenLength(l) => {
                write!(f, "token length {l} is reserved (must be 0-8)")
            }
            ParseErrorKind::TruncatedToken => f.write_str("message ends inside the token"),
            ParseErrorKind::ReservedCodeClass(c) => write!(f, "code class {c} is reserved"),
            ParseErrorKind::EmptyMessageNotEmpty => {
                f.write_str("empty message (code 0.00) must have nothing after the message ID")
            }
            ParseErrorKind::PayloadMarkerWithoutPayload => {
                f.write_str("payload marker 0xFF not followed by a payload")
            }
            ParseErrorKind::ReservedDeltaNibble => {
                f.write_str("option delta nibble 15 is reserved outside the payload marker")
            }
            ParseErrorKind::ReservedLengthNibble => {
                f.write_str("option length nibble 15 is reserved")
            }
            ParseErrorKind::TruncatedOption => f.write_str("message ends inside an option"),
            ParseErrorKind::OptionNumberOverflow => f.write_str("option number exceeds 65535"),
            ParseErrorKind::OptionLengthOutOfBounds { number, len } => {
                let (min, max) = number
                    .definition()
                    .map_or((0, 0), |d| (d.min_len, d.max_len));
                write!(
                    f,
                    "{number} option is {len} bytes long, outside {min}-{max}"
                )
            }
            ParseErrorKind::OptionRepeated { number } => {
                write!(f, "{number} option is not repeatable but occurs again")
            }
        }
    }
}

impl core::fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.describe(f)
    }
}

impl core::fmt::Display for ParseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.kind)
    }
}

impl core::error::Error for ParseError {}
