//! What an option's value means, decoded by its registered format (RFC 7252 §3.2, §5.10).

use std::borrow::Cow;
use std::fmt;

use covey_core::block::BlockError;
use covey_core::{Block, CoapOption, ContentFormat, OptionFormat, OptionNumber};

use super::hexdump::hex_string;
use super::terminal::is_printable;

/// An option value interpreted for display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionValue<'a> {
    /// A zero-length value of an empty-format option (If-None-Match, EDHOC).
    Empty,
    /// A plain unsigned integer.
    Uint(u32),
    /// A duration in seconds (Max-Age).
    Seconds(u32),
    /// A size in bytes (Size1, Size2).
    Size(u32),
    /// A Content-Format number (Content-Format, Accept).
    ContentFormat(ContentFormat),
    /// A block value (Block1, Block2, Q-Block1, Q-Block2).
    Block(Block),
    /// A block option whose value is not a usable block.
    BadBlock(u32, BlockError),
    /// No-Response suppression bits (RFC 7967).
    NoResponse(u32),
    /// A UTF-8 string.
    Text(&'a str),
    /// A string-format option whose bytes are not UTF-8.
    NotUtf8(&'a [u8]),
    /// Opaque bytes, or a known uint too long to read.
    Opaque(&'a [u8]),
    /// An option the registry does not know.
    Unknown(OptionNumber, &'a [u8]),
}

impl<'a> OptionValue<'a> {
    /// Decodes `option` by its registry entry.
    pub fn of(option: &CoapOption<'a>) -> OptionValue<'a> {
        let bytes = option.value;
        let Some(def) = option.number.definition() else {
            return OptionValue::Unknown(option.number, bytes);
        };
        match def.format {
            OptionFormat::Empty if bytes.is_empty() => OptionValue::Empty,
            OptionFormat::Empty | OptionFormat::Opaque => OptionValue::Opaque(bytes),
            OptionFormat::String => match std::str::from_utf8(bytes) {
                Ok(text) => OptionValue::Text(text),
                Err(_) => OptionValue::NotUtf8(bytes),
            },
            OptionFormat::Uint => match option.value_uint() {
                Some(n) => uint_value(option.number, n, bytes),
                None => OptionValue::Opaque(bytes),
            },
        }
    }
}

fn uint_value(number: OptionNumber, n: u32, bytes: &[u8]) -> OptionValue<'_> {
    match number {
        OptionNumber::CONTENT_FORMAT | OptionNumber::ACCEPT => match u16::try_from(n) {
            Ok(cf) => OptionValue::ContentFormat(ContentFormat(cf)),
            Err(_) => OptionValue::Uint(n),
        },
        OptionNumber::BLOCK1
        | OptionNumber::BLOCK2
        | OptionNumber::Q_BLOCK1
        | OptionNumber::Q_BLOCK2 => match Block::decode(bytes) {
            Ok(block) => OptionValue::Block(block),
            Err(e) => OptionValue::BadBlock(n, e),
        },
        OptionNumber::MAX_AGE => OptionValue::Seconds(n),
        OptionNumber::SIZE1 | OptionNumber::SIZE2 => OptionValue::Size(n),
        OptionNumber::NO_RESPONSE => OptionValue::NoResponse(n),
        _ => OptionValue::Uint(n),
    }
}

/// The critical/elective, safe/unsafe and NoCacheKey properties of an option number.
pub fn classification(number: OptionNumber) -> String {
    let mut words = vec![if number.is_critical() {
        "critical"
    } else {
        "elective"
    }];
    if number.is_unsafe() {
        words.push("unsafe");
    } else {
        words.push("safe-to-forward");
        if number.is_no_cache_key() {
            words.push("no-cache-key");
        }
    }
    words.join(", ")
}

/// The response classes a No-Response value suppresses (RFC 7967 §2.1), plus leftover bits.
pub fn no_response_classes(bits: u32) -> (Vec<&'static str>, u32) {
    let known = [(2, "2.xx"), (8, "4.xx"), (16, "5.xx")];
    let classes = known
        .iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    (classes, bits & !(2 | 8 | 16))
}

/// `text` as is when it reads unambiguously, otherwise quoted with escapes.
pub fn quote_if_needed(text: &str) -> Cow<'_, str> {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| !c.is_whitespace() && c != '"' && c != '\\' && is_printable(c));
    if plain {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' ' | '\'' => out.push(c),
            c => out.extend(c.escape_debug()),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

fn opaque(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        "(empty)".into()
    } else {
        format!("0x{}", hex_string(bytes))
    }
}

impl fmt::Display for OptionValue<'_> {
    /// The value as the text output shows it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Empty => f.write_str("(empty)"),
            OptionValue::Uint(n) => write!(f, "{n}"),
            OptionValue::Seconds(n) => write!(f, "{n} s"),
            OptionValue::Size(n) => write!(f, "{n} bytes"),
            OptionValue::ContentFormat(cf) => match cf.media_type() {
                Some(media) => write!(f, "{} ({media})", cf.0),
                None => write!(f, "{} (unregistered)", cf.0),
            },
            OptionValue::Block(block) => write!(f, "{block}"),
            OptionValue::BadBlock(n, e) => write!(f, "{n} (invalid: {e})"),
            OptionValue::NoResponse(bits) => {
                let (classes, rest) = no_response_classes(*bits);
                write!(f, "{bits} (")?;
                if classes.is_empty() {
                    f.write_str("all responses wanted")?;
                } else {
                    write!(f, "suppress {}", classes.join(", "))?;
                }
                if rest != 0 {
                    write!(f, "; unknown bits 0x{rest:02x}")?;
                }
                f.write_str(")")
            }
            OptionValue::Text(text) => f.write_str(&quote_if_needed(text)),
            OptionValue::NotUtf8(bytes) => write!(f, "{} (not UTF-8)", opaque(bytes)),
            OptionValue::Opaque(bytes) => f.write_str(&opaque(bytes)),
            OptionValue::Unknown(number, bytes) => {
                write!(
                    f,
                    "{} (unknown, {})",
                    opaque(bytes),
                    classification(*number)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(number: u16, value: &[u8]) -> String {
        let option = CoapOption {
            number: OptionNumber(number),
            value,
        };
        OptionValue::of(&option).to_string()
    }

    #[test]
    fn each_format_reads_as_its_kind() {
        assert_eq!(show(11, b"temp"), "temp");
        assert_eq!(show(15, b"a=1"), "a=1");
        assert_eq!(show(11, b""), "\"\"");
        assert_eq!(show(11, b"two words"), "\"two words\"");
        assert_eq!(show(11, b"a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(show(11, &[0xff]), "0xff (not UTF-8)");
        assert_eq!(show(17, &[50]), "50 (application/json)");
        assert_eq!(show(12, &[]), "0 (text/plain;charset=utf-8)");
        assert_eq!(show(12, &[0x27, 0x0f]), "9999 (unregistered)");
        assert_eq!(show(23, &[0x2a]), "2/1/64");
        assert_eq!(
            show(27, &[0x0f]),
            "15 (invalid: block size exponent 7 is reserved)"
        );
        assert_eq!(show(6, &[0x01, 0x00]), "256");
        assert_eq!(show(14, &[0x3c]), "60 s");
        assert_eq!(show(28, &[0x04, 0x00]), "1024 bytes");
        assert_eq!(show(258, &[26]), "26 (suppress 2.xx, 4.xx, 5.xx)");
        assert_eq!(show(258, &[]), "0 (all responses wanted)");
        assert_eq!(show(258, &[3]), "3 (suppress 2.xx; unknown bits 0x01)");
        assert_eq!(show(4, &[0xde, 0xad]), "0xdead");
        assert_eq!(show(1, &[]), "(empty)");
        assert_eq!(show(5, &[]), "(empty)");
        assert_eq!(show(252, &[1, 2, 3]), "0x010203");
    }

    #[test]
    fn unknown_options_are_classified_by_their_bits() {
        assert_eq!(
            show(65000, &[1, 2]),
            "0x0102 (unknown, elective, safe-to-forward)"
        );
        assert_eq!(
            show(65001, &[]),
            "(empty) (unknown, critical, safe-to-forward)"
        );
        assert_eq!(show(2051, &[7]), "0x07 (unknown, critical, unsafe)");
        assert_eq!(
            show(2076, &[7]),
            "0x07 (unknown, elective, safe-to-forward, no-cache-key)"
        );
    }
}
