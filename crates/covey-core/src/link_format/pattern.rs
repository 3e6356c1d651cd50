//! The value side of a query filter: a percent-decoded byte string, exact or prefix (`*`).

use super::{LinkFormatError, LinkFormatErrorKind as Kind};

/// Longest decoded query pattern a filter holds (without the trailing `*`).
pub const MAX_PATTERN_LEN: usize = 255;

/// A decoded pattern stored inline, so filters need no allocation.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    bytes: [u8; MAX_PATTERN_LEN],
    len: usize,
    prefix: bool,
}

impl Pattern {
    /// Decodes `raw`, the text after `=`; `base` is its offset in the query, for errors.
    ///
    /// The `*` is looked for before decoding, so `%2A` stays a literal star.
    pub(crate) fn decode(raw: &str, base: usize) -> Result<Pattern, LinkFormatError> {
        let (body, prefix) = match raw.strip_suffix('*') {
            Some(body) => (body, true),
            None => (raw, false),
        };
        let mut pattern = Pattern {
            bytes: [0; MAX_PATTERN_LEN],
            len: 0,
            prefix,
        };
        let src = body.as_bytes();
        let mut i = 0;
        while let Some(&b) = src.get(i) {
            let at = i;
            let byte = if b == b'%' {
                let hi = src.get(i + 1).and_then(|&h| hex_value(h));
                let lo = src.get(i + 2).and_then(|&l| hex_value(l));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => {
                        i += 3;
                        hi << 4 | lo
                    }
                    _ => return Err(LinkFormatError::new(base + i, Kind::InvalidPercentEncoding)),
                }
            } else {
                i += 1;
                b
            };
            let slot = pattern
                .bytes
                .get_mut(pattern.len)
                .ok_or(LinkFormatError::new(base + at, Kind::PatternTooLong))?;
            *slot = byte;
            pattern.len += 1;
        }
        Ok(pattern)
    }

    /// The decoded bytes, without the trailing `*`.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }

    /// Whether a trailing `*` made this a prefix match.
    pub(crate) const fn is_prefix(&self) -> bool {
        self.prefix
    }

    /// Whether `candidate` equals the pattern, or starts with it for a prefix pattern.
    pub(crate) fn matches(&self, mut candidate: impl Iterator<Item = u8>) -> bool {
        let mut wanted = self.as_bytes().iter().copied();
        if self.prefix {
            wanted.all(|b| candidate.next() == Some(b))
        } else {
            candidate.eq(wanted)
        }
    }
}

impl core::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match core::str::from_utf8(self.as_bytes()) {
            Ok(s) => write!(f, "{s:?}")?,
            Err(_) => write!(f, "{:?}", self.as_bytes())?,
        }
        if self.prefix {
            f.write_str("*")?;
        }
        Ok(())
    }
}

const fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;

    #[test]
    fn exact_and_prefix() {
        let exact = Pattern::decode("light", 0).unwrap();
        assert!(!exact.is_prefix());
        assert!(exact.matches("light".bytes()));
        assert!(!exact.matches("light-lux".bytes()));
        assert!(!exact.matches("ligh".bytes()));
        let prefix = Pattern::decode("light*", 0).unwrap();
        assert!(prefix.is_prefix());
        assert!(prefix.matches("light-lux".bytes()));
        assert!(prefix.matches("light".bytes()));
        assert!(!prefix.matches("ligh".bytes()));
        let any = Pattern::decode("*", 0).unwrap();
        assert!(any.matches("".bytes()) && any.matches("x".bytes()));
    }

    #[test]
    fn percent_decoding() {
        let p = Pattern::decode("a%20b%2a", 0).unwrap();
        assert_eq!(p.as_bytes(), b"a b*");
        assert!(!p.is_prefix(), "an encoded star is literal");
        let p = Pattern::decode("%C3%A9*", 0).unwrap();
        assert_eq!((p.as_bytes(), p.is_prefix()), ("é".as_bytes(), true));
        let e = Pattern::decode("ab%4", 3).unwrap_err();
        assert_eq!((e.offset, e.kind), (5, Kind::InvalidPercentEncoding));
        let e = Pattern::decode("%zz", 0).unwrap_err();
        assert_eq!(e.kind, Kind::InvalidPercentEncoding);
    }

    #[test]
    fn limit_is_255_decoded_bytes() {
        let max: String = "x".repeat(MAX_PATTERN_LEN);
        assert_eq!(Pattern::decode(&max, 0).unwrap().as_bytes().len(), 255);
        // The '*' does not count.
        let star = std::format!("{max}*");
        assert!(Pattern::decode(&star, 0).unwrap().is_prefix());
        // 255 encoded bytes fit even though the text is three times longer.
        let encoded = "%41".repeat(MAX_PATTERN_LEN);
        assert_eq!(Pattern::decode(&encoded, 0).unwrap().as_bytes().len(), 255);
        let over = std::format!("{max}y");
        let e = Pattern::decode(&over, 4).unwrap_err();
        assert_eq!((e.offset, e.kind), (4 + 255, Kind::PatternTooLong));
    }
}
