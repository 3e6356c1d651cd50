//! Encoding a message into a caller-owned buffer (RFC 7252 §3), never allocating or panicking.

use crate::{
    uint, Code, Message, MessageType, OptionNumber, MAX_TOKEN_LEN, PAYLOAD_MARKER, VERSION,
};

/// Why a message could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The caller's buffer cannot hold the message.
    BufferTooSmall,
    /// Token longer than 8 bytes.
    TokenTooLong,
    /// Options must be added in non-decreasing number order.
    OptionOutOfOrder {
        /// The last option written.
        previous: OptionNumber,
        /// The option that came too late.
        number: OptionNumber,
    },
    /// An option value longer than the wire format allows (65804 bytes).
    OptionTooLong,
    /// Options or a payload after the payload, or content in an Empty message.
    InvalidStructure,
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EncodeError::BufferTooSmall => f.write_str("buffer too small for the message"),
            EncodeError::TokenTooLong => f.write_str("token longer than 8 bytes"),
            EncodeError::OptionOutOfOrder { previous, number } => {
                write!(f, "option {number} written after {previous}")
            }
            EncodeError::OptionTooLong => f.write_str("option value longer than 65804 bytes"),
            EncodeError::InvalidStructure => {
                f.write_str("option or payload in the wrong place for this message")
            }
        }
    }
}

impl core::error::Error for EncodeError {}

/// Largest option value length the delta/length encoding can express (65 535 + 269), or on a
/// 16-bit target the largest length there is.
pub const MAX_OPTION_VALUE_LEN: usize = match 65_535usize.checked_add(269) {
    Some(len) => len,
    None => usize::MAX,
};

/// Writes a message into a borrowed buffer: header and token first, then options in
/// ascending order, then an optional payload; [`MessageEncoder::finish`] gives the length.
#[derive(Debug)]
pub struct MessageEncoder<'b> {
    buf: &'b mut [u8],
    pos: usize,
    last_option: u16,
    payload_written: bool,
    empty: bool,
}

/// Nibble and extension bytes for a delta or length value.
#[inline(always)]
fn nibble(value: usize) -> (u8, usize) {
    match value {
        0..=12 => (value as u8, 0),
        13..=268 => (13, 1),
        _ => (14, 2),
    }
}

#[inline(always)]
fn write_ext(out: &mut [u8], value: usize, ext_len: usize) {
    match ext_len {
        1 => out[0] = (value - 13) as u8,
        2 => out[..2].copy_from_slice(&((value - 269) as u16).to_be_bytes()),
        _ => {}
    }
}

impl<'b> MessageEncoder<'b> {
    /// Starts a message with its header and token.
    #[inline]
    pub fn new(
        buf: &'b mut [u8],
        message_type: MessageType,
        code: Code,
        message_id: u16,
        token: &[u8],
    ) -> Result<MessageEncoder<'b>, EncodeError> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(EncodeError::TokenTooLong);
        }
        if code.is_empty() && !token.is_empty() {
            return Err(EncodeError::InvalidStructure);
        }
        let end = 4 + token.len();
        if buf.len() < end {
            return Err(EncodeError::BufferTooSmall);
        }
        let mid = message_id.to_be_bytes();
        buf[0] = (VERSION << 6) | ((message_type as u8) << 4) | token.len() as u8;
        buf[1] = code.0;
        buf[2] = mid[0];
        buf[3] = mid[1];
        buf[4..end].copy_from_slice(token);
        Ok(MessageEncoder {
            buf,
            pos: end,
            last_option: 0,
            payload_written: false,
            empty: code.is_empty(),
        })
    }

    /// Starts the body of a message without its header: the code byte, then options and
    /// payload as in a message. This is the layout of OSCORE's plaintext (RFC 8613 §5.3).
    #[inline]
    pub fn without_header(
        buf: &'b mut [u8],
        code: Code,
    ) -> Result<MessageEncoder<'b>, EncodeError> {
        let first = buf.first_mut().ok_or(EncodeError::BufferTooSmall)?;
        *first = code.0;
        Ok(MessageEncoder {
            buf,
            pos: 1,
            last_option: 0,
            payload_written: false,
            empty: false,
        })
    }

    /// Appends an option; numbers must not decrease.
    #[inline]
    pub fn option(&mut self, number: OptionNumber, value: &[u8]) -> Result<&mut Self, EncodeError> {
        if self.payload_written || self.empty {
            return Err(EncodeError::InvalidStructure);
        }
        if number.0 < self.last_option {
            return Err(EncodeError::OptionOutOfOrder {
                previous: OptionNumber(self.last_option),
                number,
            });
        }
        if value.len() > MAX_OPTION_VALUE_LEN {
            return Err(EncodeError::OptionTooLong);
        }
        let delta = (number.0 - self.last_option) as usize;
        let (dn, dext) = nibble(delta);
        let (ln, lext) = nibble(value.len());
        let total = 1 + dext + lext + value.len();
        let out = self
            .buf
            .get_mut(self.pos..self.pos + total)
            .ok_or(EncodeError::BufferTooSmall)?;
        out[0] = (dn << 4) | ln;
        write_ext(&mut out[1..], delta, dext);
        write_ext(&mut out[1 + dext..], value.len(), lext);
        out[1 + dext + lext..].copy_from_slice(value);
        self.pos += total;
        self.last_option = number.0;
        Ok(self)
    }

    /// Appends a uint option in the fewest bytes.
    #[inline]
    pub fn uint_option(
        &mut self,
        number: OptionNumber,
        value: u32,
    ) -> Result<&mut Self, EncodeError> {
        let mut tmp = [0; 4];
        let bytes = uint::encode(value, &mut tmp);
        self.option(number, bytes)
    }

    /// Appends the payload marker and payload; an empty payload writes nothing.
    #[inline]
    pub fn payload(&mut self, payload: &[u8]) -> Result<&mut Self, EncodeError> {
        if self.payload_written {
            return Err(EncodeError::InvalidStructure);
        }
        if payload.is_empty() {
            return Ok(self);
        }
        if self.empty {
            return Err(EncodeError::InvalidStructure);
        }
        let out = self
            .buf
            .get_mut(self.pos..self.pos + 1 + payload.len())
            .ok_or(EncodeError::BufferTooSmall)?;
        out[0] = PAYLOAD_MARKER;
        out[1..].copy_from_slice(payload);
        self.pos += 1 + payload.len();
        self.payload_written = true;
        Ok(self)
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.pos
    }

    /// Always false: a message has at least its 4-byte header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Ends the message and returns its length in the buffer.
    pub fn finish(self) -> usize {
        self.pos
    }

    /// Writes a copy of `message` (header, token, options, payload) into `buf`.
    pub fn encode_message(message: &Message<'_>, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let mut enc = MessageEncoder::new(
            buf,
            message.message_type(),
            message.code(),
            message.message_id(),
            message.token_bytes(),
        )?;
        for o in message.options() {
            enc.option(o.number, o.value)?;
        }
        enc.payload(message.payload())?;
        Ok(enc.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ContentFormat;

    #[test]
    fn a_body_without_header_is_the_code_then_options_and_payload() {
        let mut buf = [0; 16];
        let mut enc = MessageEncoder::without_header(&mut buf, Code::GET).unwrap();
        enc.option(OptionNumber::URI_PATH, b"tv").unwrap();
        enc.payload(b"x").unwrap();
        let len = enc.finish();
        assert_eq!(buf[..len], [0x01, 0xB2, b't', b'v', 0xFF, b'x']);
        assert_eq!(
            MessageEncoder::without_header(&mut [], Code::GET).err(),
            Some(EncodeError::BufferTooSmall)
        );
    }

    #[test]
    fn e1_and_e2() {
        let mut buf = [0u8; 64];
        let mut enc = MessageEncoder::new(
            &mut buf,
            MessageType::Confirmable,
            Code::GET,
            0x7d34,
            &[0x1a, 0x2b],
        )
        .unwrap();
        enc.option(OptionNumber::URI_PATH, b"temp").unwrap();
        let n = enc.finish();
        assert_eq!(
            &buf[..n],
            &[0x42, 0x01, 0x7d, 0x34, 0x1a, 0x2b, 0xb4, 0x74, 0x65, 0x6d, 0x70]
        );

        let mut enc = MessageEncoder::new(
            &mut buf,
            MessageType::Acknowledgement,
            Code::CONTENT,
            0x7d34,
            &[0x1a, 0x2b],
        )
        .unwrap();
        enc.uint_option(
            OptionNumber::CONTENT_FORMAT,
            ContentFormat::TEXT_PLAIN.0 as u32,
        )
        .unwrap()
        .payload(b"22.5")
        .unwrap();
        let n = enc.finish();
        assert_eq!(
            &buf[..n],
            &[0x62, 0x45, 0x7d, 0x34, 0x1a, 0x2b, 0xc0, 0xff, 0x32, 0x32, 0x2e, 0x35]
        );
    }

    #[test]
    fn e3_e4_e5_extended_headers() {
        let mut buf = [0u8; 400];
        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::POST, 1, &[]).unwrap();
        enc.uint_option(OptionNumber::CONTENT_FORMAT, 0).unwrap();
        enc.uint_option(OptionNumber::SIZE1, 300).unwrap();
        let n = enc.finish();
        assert_eq!(&buf[4..n], &[0xc0, 0xd2, 0x23, 0x01, 0x2c]);

        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 1, &[]).unwrap();
        enc.option(OptionNumber::PROXY_URI, &[b'a'; 300]).unwrap();
        assert_eq!(&buf[4..8], &[0xde, 0x16, 0x00, 0x1f]);

        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 1, &[]).unwrap();
        enc.option(OptionNumber(2049), &[0xab]).unwrap();
        assert_eq!(enc.finish(), 8);
        assert_eq!(&buf[4..7], &[0xe1, 0x06, 0xf4]);
    }

    #[test]
    fn e6_ping_and_reset() {
        let mut buf = [0u8; 4];
        let n = MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::EMPTY, 1, &[])
            .unwrap()
            .finish();
        assert_eq!(&buf[..n], &[0x40, 0, 0, 1]);
        let n = MessageEncoder::new(&mut buf, MessageType::Reset, Code::EMPTY, 1, &[])
            .unwrap()
            .finish();
        assert_eq!(&buf[..n], &[0x70, 0, 0, 1]);
    }

    #[test]
    fn reports_errors_instead_of_panicking() {
        let mut small = [0u8; 6];
        assert_eq!(
            MessageEncoder::new(&mut small, MessageType::Confirmable, Code::GET, 1, &[0; 3])
                .unwrap_err(),
            EncodeError::BufferTooSmall
        );
        let mut enc =
            MessageEncoder::new(&mut small, MessageType::Confirmable, Code::GET, 1, &[]).unwrap();
        assert_eq!(
            enc.option(OptionNumber::URI_PATH, b"abc").unwrap_err(),
            EncodeError::BufferTooSmall
        );
        assert_eq!(enc.len(), 4, "a failed option leaves the message as it was");
        assert!(enc.option(OptionNumber::URI_PATH, b"a").is_ok());
        assert_eq!(
            enc.option(OptionNumber::ETAG, b"a").unwrap_err(),
            EncodeError::OptionOutOfOrder {
                previous: OptionNumber::URI_PATH,
                number: OptionNumber::ETAG
            }
        );
        let mut buf = [0u8; 16];
        assert_eq!(
            MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 1, &[0; 9])
                .unwrap_err(),
            EncodeError::TokenTooLong
        );
        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::Reset, Code::EMPTY, 1, &[]).unwrap();
        assert_eq!(
            enc.payload(b"x").unwrap_err(),
            EncodeError::InvalidStructure
        );
    }
}
