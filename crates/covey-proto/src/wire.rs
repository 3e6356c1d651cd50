//! Encoding engine messages from unordered option lists into a buffer.

use alloc::boxed::Box;
use alloc::vec;
use covey_core::{
    CoapOption, Code, EncodeError, Message, MessageEncoder, MessageType, OptionNumber,
};

/// The parts of a message to encode; options may come from two lists (the application's
/// and the engine's own), in any order.
pub(crate) struct Outgoing<'a> {
    pub message_type: MessageType,
    pub code: Code,
    pub message_id: u16,
    pub token: &'a [u8],
    pub options: &'a [CoapOption<'a>],
    pub extra: &'a [CoapOption<'a>],
    pub payload: &'a [u8],
}

/// A datagram buffer allocated once at construction and reused for every message.
#[derive(Debug)]
pub(crate) struct DatagramBuf {
    data: Box<[u8]>,
    len: usize,
}

impl DatagramBuf {
    /// A buffer for datagrams of up to `max` bytes.
    pub fn new(max: usize) -> DatagramBuf {
        DatagramBuf {
            data: vec![0; max].into_boxed_slice(),
            len: 0,
        }
    }

    /// The datagram held.
    pub fn as_slice(&self) -> &[u8] {
        &self.data[..self.len]
    }

    /// Replaces the content with an encoding of `m`; on error the buffer is left empty.
    pub fn encode(&mut self, m: &Outgoing<'_>) -> Result<(), EncodeError> {
        match encode_slice(m, &mut self.data) {
            Ok(n) => {
                self.len = n;
                Ok(())
            }
            Err(e) => {
                self.len = 0;
                Err(e)
            }
        }
    }

    /// Replaces the content with `bytes`; false (and empty) when they do not fit.
    pub fn copy_from(&mut self, bytes: &[u8]) -> bool {
        match self.data.get_mut(..bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len = bytes.len();
                true
            }
            None => {
                self.len = 0;
                false
            }
        }
    }

    /// Overwrites the message ID of the datagram held (bytes 2–3).
    pub fn set_message_id(&mut self, mid: u16) {
        if self.len >= 4 {
            self.data[2..4].copy_from_slice(&mid.to_be_bytes());
        }
    }

    /// Empties the buffer.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// Re-encodes a stored request `template` with a new message ID: its options except those
/// in `skip`, merged with `extra` (any order), and `payload` instead of the template's.
pub(crate) fn reencode(
    template: &[u8],
    message_id: u16,
    skip: &[OptionNumber],
    extra: &[CoapOption<'_>],
    payload: &[u8],
    out: &mut DatagramBuf,
) -> Result<(), EncodeError> {
    let m = Message::parse(template).map_err(|_| EncodeError::InvalidStructure)?;
    let mut enc = MessageEncoder::new(
        &mut out.data,
        m.message_type(),
        m.code(),
        message_id,
        m.token_bytes(),
    )?;
    let mut kept = m.options().filter(|o| !skip.contains(&o.number)).peekable();
    let mut last_extra: Option<(u16, usize)> = None;
    loop {
        // Next extra option in (number, position) order.
        let next_extra = extra
            .iter()
            .enumerate()
            .filter(|(i, o)| last_extra.is_none_or(|l| (o.number.0, *i) > l))
            .min_by_key(|(i, o)| (o.number.0, *i));
        match (kept.peek(), next_extra) {
            (Some(k), Some((i, e))) if e.number.0 < k.number.0 => {
                enc.option(e.number, e.value)?;
                last_extra = Some((e.number.0, i));
            }
            (Some(_), _) => {
                if let Some(k) = kept.next() {
                    enc.option(k.number, k.value)?;
                }
            }
            (None, Some((i, e))) => {
                enc.option(e.number, e.value)?;
                last_extra = Some((e.number.0, i));
            }
            (None, None) => break,
        }
    }
    enc.payload(payload)?;
    out.len = enc.finish();
    Ok(())
}

fn encode_slice(m: &Outgoing<'_>, buf: &mut [u8]) -> Result<usize, EncodeError> {
    let mut enc = MessageEncoder::new(buf, m.message_type, m.code, m.message_id, m.token)?;
    // Fast path: one list already in order, as most applications write it.
    if m.extra.is_empty() && m.options.windows(2).all(|w| w[0].number <= w[1].number) {
        for o in m.options {
            enc.option(o.number, o.value)?;
        }
        enc.payload(m.payload)?;
        return Ok(enc.finish());
    }
    // Selection by (number, list, position): option lists are short, and this keeps
    // repeated options in the caller's order without sorting into a temporary.
    let mut last: Option<(u16, usize, usize)> = None;
    loop {
        let mut best: Option<(u16, usize, usize)> = None;
        for (list_no, list) in [m.options, m.extra].into_iter().enumerate() {
            for (i, o) in list.iter().enumerate() {
                let key = (o.number.0, list_no, i);
                if last.is_some_and(|l| key <= l) {
                    continue;
                }
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        let Some(key) = best else { break };
        let o = if key.1 == 0 {
            &m.options[key.2]
        } else {
            &m.extra[key.2]
        };
        enc.option(o.number, o.value)?;
        last = Some(key);
    }
    enc.payload(m.payload)?;
    Ok(enc.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn merges_unordered_lists_keeping_repeat_order() {
        let options = [
            CoapOption {
                number: OptionNumber::ACCEPT,
                value: &[50],
            },
            CoapOption {
                number: OptionNumber::URI_PATH,
                value: b"a",
            },
            CoapOption {
                number: OptionNumber::URI_PATH,
                value: b"b",
            },
        ];
        let extra = [CoapOption {
            number: OptionNumber::OBSERVE,
            value: &[],
        }];
        let m = Outgoing {
            message_type: MessageType::Confirmable,
            code: Code::GET,
            message_id: 1,
            token: &[1],
            options: &options,
            extra: &extra,
            payload: b"",
        };
        let mut buf = DatagramBuf::new(100);
        buf.encode(&m).unwrap();
        let parsed = Message::parse(buf.as_slice()).unwrap();
        let numbers: Vec<u16> = parsed.options().map(|o| o.number.0).collect();
        assert_eq!(numbers, [6, 11, 11, 17]);
        assert_eq!(parsed.uri_path().collect::<Vec<_>>(), ["a", "b"]);
        let mut small = DatagramBuf::new(8);
        assert_eq!(small.encode(&m), Err(EncodeError::BufferTooSmall));
        assert!(small.as_slice().is_empty());
    }
}

#[cfg(test)]
mod reencode_tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn replaces_block_options_and_payload() {
        let opts = [
            CoapOption {
                number: OptionNumber::URI_PATH,
                value: b"a",
            },
            CoapOption {
                number: OptionNumber::BLOCK2,
                value: &[0x16],
            },
            CoapOption {
                number: OptionNumber::SIZE1,
                value: &[1],
            },
        ];
        let mut template = DatagramBuf::new(100);
        template
            .encode(&Outgoing {
                message_type: MessageType::Confirmable,
                code: Code::PUT,
                message_id: 0,
                token: &[7],
                options: &opts,
                extra: &[],
                payload: b"",
            })
            .unwrap();
        let extra = [
            CoapOption {
                number: OptionNumber::BLOCK1,
                value: &[0x0e],
            },
            CoapOption {
                number: OptionNumber::OBSERVE,
                value: &[],
            },
        ];
        let mut out = DatagramBuf::new(100);
        reencode(
            template.as_slice(),
            9,
            &[OptionNumber::BLOCK2],
            &extra,
            b"xyz",
            &mut out,
        )
        .unwrap();
        let m = Message::parse(out.as_slice()).unwrap();
        let numbers: Vec<u16> = m.options().map(|o| o.number.0).collect();
        assert_eq!(numbers, [6, 11, 27, 60]);
        assert_eq!(
            (m.message_id(), m.token_bytes(), m.payload()),
            (9, &[7u8][..], &b"xyz"[..])
        );
    }
}
