//! Encoding engine messages from unordered option lists into a buffer.

use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::DatagramBuf;
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

impl Outgoing<'_> {
    /// An upper bound of the encoded size: every option with the longest header it can
    /// have (1 + 2 + 2 bytes), so a buffer of this size never comes up short.
    pub fn size_bound(&self) -> usize {
        let options: usize = self
            .options
            .iter()
            .chain(self.extra)
            .map(|o| o.value.len() + 5)
            .sum();
        4 + self.token.len() + options + 1 + self.payload.len()
    }
}

/// Re-encodes a stored request `template` with a new message ID: its options except those
/// in `skip`, merged with `extra` (any order), and `payload` instead of the template's.
#[cfg(feature = "client")]
pub(crate) fn reencode(
    template: &[u8],
    message_id: u16,
    skip: &[OptionNumber],
    extra: &[CoapOption<'_>],
    payload: &[u8],
    out: &mut DatagramBuf,
    pool: &mut BufferPool,
) -> Result<(), EncodeError> {
    let bound = template.len() + extra.iter().map(|o| o.value.len() + 5).sum::<usize>() + 1;
    out.write_with(bound + payload.len(), pool, |buf| {
        reencode_into(template, message_id, None, skip, extra, Some(payload), buf)
    })
}

/// `message` as a new datagram of its own, without the options in `skip` and with
/// `payload` instead of its own: how a message put together from outer blocks, or an
/// EDHOC + OSCORE request without its message_3, goes on. `None` if it does not encode.
#[cfg(feature = "oscore")]
pub(crate) fn rebuilt(
    message: &Message<'_>,
    skip: &[OptionNumber],
    payload: &[u8],
) -> Option<alloc::vec::Vec<u8>> {
    let options: usize = message.options().map(|o| o.value.len() + 5).sum();
    let mut out = alloc::vec![0; 4 + 8 + options + 1 + payload.len()];
    let mut encoder = MessageEncoder::new(
        &mut out,
        message.message_type(),
        message.code(),
        message.message_id(),
        message.token_bytes(),
    )
    .ok()?;
    for o in message.options().filter(|o| !skip.contains(&o.number)) {
        encoder.option(o.number, o.value).ok()?;
    }
    encoder.payload(payload).ok()?;
    let len = encoder.finish();
    out.truncate(len);
    Some(out)
}

/// Writes one observer's notification into `buf`: the round's `template` (options and
/// payload) as a `message_type` message with the observer's `token`, `message_id` and
/// Observe option in `extra`.
pub(crate) fn notification_into(
    template: &[u8],
    message_type: MessageType,
    message_id: u16,
    token: &[u8],
    extra: &[CoapOption<'_>],
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let size = reencode_into(template, message_id, Some(token), &[], extra, None, buf)?;
    // The type is bits 5–4 of the first byte (RFC 7252 §3); the template's is NON.
    buf[0] = (buf[0] & !0x30) | ((message_type as u8) << 4);
    Ok(size)
}

/// Re-encodes `template` with a new message ID, and a new token and payload where given
/// (`None` keeps the template's).
fn reencode_into(
    template: &[u8],
    message_id: u16,
    token: Option<&[u8]>,
    skip: &[OptionNumber],
    extra: &[CoapOption<'_>],
    payload: Option<&[u8]>,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let m = Message::parse(template).map_err(|_| EncodeError::InvalidStructure)?;
    let token = token.unwrap_or(m.token_bytes());
    let payload = payload.unwrap_or(m.payload());
    let mut enc = MessageEncoder::new(buf, m.message_type(), m.code(), message_id, token)?;
    let kept = &mut m.options().filter(|o| !skip.contains(&o.number));
    merge_options(&mut enc, kept, [extra, &[]])?;
    enc.payload(payload)?;
    Ok(enc.finish())
}

/// Encodes `sorted` (options already in number order, as a parsed message's) merged with
/// `lists` (any order): by number, then `sorted` first, then by list and position, which
/// keeps repeated options in the order given. One routine, not generic, for both encoders:
/// a node's flash holds it once.
fn merge_options<'a>(
    enc: &mut MessageEncoder<'_>,
    sorted: &mut dyn Iterator<Item = CoapOption<'a>>,
    lists: [&[CoapOption<'_>]; 2],
) -> Result<(), EncodeError> {
    let mut sorted = sorted.peekable();
    // Selection by (number, list, position) among the lists: they are short, and this
    // needs no sorted copy.
    let mut last: Option<(u16, usize, usize)> = None;
    loop {
        let mut best: Option<(u16, usize, usize)> = None;
        for (list_no, list) in lists.into_iter().enumerate() {
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
        let listed = match (sorted.peek(), best) {
            (Some(s), Some(b)) if b.0 < s.number.0 => b,
            (Some(_), _) => {
                if let Some(s) = sorted.next() {
                    enc.option(s.number, s.value)?;
                }
                continue;
            }
            (None, Some(b)) => b,
            (None, None) => return Ok(()),
        };
        let o = &lists[listed.1][listed.2];
        enc.option(o.number, o.value)?;
        last = Some(listed);
    }
}

/// Encodes `m` into `buf`, returning its length.
pub(crate) fn encode_into(m: &Outgoing<'_>, buf: &mut [u8]) -> Result<usize, EncodeError> {
    let mut enc = MessageEncoder::new(buf, m.message_type, m.code, m.message_id, m.token)?;
    // Fast path: one list already in order, as most applications write it.
    if m.extra.is_empty() && m.options.windows(2).all(|w| w[0].number <= w[1].number) {
        for o in m.options {
            enc.option(o.number, o.value)?;
        }
        enc.payload(m.payload)?;
        return Ok(enc.finish());
    }
    merge_options(&mut enc, &mut core::iter::empty(), [m.options, m.extra])?;
    enc.payload(m.payload)?;
    Ok(enc.finish())
}

impl DatagramBuf {
    /// Replaces the content with an encoding of `m`; on error the buffer is left empty.
    pub fn encode(&mut self, m: &Outgoing<'_>, pool: &mut BufferPool) -> Result<(), EncodeError> {
        self.write_with(m.size_bound(), pool, |buf| encode_into(m, buf))
    }
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
        let mut pool = BufferPool::new(100, 0);
        let mut buf = DatagramBuf::default();
        buf.encode(&m, &mut pool).unwrap();
        assert!(m.size_bound() >= buf.as_slice().len());
        let parsed = Message::parse(buf.as_slice()).unwrap();
        let numbers: Vec<u16> = parsed.options().map(|o| o.number.0).collect();
        assert_eq!(numbers, [6, 11, 11, 17]);
        assert_eq!(parsed.uri_path().collect::<Vec<_>>(), ["a", "b"]);
        let mut tiny_pool = BufferPool::new(8, 0);
        let mut small = DatagramBuf::default();
        assert_eq!(
            small.encode(&m, &mut tiny_pool),
            Err(EncodeError::BufferTooSmall)
        );
        assert!(small.as_slice().is_empty());
    }
    #[test]
    fn a_notification_merges_its_observe_value_into_the_template_in_number_order() {
        // A round's template: ETag, two Location-Path-like repeats (8), Content-Format,
        // Max-Age, as the engine stores it (NON, its own token).
        let opts = [
            CoapOption {
                number: OptionNumber::ETAG,
                value: &[1],
            },
            CoapOption {
                number: OptionNumber(8),
                value: b"x",
            },
            CoapOption {
                number: OptionNumber(8),
                value: b"y",
            },
            CoapOption {
                number: OptionNumber::CONTENT_FORMAT,
                value: &[],
            },
            CoapOption {
                number: OptionNumber::MAX_AGE,
                value: &[60],
            },
        ];
        let mut template = [0u8; 64];
        let len = encode_into(
            &Outgoing {
                message_type: MessageType::NonConfirmable,
                code: Code::CONTENT,
                message_id: 0,
                token: &[],
                options: &opts,
                extra: &[],
                payload: b"21.5",
            },
            &mut template,
        )
        .unwrap();
        let observe = [
            CoapOption {
                number: OptionNumber::OBSERVE,
                value: &[7],
            },
            // An extra option equal in number to the template's goes after it.
            CoapOption {
                number: OptionNumber(8),
                value: b"z",
            },
        ];
        let mut buf = [0u8; 64];
        let size = notification_into(
            &template[..len],
            MessageType::Confirmable,
            0x1234,
            &[9, 9],
            &observe,
            &mut buf,
        )
        .unwrap();
        let m = Message::parse(&buf[..size]).unwrap();
        let options: Vec<(u16, &[u8])> = m.options().map(|o| (o.number.0, o.value)).collect();
        let expected: [(u16, &[u8]); 7] = [
            (4, &[1]),
            (6, &[7]),
            (8, b"x"),
            (8, b"y"),
            (8, b"z"),
            (12, &[]),
            (14, &[60]),
        ];
        assert_eq!(options, expected);
        assert_eq!(
            (
                m.message_type(),
                m.message_id(),
                m.token_bytes(),
                m.payload()
            ),
            (
                MessageType::Confirmable,
                0x1234,
                &[9u8, 9][..],
                &b"21.5"[..]
            )
        );
    }
}

#[cfg(all(test, feature = "client"))]
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
        let mut pool = BufferPool::new(100, 0);
        let mut template = DatagramBuf::default();
        template
            .encode(
                &Outgoing {
                    message_type: MessageType::Confirmable,
                    code: Code::PUT,
                    message_id: 0,
                    token: &[7],
                    options: &opts,
                    extra: &[],
                    payload: b"",
                },
                &mut pool,
            )
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
        let mut out = DatagramBuf::default();
        reencode(
            template.as_slice(),
            9,
            &[OptionNumber::BLOCK2],
            &extra,
            b"xyz",
            &mut out,
            &mut pool,
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
