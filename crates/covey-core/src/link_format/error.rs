//! Link-format errors (RFC 6690 §2 grammar, §4.1 query filters), each with the byte offset where
//! the rule was broken.

/// Text that is not valid link format, or a query filter that cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkFormatError {
    /// Byte offset in the parsed text (or in the query) where the problem starts.
    pub offset: usize,
    /// The rule broken.
    pub kind: LinkFormatErrorKind,
}

/// The rules link-format text and query filters can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkFormatErrorKind {
    /// Something other than `<` where a link-value starts.
    ExpectedLinkStart,
    /// A `<` with no `>` closing its URI-Reference.
    UnterminatedTarget,
    /// A space, control character, `"` or `<` inside the URI-Reference.
    InvalidTargetChar,
    /// Nothing between two commas, or a comma at the start or end of the text.
    EmptyLinkValue,
    /// A `;` not followed by a parameter name.
    ExpectedParamName,
    /// An `=` not followed by a ptoken or quoted-string.
    MissingValue,
    /// A quoted-string with no closing `"`.
    UnterminatedQuote,
    /// A control character (other than HTAB) inside a quoted-string.
    InvalidQuotedChar,
    /// Something other than `;`, `,` or the end after a link-value's target or link-param.
    ExpectedSeparator,
    /// A query filter with nothing before its `=`.
    EmptyFilterName,
    /// A `%` in a query pattern not followed by two hex digits.
    InvalidPercentEncoding,
    /// A query pattern longer than [`MAX_PATTERN_LEN`](super::MAX_PATTERN_LEN) once decoded.
    PatternTooLong,
    /// The output refused a link while writing filtered links (a full buffer).
    OutputFull,
}

impl LinkFormatErrorKind {
    /// The rule in words, as the CLI prints it.
    pub fn as_str(&self) -> &'static str {
        match self {
            LinkFormatErrorKind::ExpectedLinkStart => "link-value must start with '<'",
            LinkFormatErrorKind::UnterminatedTarget => "'<' has no closing '>'",
            LinkFormatErrorKind::InvalidTargetChar => {
                "URI-Reference cannot hold a space, control character, '\"' or '<'"
            }
            LinkFormatErrorKind::EmptyLinkValue => {
                "empty link-value (two commas, or a comma at the start or end)"
            }
            LinkFormatErrorKind::ExpectedParamName => "link-param must start with a parameter name",
            LinkFormatErrorKind::MissingValue => {
                "'=' must be followed by a ptoken or quoted-string"
            }
            LinkFormatErrorKind::UnterminatedQuote => "quoted-string has no closing '\"'",
            LinkFormatErrorKind::InvalidQuotedChar => "control character in quoted-string",
            LinkFormatErrorKind::ExpectedSeparator => {
                "expected ';', ',' or the end after a link-value part"
            }
            LinkFormatErrorKind::EmptyFilterName => "query filter has no attribute name",
            LinkFormatErrorKind::InvalidPercentEncoding => {
                "'%' in query pattern not followed by two hex digits"
            }
            LinkFormatErrorKind::PatternTooLong => {
                "query pattern longer than 255 bytes after percent-decoding"
            }
            LinkFormatErrorKind::OutputFull => "output full while writing the link starting here",
        }
    }
}

impl core::fmt::Display for LinkFormatErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::fmt::Display for LinkFormatError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.kind)
    }
}

impl core::error::Error for LinkFormatError {}

impl LinkFormatError {
    pub(crate) const fn new(offset: usize, kind: LinkFormatErrorKind) -> LinkFormatError {
        LinkFormatError { offset, kind }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn display_names_offset_and_rule() {
        let e = LinkFormatError::new(17, LinkFormatErrorKind::ExpectedLinkStart);
        assert_eq!(e.to_string(), "at byte 17: link-value must start with '<'");
    }
}
