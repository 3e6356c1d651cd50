//! Keeping untrusted text from driving the terminal that shows it.

use std::borrow::Cow;

/// True for characters Rust prints as themselves (not control, format or unassigned).
pub fn is_printable(c: char) -> bool {
    c == '\'' || c == '"' || c == '\\' || c.escape_debug().len() == 1
}

/// `text` with every non-printable character except newline and tab escaped (`\u{1b}`), so
/// a payload cannot move the cursor, recolour or retitle the terminal.
pub fn safe_for_terminal(text: &str) -> Cow<'_, str> {
    let keep = |c: char| c == '\n' || c == '\t' || is_printable(c);
    if text.chars().all(keep) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if keep(c) {
            out.push(c);
        } else {
            out.extend(c.escape_debug());
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_and_format_characters_only() {
        assert_eq!(
            safe_for_terminal("a\tb\nc \"q\" 'x' ü"),
            "a\tb\nc \"q\" 'x' ü"
        );
        assert_eq!(safe_for_terminal("\u{1b}[31mred\r"), "\\u{1b}[31mred\\r");
        assert_eq!(safe_for_terminal("a\u{202e}b"), "a\\u{202e}b");
    }
}
