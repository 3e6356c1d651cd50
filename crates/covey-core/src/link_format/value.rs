//! Attribute values: a ptoken or a quoted-string, kept as written and unquoted on demand.

use core::fmt;

/// The value of a link-param, borrowing the text as written (quotes and escapes included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttrValue<'a> {
    raw: &'a str,
}

impl<'a> AttrValue<'a> {
    /// Wraps a value the parser has already validated.
    pub(crate) const fn new(raw: &'a str) -> AttrValue<'a> {
        AttrValue { raw }
    }

    /// The value exactly as written, with the quotes if it is a quoted-string.
    pub const fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether the value is a quoted-string.
    pub fn is_quoted(&self) -> bool {
        self.raw.len() >= 2 && self.raw.starts_with('"') && self.raw.ends_with('"')
    }

    /// The text between the quotes, escapes still in place (the raw value if unquoted).
    pub fn inner(&self) -> &'a str {
        if self.is_quoted() {
            self.raw.get(1..self.raw.len() - 1).unwrap_or("")
        } else {
            self.raw
        }
    }

    /// The unquoted value as a slice when it holds no `\` escapes.
    pub fn unquoted_str(&self) -> Option<&'a str> {
        let inner = self.inner();
        (!self.is_quoted() || !inner.contains('\\')).then_some(inner)
    }

    /// The bytes of the unquoted value, with quoted-pair escapes resolved.
    pub fn unquoted_bytes(&self) -> Unescaped<'a> {
        Unescaped::new(self.inner(), self.is_quoted())
    }

    /// Whether the unquoted value equals `s` byte for byte.
    pub fn unquoted_eq(&self, s: &str) -> bool {
        self.unquoted_bytes().eq(s.bytes())
    }

    /// Writes the unquoted value, escapes resolved, into `out`.
    pub fn write_unquoted<W: fmt::Write + ?Sized>(&self, out: &mut W) -> fmt::Result {
        let inner = self.inner();
        if !self.is_quoted() {
            return out.write_str(inner);
        }
        let bytes = inner.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes.get(i) == Some(&b'\\') {
                out.write_str(inner.get(start..i).unwrap_or(""))?;
                // The escaped character starts the next run, so multi-byte ones stay whole.
                start = i + 1;
                i += 2;
            } else {
                i += 1;
            }
        }
        out.write_str(inner.get(start..).unwrap_or(""))
    }

    /// The space-separated elements of the unquoted value (`rt`, `if`, `rel`, `ct` lists).
    ///
    /// Elements are slices of the text as written: a `\` escape inside one is kept.
    pub fn tokens(&self) -> Tokens<'a> {
        Tokens::new(self.inner(), self.is_quoted())
    }
}

impl fmt::Display for AttrValue<'_> {
    /// The value as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw)
    }
}

/// Iterator over the bytes of a value with quoted-pair escapes resolved.
#[derive(Debug, Clone)]
pub struct Unescaped<'a> {
    bytes: &'a [u8],
    pos: usize,
    quoted: bool,
}

impl<'a> Unescaped<'a> {
    /// Unescapes `text` if it comes from a quoted-string, else yields it as is.
    pub(crate) fn new(text: &'a str, quoted: bool) -> Unescaped<'a> {
        Unescaped {
            bytes: text.as_bytes(),
            pos: 0,
            quoted,
        }
    }
}

impl Iterator for Unescaped<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        if self.quoted && b == b'\\' {
            if let Some(&escaped) = self.bytes.get(self.pos + 1) {
                self.pos += 2;
                return Some(escaped);
            }
        }
        self.pos += 1;
        Some(b)
    }
}

impl core::iter::FusedIterator for Unescaped<'_> {}

/// Iterator over the space-separated elements of a value; see [`AttrValue::tokens`].
#[derive(Debug, Clone)]
pub struct Tokens<'a> {
    rest: &'a str,
    quoted: bool,
}

impl<'a> Tokens<'a> {
    /// Splits `text` on unescaped spaces and tabs.
    pub(crate) fn new(text: &'a str, quoted: bool) -> Tokens<'a> {
        Tokens { rest: text, quoted }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.rest.as_bytes();
        let start = bytes.iter().position(|&b| b != b' ' && b != b'\t')?;
        let mut end = start;
        while let Some(&b) = bytes.get(end) {
            match b {
                b' ' | b'\t' => break,
                // An escaped space does not split.
                b'\\' if self.quoted => end = (end + 2).min(bytes.len()),
                _ => end += 1,
            }
        }
        let token = self.rest.get(start..end).unwrap_or("");
        self.rest = self.rest.get(end..).unwrap_or("");
        Some(token)
    }
}

impl core::iter::FusedIterator for Tokens<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    fn unquoted(v: AttrValue<'_>) -> String {
        let mut s = String::new();
        v.write_unquoted(&mut s).unwrap();
        s
    }

    #[test]
    fn plain_token() {
        let v = AttrValue::new("0");
        assert!(!v.is_quoted());
        assert_eq!(
            (v.raw(), v.inner(), v.unquoted_str()),
            ("0", "0", Some("0"))
        );
        assert!(v.unquoted_eq("0"));
        assert_eq!(v.tokens().collect::<Vec<_>>(), ["0"]);
        assert_eq!(unquoted(v), "0");
    }

    #[test]
    fn quoted_list() {
        let v = AttrValue::new("\"light-lux  core.s\"");
        assert!(v.is_quoted());
        assert_eq!(v.inner(), "light-lux  core.s");
        assert_eq!(v.tokens().collect::<Vec<_>>(), ["light-lux", "core.s"]);
        assert!(v.unquoted_eq("light-lux  core.s"));
        assert!(!v.unquoted_eq("light-lux"));
    }

    #[test]
    fn escapes_are_resolved() {
        let v = AttrValue::new(r#""say \"hi\" \\ \é""#);
        assert_eq!(v.unquoted_str(), None);
        assert_eq!(unquoted(v), r#"say "hi" \ é"#);
        assert!(v.unquoted_eq(r#"say "hi" \ é"#));
        let bytes: Vec<u8> = v.unquoted_bytes().collect();
        assert_eq!(bytes, r#"say "hi" \ é"#.as_bytes());
    }

    #[test]
    fn escaped_space_does_not_split() {
        let v = AttrValue::new(r#""a\ b c""#);
        assert_eq!(v.tokens().collect::<Vec<_>>(), [r"a\ b", "c"]);
    }

    #[test]
    fn empty_quoted() {
        let v = AttrValue::new("\"\"");
        assert!(v.is_quoted());
        assert_eq!(v.inner(), "");
        assert!(v.unquoted_eq(""));
        assert_eq!(v.tokens().count(), 0);
    }
}
