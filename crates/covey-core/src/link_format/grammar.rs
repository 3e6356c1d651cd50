//! Byte classes of the RFC 6690 / RFC 5988 grammar, shared by the parser and the writer so that
//! everything the writer emits parses.

/// Whitespace tolerated between links and around `;` (servers break lines after commas).
pub(crate) const fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The first position at or after `pos` that is not [`is_space`].
pub(crate) fn skip_space(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|&b| is_space(b)) {
        pos += 1;
    }
    pos
}

/// A byte allowed inside `<...>`: lenient about URI syntax, but never a byte that would make
/// the target ambiguous to split (whitespace, controls, `"`, `<`, `>`).
pub(crate) const fn is_target_byte(b: u8) -> bool {
    b > b' ' && b != 0x7F && b != b'"' && b != b'<' && b != b'>'
}

/// RFC 5988 `attr-char` minus `*`, which may only end a name (`title*`).
pub(crate) const fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#' | b'$' | b'&' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
        )
}

/// RFC 6690 `ptokenchar`.
pub(crate) const fn is_ptoken_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'/'
                | b':'
                | b'<'
                | b'='
                | b'>'
                | b'?'
                | b'@'
                | b'['
                | b']'
                | b'^'
                | b'_'
                | b'`'
                | b'{'
                | b'|'
                | b'}'
                | b'~'
        )
}

/// A byte a quoted-string may hold, literally or after `\`: HTAB, SP, VCHAR and obs-text
/// (every byte of a non-ASCII UTF-8 character).
pub(crate) const fn is_quotable_byte(b: u8) -> bool {
    b == b'\t' || (b >= b' ' && b != 0x7F)
}

/// Whether `name` is a valid parameter name (`1*attr-char ["*"]`).
pub(crate) fn is_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let body = match bytes.split_last() {
        Some((b'*', rest)) => rest,
        _ => bytes,
    };
    !body.is_empty() && body.iter().all(|&b| is_name_byte(b))
}

/// Whether `value` is a valid ptoken (non-empty).
pub(crate) fn is_ptoken(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(is_ptoken_byte)
}

/// Whether `target` can be written between `<` and `>`.
pub(crate) fn is_target(target: &str) -> bool {
    target.bytes().all(is_target_byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_name("rt"));
        assert!(is_name("title*"));
        assert!(!is_name("*"));
        assert!(!is_name("a*b"));
        assert!(!is_name(""));
        assert!(!is_name("a b"));
    }

    #[test]
    fn ptokens_exclude_separators() {
        assert!(is_ptoken("utf-8'en'%C3%A9"));
        for bad in ["", "a,b", "a;b", "a\"b", "a b", "a\\b", "é"] {
            assert!(!is_ptoken(bad), "{bad}");
        }
    }

    #[test]
    fn targets() {
        assert!(is_target(""));
        assert!(is_target("coap://[::1]:5683/a,b;c?d=e#f"));
        for bad in ["a b", "a>", "a<", "a\"", "a\n"] {
            assert!(!is_target(bad), "{bad:?}");
        }
    }
}
