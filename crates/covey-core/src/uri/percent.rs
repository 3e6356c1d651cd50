//! Percent-encoding (RFC 3986 §2): character classes, decoding into a caller's buffer, and
//! encoding while writing, with the character sets of RFC 7252 §6.5.

use core::fmt;

use super::error::{UriError, UriErrorKind};
use super::MAX_VALUE_LEN;

/// `unreserved` (RFC 3986 §2.3): never needs encoding.
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `sub-delims` (RFC 3986 §2.2).
pub(crate) fn is_sub_delim(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

/// `reg-name` characters other than percent-encodings.
pub(crate) fn is_reg_name_char(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b)
}

/// `pchar` other than percent-encodings: what a path segment may hold.
pub(crate) fn is_pchar(b: u8) -> bool {
    is_reg_name_char(b) || b == b':' || b == b'@'
}

/// `query` characters other than percent-encodings.
pub(crate) fn is_query_char(b: u8) -> bool {
    is_pchar(b) || b == b'/' || b == b'?'
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The byte encoded as `%XY` at the start of `bytes`, if it is a well-formed escape.
fn escape_at(bytes: &[u8]) -> Option<u8> {
    match bytes {
        [b'%', hi, lo, ..] => Some((hex_value(*hi)? << 4) | hex_value(*lo)?),
        _ => None,
    }
}

/// Percent-decodes `raw` into `out` and returns the decoded bytes; error offsets are within `raw`.
pub fn percent_decode<'b>(raw: &str, out: &'b mut [u8]) -> Result<&'b [u8], UriError> {
    let bytes = raw.as_bytes();
    let mut pos = 0;
    let mut len = 0;
    while let Some(rest) = bytes.get(pos..).filter(|r| !r.is_empty()) {
        let (byte, used) = match rest {
            [b'%', ..] => match escape_at(rest) {
                Some(b) => (b, 3),
                None => return Err(UriError::new(UriErrorKind::InvalidPercentEncoding, pos)),
            },
            [b, ..] => (*b, 1),
            [] => break,
        };
        let slot = out
            .get_mut(len)
            .ok_or(UriError::new(UriErrorKind::ValueTooLong, pos))?;
        *slot = byte;
        len += 1;
        pos += used;
    }
    let out: &'b [u8] = out;
    Ok(out.get(..len).unwrap_or_default())
}

/// The decoded bytes of text already validated by [`check_chars`]; a stray `%` passes through.
#[derive(Debug, Clone)]
pub(crate) struct Decoded<'a> {
    rest: &'a [u8],
}

impl<'a> Decoded<'a> {
    pub(crate) fn new(raw: &'a str) -> Decoded<'a> {
        Decoded {
            rest: raw.as_bytes(),
        }
    }
}

impl Iterator for Decoded<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        let (byte, used) = match escape_at(self.rest) {
            Some(b) => (b, 3),
            None => (*self.rest.first()?, 1),
        };
        self.rest = self.rest.get(used..).unwrap_or_default();
        Some(byte)
    }
}

/// Checks that `raw` (at byte `base` of the URI) holds only `allowed` characters and
/// well-formed percent-encodings; a disallowed character is reported as `bad`.
pub(crate) fn check_chars(
    raw: &str,
    base: usize,
    allowed: fn(u8) -> bool,
    bad: UriErrorKind,
) -> Result<(), UriError> {
    let bytes = raw.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'%' {
            if bytes.get(i..).and_then(escape_at).is_none() {
                return Err(UriError::new(
                    UriErrorKind::InvalidPercentEncoding,
                    base + i,
                ));
            }
        } else if !allowed(b) {
            // Hex digits after a '%' are allowed characters, so they never land here.
            return Err(UriError::new(bad, base + i));
        }
    }
    Ok(())
}

/// Decodes a checked component into `buf` as UTF-8 of at most 255 bytes (an option value).
pub(crate) fn decode_text<'b>(
    raw: &str,
    base: usize,
    buf: &'b mut [u8; MAX_VALUE_LEN],
) -> Result<&'b str, UriError> {
    let decoded = percent_decode(raw, buf).map_err(|e| UriError::new(e.kind, base))?;
    core::str::from_utf8(decoded).map_err(|_| UriError::new(UriErrorKind::InvalidUtf8, base))
}

/// Which characters a URI component keeps unencoded when composed (RFC 7252 §6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodeSet {
    /// A registered name: keeps unreserved and sub-delims, and lower-cases ASCII letters.
    Host,
    /// An IPv6 zone id (RFC 6874): keeps unreserved only.
    Zone,
    /// A path segment: keeps unreserved, sub-delims, ":" and "@"; "." and ".." are encoded
    /// whole so that they are not taken for dot-segments.
    PathSegment,
    /// A query argument: keeps unreserved, sub-delims but "&", ":", "@", "/" and "?".
    QueryArg,
}

impl EncodeSet {
    fn keeps(self, b: u8) -> bool {
        match self {
            EncodeSet::Host => is_reg_name_char(b),
            EncodeSet::Zone => is_unreserved(b),
            EncodeSet::PathSegment => is_pchar(b),
            EncodeSet::QueryArg => b != b'&' && is_query_char(b),
        }
    }
}

fn hex_digit(nibble: u8) -> char {
    let n = nibble & 0x0F;
    char::from(if n < 10 { b'0' + n } else { b'A' + n - 10 })
}

/// Writes `bytes` percent-encoded for `set`, with upper-case hex digits.
pub(crate) fn write_encoded<W: fmt::Write + ?Sized>(
    out: &mut W,
    bytes: impl Iterator<Item = u8> + Clone,
    set: EncodeSet,
) -> fmt::Result {
    let dot_segment = set == EncodeSet::PathSegment && {
        let mut probe = bytes.clone();
        matches!(
            (probe.next(), probe.next(), probe.next()),
            (Some(b'.'), None, _) | (Some(b'.'), Some(b'.'), None)
        )
    };
    for b in bytes {
        if set.keeps(b) && !dot_segment {
            let b = if set == EncodeSet::Host {
                b.to_ascii_lowercase()
            } else {
                b
            };
            out.write_char(char::from(b))?;
        } else {
            out.write_char('%')?;
            out.write_char(hex_digit(b >> 4))?;
            out.write_char(hex_digit(b))?;
        }
    }
    Ok(())
}

/// Displays bytes percent-encoded for one URI component; made by [`percent_encode`].
#[derive(Debug, Clone, Copy)]
pub struct PercentEncode<'a> {
    bytes: &'a [u8],
    set: EncodeSet,
}

/// Percent-encodes `bytes` for the component `set` when displayed or written.
pub fn percent_encode(bytes: &[u8], set: EncodeSet) -> PercentEncode<'_> {
    PercentEncode { bytes, set }
}

impl fmt::Display for PercentEncode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_encoded(f, self.bytes.iter().copied(), self.set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn decodes_escapes_in_either_case() {
        let mut buf = [0u8; 16];
        assert_eq!(percent_decode("%7Ea%2f", &mut buf).unwrap(), b"~a/");
        assert_eq!(percent_decode("%7e", &mut buf).unwrap(), b"~");
        assert_eq!(percent_decode("", &mut buf).unwrap(), b"");
        assert_eq!(percent_decode("%FF%00", &mut buf).unwrap(), &[0xFF, 0]);
    }

    #[test]
    fn rejects_bad_escapes_with_offsets() {
        let mut buf = [0u8; 16];
        for (raw, at) in [("%G1", 0), ("ab%1", 2), ("%", 0), ("a%%41", 1), ("x%1G", 1)] {
            assert_eq!(
                percent_decode(raw, &mut buf),
                Err(UriError::new(UriErrorKind::InvalidPercentEncoding, at)),
                "{raw}"
            );
        }
    }

    #[test]
    fn reports_a_full_buffer() {
        let mut buf = [0u8; 2];
        assert_eq!(
            percent_decode("ab%41", &mut buf),
            Err(UriError::new(UriErrorKind::ValueTooLong, 2))
        );
    }

    #[test]
    fn decoded_iterator_matches_percent_decode() {
        let d: std::vec::Vec<u8> = Decoded::new("a%41%2f~").collect();
        assert_eq!(d, b"aA/~");
    }

    #[test]
    fn encodes_per_component() {
        let enc = |v: &[u8], set| percent_encode(v, set).to_string();
        assert_eq!(enc(b"a/b?c:@!", EncodeSet::PathSegment), "a%2Fb%3Fc:@!");
        assert_eq!(enc(b"a&b=c/d?e", EncodeSet::QueryArg), "a%26b=c/d?e");
        assert_eq!(enc(b"Ex.COM", EncodeSet::Host), "ex.com");
        assert_eq!(enc(b"a:b", EncodeSet::Host), "a%3Ab");
        assert_eq!(enc(b"eth0!", EncodeSet::Zone), "eth0%21");
        assert_eq!(enc("é %".as_bytes(), EncodeSet::QueryArg), "%C3%A9%20%25");
        assert_eq!(enc(b".", EncodeSet::PathSegment), "%2E");
        assert_eq!(enc(b"..", EncodeSet::PathSegment), "%2E%2E");
        assert_eq!(enc(b"...", EncodeSet::PathSegment), "...");
        assert_eq!(enc(b"..", EncodeSet::QueryArg), "..");
    }
}
