//! A zero-copy view of a CoAP datagram (RFC 7252 §3).

use crate::option::decode_option;
use crate::{
    Block, CoapOption, Code, ContentFormat, MessageType, OptionIter, OptionNumber, ParseError,
    ParseErrorKind, Token, MAX_TOKEN_LEN, PAYLOAD_MARKER, VERSION,
};

/// The fixed 4-byte header, readable even when the rest of the message is malformed, so that
/// the receiver can still answer a broken CON with an RST echoing its message ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The message type.
    pub message_type: MessageType,
    /// The TKL field as sent (may be a reserved 9–15).
    pub token_length: u8,
    /// The code.
    pub code: Code,
    /// The message ID.
    pub message_id: u16,
}

impl Header {
    /// Reads the first 4 bytes; fails only when they are missing or the version is not 1.
    pub fn parse(datagram: &[u8]) -> Result<Header, ParseError> {
        let [b0, code, hi, lo, ..] = *datagram else {
            return Err(ParseError {
                kind: ParseErrorKind::TruncatedHeader,
                offset: datagram.len(),
            });
        };
        let version = b0 >> 6;
        if version != VERSION {
            return Err(ParseError {
                kind: ParseErrorKind::UnsupportedVersion(version),
                offset: 0,
            });
        }
        Ok(Header {
            message_type: MessageType::from_bits(b0 >> 4),
            token_length: b0 & 0x0F,
            code: Code(code),
            message_id: u16::from_be_bytes([hi, lo]),
        })
    }
}

/// A parsed message borrowing the datagram it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    header: Header,
    token: &'a [u8],
    options: &'a [u8],
    options_offset: usize,
    payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// Parses and structurally validates a datagram; options are checked for well-formed
    /// headers and order, not yet against the registry (see [`Message::validate_options`]).
    pub fn parse(datagram: &'a [u8]) -> Result<Message<'a>, ParseError> {
        let header = Header::parse(datagram)?;
        let err = |kind, offset| Err(ParseError { kind, offset });
        let tkl = header.token_length as usize;
        if tkl > MAX_TOKEN_LEN {
            return err(ParseErrorKind::ReservedTokenLength(header.token_length), 0);
        }
        if matches!(header.code.class(), 1 | 6 | 7) {
            return err(ParseErrorKind::ReservedCodeClass(header.code.class()), 1);
        }
        if header.code.is_empty() && datagram.len() > 4 {
            return err(ParseErrorKind::EmptyMessageNotEmpty, 4);
        }
        let options_offset = 4 + tkl;
        if datagram.len() < options_offset {
            return err(ParseErrorKind::TruncatedToken, datagram.len());
        }
        let rest = &datagram[options_offset..];
        let mut pos = 0;
        let mut number: u32 = 0;
        while pos < rest.len() {
            if rest[pos] == PAYLOAD_MARKER {
                if pos + 1 == rest.len() {
                    return err(
                        ParseErrorKind::PayloadMarkerWithoutPayload,
                        options_offset + pos,
                    );
                }
                return Ok(Message {
                    header,
                    token: &datagram[4..options_offset],
                    options: &rest[..pos],
                    options_offset,
                    payload: &rest[pos + 1..],
                });
            }
            let raw = decode_option(rest, pos, options_offset)?;
            number += raw.delta;
            if number > u16::MAX as u32 {
                return err(ParseErrorKind::OptionNumberOverflow, options_offset + pos);
            }
            pos = raw.value_end;
        }
        Ok(Message {
            header,
            token: &datagram[4..options_offset],
            options: rest,
            options_offset,
            payload: &[],
        })
    }

    /// Checks known options against the registry: length bounds and repetition. The first
    /// violation is returned; RFC 7252 §5.4.1 treats such an option as unrecognised, so the
    /// caller rejects the message only when the option is critical.
    pub fn validate_options(&self) -> Result<(), ParseError> {
        let mut previous: Option<OptionNumber> = None;
        let mut pos = 0;
        while pos < self.options.len() {
            let raw = decode_option(self.options, pos, self.options_offset)?;
            let number = OptionNumber(
                (previous.map_or(0, |p| p.0 as u32) + raw.delta).min(u16::MAX as u32) as u16,
            );
            let offset = self.options_offset + pos;
            let len = raw.value_end - raw.value_start;
            if let Some(rule) = number.rule() {
                if !(rule.min_len as usize..=rule.max_len as usize).contains(&len) {
                    return Err(ParseError {
                        kind: ParseErrorKind::OptionLengthOutOfBounds { number, len },
                        offset,
                    });
                }
                if !rule.repeatable && previous == Some(number) {
                    return Err(ParseError {
                        kind: ParseErrorKind::OptionRepeated { number },
                        offset,
                    });
                }
            }
            previous = Some(number);
            pos = raw.value_end;
        }
        Ok(())
    }

    /// The fixed header.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The message type.
    pub fn message_type(&self) -> MessageType {
        self.header.message_type
    }

    /// The code.
    pub fn code(&self) -> Code {
        self.header.code
    }

    /// The message ID.
    pub fn message_id(&self) -> u16 {
        self.header.message_id
    }

    /// The token bytes (0–8).
    pub fn token_bytes(&self) -> &'a [u8] {
        self.token
    }

    /// The token as an inline value.
    pub fn token(&self) -> Token {
        // Parse guaranteed at most 8 bytes.
        Token::new(self.token).unwrap_or_default()
    }

    /// All options in wire order.
    pub fn options(&self) -> OptionIter<'a> {
        OptionIter::new(self.options)
    }

    /// The raw encoded option region (between token and payload marker).
    pub fn options_bytes(&self) -> &'a [u8] {
        self.options
    }

    /// Every occurrence of option `number`, in order.
    pub fn options_of(&self, number: OptionNumber) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.options()
            .skip_while(move |o| o.number < number)
            .take_while(move |o| o.number == number)
            .map(|o| o.value)
    }

    /// The value of the first occurrence of option `number`.
    pub fn option(&self, number: OptionNumber) -> Option<&'a [u8]> {
        self.options_of(number).next()
    }

    /// True when option `number` is present.
    pub fn has_option(&self, number: OptionNumber) -> bool {
        self.option(number).is_some()
    }

    /// The first occurrence of a uint option, if present and at most 4 significant bytes.
    pub fn uint_option(&self, number: OptionNumber) -> Option<u32> {
        self.option(number).and_then(crate::uint::decode)
    }

    /// Content-Format, if present.
    pub fn content_format(&self) -> Option<ContentFormat> {
        self.uint_option(OptionNumber::CONTENT_FORMAT)
            .and_then(|v| u16::try_from(v).ok())
            .map(ContentFormat)
    }

    /// Accept, if present.
    pub fn accept(&self) -> Option<ContentFormat> {
        self.uint_option(OptionNumber::ACCEPT)
            .and_then(|v| u16::try_from(v).ok())
            .map(ContentFormat)
    }

    /// Observe value (24 bits), if present.
    pub fn observe(&self) -> Option<u32> {
        self.uint_option(OptionNumber::OBSERVE)
            .filter(|v| *v < 1 << 24)
    }

    /// Block2, if present and well-formed.
    pub fn block2(&self) -> Option<Block> {
        self.option(OptionNumber::BLOCK2)
            .and_then(|v| Block::decode(v).ok())
    }

    /// Block1, if present and well-formed.
    pub fn block1(&self) -> Option<Block> {
        self.option(OptionNumber::BLOCK1)
            .and_then(|v| Block::decode(v).ok())
    }

    /// Uri-Path segments as text (segments that are not UTF-8 are skipped).
    pub fn uri_path(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.options_of(OptionNumber::URI_PATH)
            .filter_map(|v| core::str::from_utf8(v).ok())
    }

    /// Uri-Query arguments as text (arguments that are not UTF-8 are skipped).
    pub fn uri_query(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.options_of(OptionNumber::URI_QUERY)
            .filter_map(|v| core::str::from_utf8(v).ok())
    }

    /// The payload (empty when there is none).
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// Offset of the first option byte in the datagram.
    pub fn options_offset(&self) -> usize {
        self.options_offset
    }

    /// The first option in the message.
    pub fn first_option(&self) -> Option<CoapOption<'a>> {
        self.options().next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    fn kind(bytes: &[u8]) -> ParseErrorKind {
        Message::parse(bytes).unwrap_err().kind
    }

    #[test]
    fn e1_con_get() {
        let d = hex("42 01 7d 34 1a 2b b4 74 65 6d 70");
        let m = Message::parse(&d).unwrap();
        assert_eq!(m.message_type(), MessageType::Confirmable);
        assert_eq!(m.code(), Code::GET);
        assert_eq!(m.message_id(), 0x7d34);
        assert_eq!(m.token_bytes(), &[0x1a, 0x2b]);
        assert_eq!(m.uri_path().collect::<Vec<_>>(), ["temp"]);
        assert!(m.payload().is_empty());
    }

    #[test]
    fn e2_piggybacked_ack() {
        let d = hex("62 45 7d 34 1a 2b c0 ff 32 32 2e 35");
        let m = Message::parse(&d).unwrap();
        assert_eq!(m.message_type(), MessageType::Acknowledgement);
        assert_eq!(m.code(), Code::CONTENT);
        assert_eq!(m.content_format(), Some(ContentFormat::TEXT_PLAIN));
        assert_eq!(m.payload(), b"22.5");
    }

    #[test]
    fn e4_e5_extended_forms() {
        let mut d = hex("40 01 00 01 de 16 00 1f");
        d.extend(std::iter::repeat_n(b'a', 300));
        let m = Message::parse(&d).unwrap();
        let o = m.first_option().unwrap();
        assert_eq!((o.number, o.value.len()), (OptionNumber::PROXY_URI, 300));

        let d = hex("40 01 00 01 e1 06 f4 07");
        let o = Message::parse(&d).unwrap().first_option().unwrap();
        assert_eq!((o.number, o.value), (OptionNumber(2049), &[7u8][..]));
    }

    #[test]
    fn e6_ping() {
        let d = hex("40 00 00 01");
        let m = Message::parse(&d).unwrap();
        assert!(m.code().is_empty());
        assert_eq!(m.message_type(), MessageType::Confirmable);
    }

    #[test]
    fn every_format_error_has_its_own_kind() {
        assert_eq!(kind(&[0x40, 1, 0]), ParseErrorKind::TruncatedHeader);
        assert_eq!(
            kind(&hex("80 01 00 01")),
            ParseErrorKind::UnsupportedVersion(2)
        );
        assert_eq!(
            kind(&hex("49 01 00 01")),
            ParseErrorKind::ReservedTokenLength(9)
        );
        assert_eq!(
            kind(&hex("4f 01 00 01")),
            ParseErrorKind::ReservedTokenLength(15)
        );
        assert_eq!(kind(&hex("44 01 00 01 aa")), ParseErrorKind::TruncatedToken);
        assert_eq!(
            kind(&hex("41 00 00 01 aa")),
            ParseErrorKind::EmptyMessageNotEmpty
        );
        assert_eq!(
            kind(&hex("40 00 00 01 ff 01")),
            ParseErrorKind::EmptyMessageNotEmpty
        );
        assert_eq!(
            kind(&hex("40 01 00 01 ff")),
            ParseErrorKind::PayloadMarkerWithoutPayload
        );
        assert_eq!(
            kind(&hex("40 01 00 01 f0")),
            ParseErrorKind::ReservedDeltaNibble
        );
        assert_eq!(
            kind(&hex("40 01 00 01 bf")),
            ParseErrorKind::ReservedLengthNibble
        );
        assert_eq!(
            kind(&hex("40 01 00 01 b4 74 65")),
            ParseErrorKind::TruncatedOption
        );
        assert_eq!(
            kind(&hex("40 01 00 01 d1")),
            ParseErrorKind::TruncatedOption
        );
        assert_eq!(
            kind(&hex("40 01 00 01 e0 ff")),
            ParseErrorKind::TruncatedOption
        );
        assert_eq!(
            kind(&hex("40 20 00 01")),
            ParseErrorKind::ReservedCodeClass(1)
        );
        assert_eq!(
            kind(&hex("40 e0 00 01")),
            ParseErrorKind::ReservedCodeClass(7)
        );
        assert_eq!(
            kind(&hex("40 01 00 01 e0 ff ff e0 ff ff")),
            ParseErrorKind::OptionNumberOverflow
        );
    }

    #[test]
    fn error_offsets_point_at_the_fault() {
        let e = Message::parse(&hex("42 01 00 01 aa bb b4 74 65")).unwrap_err();
        assert_eq!(e.offset, 6);
        let e = Message::parse(&hex("40 01 00 01 b1 61 ff")).unwrap_err();
        assert_eq!(e.offset, 6);
    }

    #[test]
    fn registry_checks_are_separate_from_parsing() {
        // ETag of length 0 parses but violates the 1–8 bound.
        let d = hex("40 01 00 01 40");
        let m = Message::parse(&d).unwrap();
        assert_eq!(
            m.validate_options().unwrap_err().kind,
            ParseErrorKind::OptionLengthOutOfBounds {
                number: OptionNumber::ETAG,
                len: 0
            }
        );
        // Two Content-Format options.
        let d = hex("40 01 00 01 c0 00");
        let m = Message::parse(&d).unwrap();
        assert_eq!(
            m.validate_options().unwrap_err(),
            ParseError {
                kind: ParseErrorKind::OptionRepeated {
                    number: OptionNumber::CONTENT_FORMAT
                },
                offset: 5
            }
        );
        // Repeated Uri-Path is fine; unknown options of any length are fine.
        let d = hex("40 01 00 01 b1 61 01 62 e0 06 f4");
        let m = Message::parse(&d).unwrap();
        assert!(m.validate_options().is_ok());
    }

    #[test]
    fn accessors_find_options_among_others() {
        // Uri-Path a, Uri-Path b, Uri-Query x=1, Accept 50
        let d = hex("40 01 00 01 b1 61 01 62 43 78 3d 31 21 32");
        let m = Message::parse(&d).unwrap();
        assert_eq!(m.uri_path().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(m.uri_query().collect::<Vec<_>>(), ["x=1"]);
        assert_eq!(m.accept(), Some(ContentFormat::JSON));
        assert_eq!(m.content_format(), None);
        assert!(!m.has_option(OptionNumber::OBSERVE));
    }
}
