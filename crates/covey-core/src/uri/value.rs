//! [`OptionValue`]: an option value held inline, since `covey-core` has no allocator.

use core::fmt;
use core::ops::Deref;

use super::percent::percent_decode;
use super::MAX_VALUE_LEN;

/// An option value of up to 255 bytes held inline; dereferences to the bytes.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OptionValue {
    len: u8,
    bytes: [u8; MAX_VALUE_LEN],
}

impl OptionValue {
    /// A copy of `value`, or `None` if it is longer than 255 bytes.
    pub fn new(value: &[u8]) -> Option<OptionValue> {
        let mut v = OptionValue::default();
        v.bytes.get_mut(..value.len())?.copy_from_slice(value);
        v.len = u8::try_from(value.len()).ok()?;
        Some(v)
    }

    /// A uint option value (RFC 7252 §3.2) in the fewest bytes.
    pub(crate) fn uint(value: u32) -> OptionValue {
        let mut tmp = [0; 4];
        let bytes = crate::uint::encode(value, &mut tmp);
        OptionValue::new(bytes).unwrap_or_default()
    }

    /// The percent-decoded `raw`, ASCII-lower-cased if `lowercase`; `None` if it does not fit.
    pub(crate) fn decode(raw: &str, lowercase: bool) -> Option<OptionValue> {
        let mut v = OptionValue::default();
        let decoded = percent_decode(raw, &mut v.bytes).ok()?;
        v.len = u8::try_from(decoded.len()).ok()?;
        if lowercase {
            v.bytes.make_ascii_lowercase();
        }
        Some(v)
    }

    /// The value bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }

    /// The value as text, if it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        core::str::from_utf8(self.as_bytes()).ok()
    }
}

impl Default for OptionValue {
    fn default() -> OptionValue {
        OptionValue {
            len: 0,
            bytes: [0; MAX_VALUE_LEN],
        }
    }
}

impl Deref for OptionValue {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for OptionValue {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for OptionValue {
    /// Text in quotes when it is UTF-8, else the bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => fmt::Debug::fmt(s, f),
            None => fmt::Debug::fmt(self.as_bytes(), f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_up_to_255_bytes() {
        assert_eq!(OptionValue::new(&[7; 255]).unwrap().len(), 255);
        assert!(OptionValue::new(&[7; 256]).is_none());
        assert_eq!(&*OptionValue::new(b"abc").unwrap(), b"abc");
        assert!(OptionValue::default().is_empty());
    }

    #[test]
    fn uint_and_decode() {
        assert_eq!(&*OptionValue::uint(61616), &[0xF0, 0xB0]);
        assert_eq!(&*OptionValue::uint(0), b"");
        assert_eq!(
            OptionValue::decode("%7EA", true).unwrap().as_str(),
            Some("~a")
        );
        assert!(OptionValue::decode(&"a".repeat(256), false).is_none());
        assert_eq!(
            std::format!("{:?}", OptionValue::new(b"x").unwrap()),
            "\"x\""
        );
    }
}
