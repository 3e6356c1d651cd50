//! The inner message (RFC 8613 §5.3): what the ciphertext carries, the code, Class E options
//! and payload, and how it joins the outer options again on the receiving side.

use crate::{OptionClass, OscoreError};
use covey_core::{Code, Message, MessageEncoder, OptionNumber};

/// Writes the plaintext of `message` into `out`: code byte, inner options, then 0xFF and
/// payload if any; returns its length. For a response, an inner Observe is empty
/// (§4.1.3.5.2).
pub(crate) fn write_plaintext(
    message: &Message<'_>,
    is_response: bool,
    out: &mut [u8],
) -> Result<usize, OscoreError> {
    let mut encoder = MessageEncoder::without_header(out, message.code())?;
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
    Ok(encoder.finish())
}

/// Turns a decrypted plaintext, at `buf[3..3 + len]`, into a datagram at `buf[..3 + len]`
/// with a dummy header in place of its code byte, so that covey-core parses it; returns the
/// datagram's length.
pub(crate) fn plaintext_as_datagram(buf: &mut [u8], len: usize) -> Result<usize, OscoreError> {
    let code = *buf
        .get(3)
        .filter(|_| len > 0)
        .ok_or(OscoreError::MalformedPlaintext)?;
    buf[..4].copy_from_slice(&[0x40, code, 0, 0]);
    Ok(3 + len)
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
