//! Property tests for the message codec: round trips, canonical encoding, robustness of the
//! parser on arbitrary and mutated input, registry validation, and encoder buffer handling.

use covey_core::option_registry::OPTION_REGISTRY;
use covey_core::{
    Code, EncodeError, Header, Message, MessageEncoder, MessageType, OptionNumber, ParseError,
    ParseErrorKind,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

/// A message as the test models it, independent of the codec.
#[derive(Debug, Clone)]
struct Model {
    message_type: MessageType,
    code: Code,
    message_id: u16,
    token: Vec<u8>,
    /// Sorted by number (stable, so repeats keep their order).
    options: Vec<(u16, Vec<u8>)>,
    payload: Vec<u8>,
}

fn message_type() -> impl Strategy<Value = MessageType> {
    (0u8..4).prop_map(MessageType::from_bits)
}

/// A request (0.01–0.31) or response (2.xx, 4.xx, 5.xx) code; never Empty or reserved.
fn non_empty_code() -> impl Strategy<Value = Code> {
    prop_oneof![
        (1u8..=31).prop_map(|d| Code::new(0, d)),
        (prop::sample::select(vec![2u8, 4, 5]), 0u8..=31).prop_map(|(c, d)| Code::new(c, d)),
    ]
}

/// Option numbers: mostly registered ones, plus small, large and extreme unknown numbers.
fn option_number() -> impl Strategy<Value = u16> {
    let known: Vec<u16> = OPTION_REGISTRY.iter().map(|d| d.number.0).collect();
    prop_oneof![
        5 => prop::sample::select(known),
        1 => 0u16..=300,
        2 => any::<u16>(),
        1 => 65000u16..=65535,
    ]
}

/// Option values: mostly short, some with 1-byte and 2-byte extended lengths.
fn option_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => vec(any::<u8>(), 0..=12),
        4 => vec(any::<u8>(), 13..=300),
        1 => vec(any::<u8>(), 269..=1100),
    ]
}

/// Short option values, for messages that get mutated.
fn small_option_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => vec(any::<u8>(), 0..=12),
        1 => vec(any::<u8>(), 13..=20),
    ]
}

/// Sorted options; each drawn number occurs 1–3 times so repeats are common.
fn options<V>(value: V, groups: usize) -> impl Strategy<Value = Vec<(u16, Vec<u8>)>>
where
    V: Strategy<Value = Vec<u8>>,
{
    vec((option_number(), vec(value, 1..=3)), 0..=groups).prop_map(|groups| {
        let mut options: Vec<(u16, Vec<u8>)> = groups
            .into_iter()
            .flat_map(|(n, values)| values.into_iter().map(move |v| (n, v)))
            .collect();
        options.sort_by_key(|(n, _)| *n);
        options
    })
}

/// Any valid message: Empty messages carry nothing after the header.
fn message_with<V>(value: V, groups: usize, max_payload: usize) -> impl Strategy<Value = Model>
where
    V: Strategy<Value = Vec<u8>>,
{
    let empty = (message_type(), any::<u16>()).prop_map(|(message_type, message_id)| Model {
        message_type,
        code: Code::EMPTY,
        message_id,
        token: Vec::new(),
        options: Vec::new(),
        payload: Vec::new(),
    });
    let full = (
        message_type(),
        non_empty_code(),
        any::<u16>(),
        vec(any::<u8>(), 0..=8),
        options(value, groups),
        prop_oneof![
            1 => Just(Vec::new()),
            4 => vec(any::<u8>(), 1..=max_payload),
        ],
    )
        .prop_map(
            |(message_type, code, message_id, token, options, payload)| Model {
                message_type,
                code,
                message_id,
                token,
                options,
                payload,
            },
        );
    prop_oneof![1 => empty, 9 => full]
}

fn message() -> impl Strategy<Value = Model> {
    message_with(option_value(), 6, 1500)
}

fn small_message() -> impl Strategy<Value = Model> {
    message_with(small_option_value(), 4, 24)
}

/// Nibble and extension bytes for a delta or length, written straight from RFC 7252 §3.1.
fn reference_extended(value: usize) -> (u8, Vec<u8>) {
    if value < 13 {
        (value as u8, vec![])
    } else if value < 269 {
        (13, vec![(value - 13) as u8])
    } else {
        let v = (value - 269) as u16;
        (14, v.to_be_bytes().to_vec())
    }
}

/// An encoder independent of the crate's; also returns each option's offset.
fn reference_encode(m: &Model) -> (Vec<u8>, Vec<usize>) {
    let mut out = vec![
        0x40 | ((m.message_type as u8) << 4) | m.token.len() as u8,
        m.code.0,
    ];
    out.extend_from_slice(&m.message_id.to_be_bytes());
    out.extend_from_slice(&m.token);
    let mut offsets = Vec::new();
    let mut previous = 0usize;
    for (number, value) in &m.options {
        offsets.push(out.len());
        let (dn, dext) = reference_extended(*number as usize - previous);
        let (ln, lext) = reference_extended(value.len());
        out.push(dn << 4 | ln);
        out.extend(dext);
        out.extend(lext);
        out.extend_from_slice(value);
        previous = *number as usize;
    }
    if !m.payload.is_empty() {
        out.push(0xFF);
        out.extend_from_slice(&m.payload);
    }
    (out, offsets)
}

/// Encodes the model with the crate's encoder, step by step.
fn encode(m: &Model, buf: &mut [u8]) -> Result<usize, EncodeError> {
    let mut enc = MessageEncoder::new(buf, m.message_type, m.code, m.message_id, &m.token)?;
    for (number, value) in &m.options {
        enc.option(OptionNumber(*number), value)?;
    }
    enc.payload(&m.payload)?;
    Ok(enc.finish())
}

fn encode_to_vec(m: &Model) -> Vec<u8> {
    let len = reference_encode(m).0.len();
    let mut buf = vec![0u8; len];
    let n = encode(m, &mut buf).expect("a valid message encodes into a buffer of its size");
    assert_eq!(n, len);
    buf
}

/// What `validate_options` must report for the model: the first registry violation.
fn expected_validation(m: &Model, offsets: &[usize]) -> Result<(), ParseError> {
    let mut previous: Option<u16> = None;
    for ((number, value), &offset) in m.options.iter().zip(offsets) {
        let n = OptionNumber(*number);
        if let Some(def) = OPTION_REGISTRY.iter().find(|d| d.number == n) {
            let len = value.len();
            if len < def.min_len as usize || len > def.max_len as usize {
                return Err(ParseError::new(
                    ParseErrorKind::OptionLengthOutOfBounds { number: n, len },
                    offset,
                ));
            }
            if !def.repeatable && previous == Some(*number) {
                return Err(ParseError::new(
                    ParseErrorKind::OptionRepeated { number: n },
                    offset,
                ));
            }
        }
        previous = Some(*number);
    }
    Ok(())
}

/// True when `part` is empty or lies inside `whole`.
fn borrows_from(whole: &[u8], part: &[u8]) -> bool {
    let w = whole.as_ptr_range();
    let p = part.as_ptr_range();
    part.is_empty() || (w.start <= p.start && p.end <= w.end)
}

/// Parses untrusted bytes and checks everything that must hold whatever they are.
fn check_untrusted(data: &[u8]) -> Result<(), TestCaseError> {
    match Message::parse(data) {
        Err(e) => {
            prop_assert!(e.offset <= data.len(), "{e:?} beyond {} bytes", data.len());
        }
        Ok(m) => {
            prop_assert_eq!(Header::parse(data).ok(), Some(m.header()));
            prop_assert!(borrows_from(data, m.token_bytes()));
            prop_assert!(borrows_from(data, m.options_bytes()));
            prop_assert!(borrows_from(data, m.payload()));
            let mut previous = 0u16;
            for o in m.options() {
                prop_assert!(o.number.0 >= previous);
                prop_assert!(borrows_from(data, o.value));
                previous = o.number.0;
                let _ = (o.value_uint(), o.value_str());
            }
            if let Err(e) = m.validate_options() {
                prop_assert!(e.offset <= data.len());
            }
            let _ = (
                m.block1(),
                m.block2(),
                m.observe(),
                m.content_format(),
                m.accept(),
            );
            let _ = (m.uri_path().count(), m.uri_query().count(), m.token());
            // Canonical: whatever parses re-encodes to exactly the same bytes.
            let mut buf = vec![0u8; data.len()];
            let n = MessageEncoder::encode_message(&m, &mut buf)
                .map_err(|e| TestCaseError::fail(format!("re-encoding failed: {e:?}")))?;
            prop_assert_eq!(&buf[..n], data);
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(Index, u8),
    Set(Index, u8),
    Insert(Index, u8),
    Remove(Index),
    Truncate(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, v)| Mutation::Set(i, v)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, v)| Mutation::Insert(i, v)),
        1 => any::<Index>().prop_map(Mutation::Remove),
        1 => any::<Index>().prop_map(Mutation::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len();
    match mutation {
        Mutation::Insert(i, v) => bytes.insert(i.index(len + 1), *v),
        _ if len == 0 => {}
        Mutation::FlipBit(i, bit) => bytes[i.index(len)] ^= 1 << bit,
        Mutation::Set(i, v) => bytes[i.index(len)] = *v,
        Mutation::Remove(i) => {
            bytes.remove(i.index(len));
        }
        Mutation::Truncate(i) => bytes.truncate(i.index(len)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// encode -> parse gives back the same header, token, options and payload, and the
    /// encoder's bytes equal an independent reference encoding.
    #[test]
    fn encode_then_parse_round_trips(m in message()) {
        let (reference, _) = reference_encode(&m);
        let bytes = encode_to_vec(&m);
        prop_assert_eq!(&bytes, &reference);

        let parsed = Message::parse(&bytes).expect("an encoded message parses");
        let header = parsed.header();
        prop_assert_eq!(header.message_type, m.message_type);
        prop_assert_eq!(header.code, m.code);
        prop_assert_eq!(header.message_id, m.message_id);
        prop_assert_eq!(header.token_length as usize, m.token.len());
        prop_assert_eq!(parsed.token_bytes(), &m.token[..]);
        let token = parsed.token();
        prop_assert_eq!(token.as_bytes(), &m.token[..]);
        let options: Vec<(u16, Vec<u8>)> =
            parsed.options().map(|o| (o.number.0, o.value.to_vec())).collect();
        prop_assert_eq!(&options, &m.options);
        prop_assert_eq!(parsed.payload(), &m.payload[..]);
    }

    /// parse -> encode_message reproduces the input bytes exactly.
    #[test]
    fn encoding_is_canonical(m in message()) {
        let bytes = encode_to_vec(&m);
        let parsed = Message::parse(&bytes).expect("an encoded message parses");
        let mut again = vec![0u8; bytes.len()];
        let n = MessageEncoder::encode_message(&parsed, &mut again).expect("re-encodes");
        prop_assert_eq!(&again[..n], &bytes[..]);
    }

    /// validate_options reports exactly the first registry violation, at its offset.
    #[test]
    fn validate_options_matches_the_registry(m in message()) {
        let (bytes, offsets) = reference_encode(&m);
        let parsed = Message::parse(&bytes).expect("an encoded message parses");
        prop_assert_eq!(parsed.validate_options(), expected_validation(&m, &offsets));
    }

    /// Every buffer shorter than the message gives BufferTooSmall; the exact size succeeds,
    /// and a larger buffer is not written past the message.
    #[test]
    fn encoder_reports_small_buffers(m in message_with(option_value(), 3, 400)) {
        let (reference, _) = reference_encode(&m);
        let len = reference.len();
        let mut buf = vec![0xA5u8; len + 16];
        for size in 0..len {
            prop_assert_eq!(encode(&m, &mut buf[..size]), Err(EncodeError::BufferTooSmall));
        }
        prop_assert_eq!(encode(&m, &mut buf[..len]), Ok(len));
        prop_assert_eq!(&buf[..len], &reference[..]);
        buf.fill(0xA5);
        prop_assert_eq!(encode(&m, &mut buf), Ok(len));
        prop_assert_eq!(&buf[..len], &reference[..]);
        prop_assert!(buf[len..].iter().all(|&b| b == 0xA5));
        // encode_message of the parsed form behaves the same way.
        let parsed = Message::parse(&reference).expect("parses");
        for size in [0, len / 2, len.saturating_sub(1)] {
            if size < len {
                prop_assert_eq!(
                    MessageEncoder::encode_message(&parsed, &mut buf[..size]),
                    Err(EncodeError::BufferTooSmall)
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Arbitrary bytes never panic; errors point inside the input; anything that parses
    /// borrows from the input and re-encodes to the same bytes.
    #[test]
    fn parse_survives_arbitrary_bytes(data in vec(any::<u8>(), 0..=2000)) {
        check_untrusted(&data)?;
    }

    /// The same for bytes that start like a CoAP header (version 1, token length 0–8), so
    /// that the option parser is reached.
    #[test]
    fn parse_survives_header_like_bytes(
        first in (0u8..4, 0u8..=8).prop_map(|(t, tkl)| 0x40 | t << 4 | tkl),
        code in prop_oneof![Just(0u8), 1u8..=0x1F, 0x40u8..=0xBF, any::<u8>()],
        rest in vec(prop_oneof![any::<u8>(), Just(0xFF), 0xD0u8..=0xEF], 0..=64),
    ) {
        let mut data = vec![first, code, 0x12, 0x34];
        data.extend(rest);
        check_untrusted(&data)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Bit flips, overwrites, insertions, removals and truncations of valid encodings.
    #[test]
    fn parse_survives_mutations(
        m in small_message(),
        mutations in vec(mutation(), 1..=4),
    ) {
        let mut bytes = reference_encode(&m).0;
        for mutation in &mutations {
            apply(&mut bytes, mutation);
        }
        check_untrusted(&bytes)?;
    }
}
