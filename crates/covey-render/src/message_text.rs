//! A message for people: header line, one line per option, then the payload.

use std::fmt::Write;

use covey_core::{Code, Message};

use super::option_value::OptionValue;
use super::payload::Payload;

/// The code as people say it: `GET` for a known method, otherwise `2.05 Content`, `4.30`.
pub fn code_label(code: Code) -> String {
    match code.name() {
        Some(name) if code.is_request() => name.to_string(),
        _ => code.to_string(),
    }
}

/// Renders `message` as text; `terminal` makes payload text safe to show on a terminal.
pub fn render(message: &Message<'_>, terminal: bool) -> String {
    let mut out = String::new();
    let mid = message.message_id();
    // Writing to a String cannot fail.
    let _ = write!(
        out,
        "{} {}  MID 0x{mid:04x} ({mid})",
        message.message_type(),
        code_label(message.code()),
    );
    let token = message.token();
    if !token.is_empty() {
        let _ = write!(out, "  token {token}");
    }
    out.push('\n');
    for option in message.options() {
        let _ = writeln!(out, "  {}: {}", option.number, OptionValue::of(&option));
    }
    let payload = message.payload();
    if !payload.is_empty() {
        let payload = Payload::new(payload, message.content_format());
        let _ = writeln!(out, "payload ({}):", payload.summary());
        out.push_str(&payload.body_text(terminal));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_hex::parse_hex;

    fn text(hex: &str) -> String {
        let bytes = parse_hex(hex).unwrap();
        render(&Message::parse(&bytes).unwrap(), false)
    }

    #[test]
    fn spec_vectors() {
        assert_eq!(
            text("42 01 7d 34 1a 2b b4 74 65 6d 70"),
            "CON GET  MID 0x7d34 (32052)  token 1a2b\n  Uri-Path: temp\n"
        );
        assert_eq!(
            text("62 45 7d 34 1a 2b c0 ff 32 32 2e 35"),
            "ACK 2.05 Content  MID 0x7d34 (32052)  token 1a2b\n  \
             Content-Format: 0 (text/plain;charset=utf-8)\n\
             payload (4 bytes, text/plain;charset=utf-8):\n22.5\n"
        );
        assert_eq!(text("40 00 00 01"), "CON 0.00 Empty  MID 0x0001 (1)\n");
        assert_eq!(text("70 00 00 01"), "RST 0.00 Empty  MID 0x0001 (1)\n");
    }

    #[test]
    fn codes() {
        assert_eq!(code_label(Code::GET), "GET");
        assert_eq!(code_label(Code::new(0, 9)), "0.09");
        assert_eq!(code_label(Code::NOT_FOUND), "4.04 Not Found");
        assert_eq!(code_label(Code::new(4, 30)), "4.30");
    }
}
