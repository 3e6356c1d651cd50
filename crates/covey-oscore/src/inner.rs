//! The inner message (RFC 8613 §5.3): what the ciphertext carries, the code, Class E options
//! and payload, and how it joins the outer options again on the receiving side.

use crate::{OptionClass, OscoreError, TAG_LEN};
use alloc::vec;
use alloc::vec::Vec;
use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};

/// The plaintext of `message`: code byte, inner options, then 0xFF and payload if any. For a
/// response, an inner Observe is empty (§4.1.3.5.2). Room for the tag is reserved.
pub(crate) fn plaintext(message: &Message<'_>, is_response: bool) -> Result<Vec<u8>, OscoreError> {
    // Dropping outer options can lengthen an inner option's delta by at most two bytes.
    let option_count = message.options().count();
    let capacity =
        4 + message.options_bytes().len() + 2 * option_count + 1 + message.payload().len();
    let mut scratch = vec![0; capacity];
    let mut encoder = MessageEncoder::new(
        &mut scratch,
        MessageType::Confirmable,
        message.code(),
        0,
        &[],
    )?;
    for option in message.options() {
        if !OptionClass::of(option.number).is_inner() {
            continue;
        }
        let value = if is_response && option.number == OptionNumber::OBSERVE {
            &[][..]
        } else {
            option.value
        };
        encoder.option(option.number, value)?;
    }
    encoder.payload(message.payload())?;
    let len = encoder.finish();
    let mut plaintext = Vec::with_capacity(len - 3 + TAG_LEN);
    plaintext.push(message.code().0);
    // Skip the scratch header (type, code, message ID): the code byte is already in.
    plaintext.extend_from_slice(&scratch[4..len]);
    Ok(plaintext)
}

/// A decrypted plaintext as a datagram with a dummy header, so that covey-core parses it.
pub(crate) fn as_datagram(plaintext: &[u8]) -> Result<Vec<u8>, OscoreError> {
    let (&code, rest) = plaintext
        .split_first()
        .ok_or(OscoreError::MalformedPlaintext)?;
    let mut datagram = Vec::with_capacity(4 + rest.len());
    datagram.extend_from_slice(&[0x40, code, 0, 0]);
    datagram.extend_from_slice(rest);
    Ok(datagram)
}

/// Writes the unprotected message: the outer header and token, the outer Class U options
/// (bar OSCORE) merged in number order with the inner options, and the inner payload.
pub(crate) fn write_unprotected(
    protected: &Message<'_>,
    inner: &Message<'_>,
    out: &mut [u8],
) -> Result<usize, OscoreError> {
    let mut encoder = MessageEncoder::new(
        out,
        protected.message_type(),
        inner.code(),
        protected.message_id(),
        protected.token_bytes(),
    )?;
    // Outer copies of Class E options are for proxies only (§8.2 step 1): dropped.
    let mut outer = protected
        .options()
        .filter(|o| o.number != OptionNumber::OSCORE && !OptionClass::of(o.number).is_inner())
        .peekable();
    // An inner Class U option was never put there by a conforming sender: ignored.
    let mut inner_options = inner
        .options()
        .filter(|o| OptionClass::of(o.number).is_inner())
        .peekable();
    loop {
        let from_outer = match (outer.peek(), inner_options.peek()) {
            (Some(o), Some(i)) => o.number <= i.number,
            (outer_next, _) => outer_next.is_some(),
        };
        let next = if from_outer {
            outer.next()
        } else {
            inner_options.next()
        };
        let Some(option) = next else { break };
        encoder.option(option.number, option.value)?;
    }
    encoder.payload(inner.payload())?;
    Ok(encoder.finish())
}

/// True when `code` is of the kind expected: a request method, or a response code.
pub(crate) fn code_is(code: Code, request: bool) -> bool {
    use covey_core::code::CodeKind;
    matches!(
        (code.kind(), request),
        (CodeKind::Request, true) | (CodeKind::Response, false)
    )
}
