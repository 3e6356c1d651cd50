//! The datagram to work on: hex text from the command line, or hex or raw bytes from stdin.

use std::fmt;
use std::io::Read;

use anyhow::{bail, Context};

/// Most bytes read from standard input; a CoAP datagram is far smaller.
const MAX_STDIN: u64 = 1 << 20;

/// Why hex text could not be read as bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HexError {
    /// Byte offset of the problem in the text.
    pub offset: usize,
    /// The character at fault.
    pub found: char,
    /// True when the character is a hex digit left without a partner.
    pub lone_digit: bool,
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.found.escape_debug();
        if self.lone_digit {
            write!(
                f,
                "bad hex at byte {} of the input: odd number of hex digits, '{c}' has no partner",
                self.offset
            )
        } else {
            write!(
                f,
                "bad hex at byte {} of the input: '{c}' is not a hex digit",
                self.offset
            )
        }
    }
}

impl std::error::Error for HexError {}

/// The datagram named by the command-line words: `-` reads stdin, anything else is hex.
pub fn read_datagram(words: &[String]) -> anyhow::Result<Vec<u8>> {
    let bytes = match words {
        [dash] if dash == "-" => read_stdin()?,
        // Unquoted `42 01 7d 34` arrives as several words: read them as one text.
        _ => parse_hex(&words.join(" "))?,
    };
    if bytes.is_empty() {
        bail!("empty input: no bytes to decode");
    }
    Ok(bytes)
}

fn read_stdin() -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_STDIN + 1)
        .read_to_end(&mut buf)
        .context("cannot read standard input")?;
    if buf.len() as u64 > MAX_STDIN {
        bail!("input longer than {MAX_STDIN} bytes");
    }
    match looks_like_hex(&buf) {
        // looks_like_hex admits ASCII only, so this is valid UTF-8.
        true => Ok(parse_hex(&String::from_utf8_lossy(&buf))?),
        false => Ok(buf),
    }
}

/// True when `bytes` hold nothing but hex digits, whitespace, `:` and the `x` of `0x`, so
/// stdin is taken as hex text rather than a raw datagram.
pub fn looks_like_hex(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| {
        b.is_ascii_hexdigit() || b.is_ascii_whitespace() || matches!(b, b':' | b'x' | b'X')
    })
}

/// Reads hex digits in pairs; whitespace and colons separate nothing in particular and are
/// skipped, and each group may start with `0x`.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, HexError> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut pending: Option<(usize, char, u8)> = None;
    let mut group_start = true;
    let mut chars = text.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        if c.is_whitespace() || c == ':' {
            group_start = true;
            continue;
        }
        if group_start && c == '0' && matches!(chars.peek(), Some((_, 'x' | 'X'))) {
            chars.next();
            group_start = false;
            continue;
        }
        group_start = false;
        let Some(nibble) = c.to_digit(16) else {
            return Err(HexError {
                offset,
                found: c,
                lone_digit: false,
            });
        };
        match pending.take() {
            Some((_, _, high)) => out.push(high << 4 | nibble as u8),
            None => pending = Some((offset, c, nibble as u8)),
        }
    }
    match pending {
        Some((offset, found, _)) => Err(HexError {
            offset,
            found,
            lone_digit: true,
        }),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_spaces_colons_and_0x() {
        let e1 = [0x42, 0x01, 0x7d, 0x34];
        assert_eq!(parse_hex("42017d34").unwrap(), e1);
        assert_eq!(parse_hex("42 01 7d 34\n").unwrap(), e1);
        assert_eq!(parse_hex("42:01:7D:34").unwrap(), e1);
        assert_eq!(parse_hex("0x42017d34").unwrap(), e1);
        assert_eq!(parse_hex("0x42 0x01 0X7d 0x34").unwrap(), e1);
        assert_eq!(parse_hex("  ").unwrap(), [0u8; 0]);
        assert_eq!(parse_hex("0x").unwrap(), [0u8; 0]);
    }

    #[test]
    fn errors_name_the_offset() {
        let e = parse_hex("42 0g").unwrap_err();
        assert_eq!((e.offset, e.found, e.lone_digit), (4, 'g', false));
        assert_eq!(
            e.to_string(),
            "bad hex at byte 4 of the input: 'g' is not a hex digit"
        );
        let e = parse_hex("42 01 7").unwrap_err();
        assert_eq!((e.offset, e.lone_digit), (6, true));
        // An x inside a group is not a prefix.
        assert_eq!(parse_hex("420x01").unwrap_err().offset, 3);
        assert_eq!(parse_hex("é1").unwrap_err().found, 'é');
        assert_eq!(
            parse_hex("\u{7}").unwrap_err().to_string().lines().count(),
            1
        );
    }

    #[test]
    fn stdin_sniffing() {
        assert!(looks_like_hex(b"42 01 7d 34\n"));
        assert!(looks_like_hex(b"0x42:01"));
        assert!(looks_like_hex(b""));
        assert!(!looks_like_hex(&[0x42, 0x01, 0x7d, 0x34]));
        assert!(!looks_like_hex(b"42 01 zz"));
    }
}
