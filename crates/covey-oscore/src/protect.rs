//! Protecting a request or a response (RFC 8613 §8.1, §8.3): the plain message in, the
//! OSCORE message out, with the outer code, Class U options, OSCORE option and ciphertext.

use crate::aad::aad;
use crate::inner::{code_is, write_plaintext};
use crate::{
    aead, nonce, Kid, OptionClass, OscoreError, OscoreOption, RequestId, SecurityContext,
    NONCE_LEN, TAG_LEN,
};
use covey_core::{Code, EncodeError, Message, MessageEncoder, OptionNumber};

/// The longest plaintext AES-CCM with a 13-byte nonce encrypts (its length field has 2 bytes).
const MAX_PLAINTEXT_LEN: usize = 0xFFFF;

/// Which nonce a response is sealed with (RFC 8613 §8.3 step 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponsePartialIv {
    /// No Partial IV: reuse the request's nonce (only for the one response to a request).
    FromRequest,
    /// A fresh Partial IV from this endpoint's sequence number (required for notifications
    /// after the first, §4.1.3.5.2).
    Own,
}

impl SecurityContext {
    /// Protects `request` into `out`; returns the length and what its responses are bound to.
    pub fn protect_request(
        &mut self,
        request: &Message<'_>,
        out: &mut [u8],
    ) -> Result<(usize, RequestId), OscoreError> {
        check_plain(request, true)?;
        let partial_iv = self.next_partial_iv()?;
        let option = OscoreOption {
            partial_iv: Some(partial_iv),
            kid_context: self.id_context.as_deref(),
            kid: Some(&self.sender_id),
        };
        let nonce = nonce(&self.common_iv, &self.sender_id, &partial_iv)?;
        let request_id = RequestId {
            kid: Kid::new(&self.sender_id)?,
            partial_iv,
        };
        let len = self.seal_into(request, &request_id, &option, &nonce, out)?;
        Ok((len, request_id))
    }

    /// Protects `request` again exactly as it was protected under `id` (its own Partial
    /// IV), e.g. to ask a proxy for the next outer block of the response (RFC 8613
    /// §4.1.3.4.2). The nonce is the one used before, so `request` must be the very same
    /// plain request: anything else would reuse a nonce with another plaintext.
    pub fn protect_request_again(
        &self,
        request: &Message<'_>,
        id: &RequestId,
        out: &mut [u8],
    ) -> Result<usize, OscoreError> {
        check_plain(request, true)?;
        if id.kid.as_slice() != self.sender_id.as_slice() {
            return Err(OscoreError::UnknownContext);
        }
        let option = OscoreOption {
            partial_iv: Some(id.partial_iv),
            kid_context: self.id_context.as_deref(),
            kid: Some(&self.sender_id),
        };
        let nonce = nonce(&self.common_iv, &self.sender_id, &id.partial_iv)?;
        self.seal_into(request, id, &option, &nonce, out)
    }

    /// Protects `response` to the request `request` into `out`; returns the length.
    pub fn protect_response(
        &mut self,
        response: &Message<'_>,
        request: &RequestId,
        partial_iv: ResponsePartialIv,
        out: &mut [u8],
    ) -> Result<usize, OscoreError> {
        check_plain(response, false)?;
        let (nonce, own_piv) = match partial_iv {
            ResponsePartialIv::FromRequest => (
                nonce(&self.common_iv, &request.kid, &request.partial_iv)?,
                None,
            ),
            ResponsePartialIv::Own => {
                let piv = self.next_partial_iv()?;
                (nonce(&self.common_iv, &self.sender_id, &piv)?, Some(piv))
            }
        };
        let option = OscoreOption {
            partial_iv: own_piv,
            kid_context: None,
            kid: None,
        };
        self.seal_into(response, request, &option, &nonce, out)
    }

    /// Encrypts the inner part of `plain` with the Sender Key, bound to `request`, and writes
    /// the OSCORE message with `option` into `out`.
    fn seal_into(
        &self,
        plain: &Message<'_>,
        request: &RequestId,
        option: &OscoreOption<'_>,
        nonce: &[u8; NONCE_LEN],
        out: &mut [u8],
    ) -> Result<usize, OscoreError> {
        let is_response = code_is(plain.code(), false);
        let observe = plain.has_option(OptionNumber::OBSERVE);
        // §4.2: POST and 2.04 Changed; with Observe, FETCH (POST with Observe is undefined)
        // and 2.05 Content (notifications must be cacheable).
        let outer_code = match (is_response, observe) {
            (false, false) => Code::POST,
            (false, true) => Code::FETCH,
            (true, false) => Code::CHANGED,
            (true, true) => Code::CONTENT,
        };
        let aad = aad(&request.kid, &request.partial_iv)?;
        let aad = aad.written().ok_or(OscoreError::IdTooLong)?;
        let option = option.encode_inline()?;
        let option = option.written().ok_or(OscoreError::IdContextTooLong)?;
        // The outer message, then the plaintext where its payload goes, sealed in place.
        let outer_len = write_outer(plain, outer_code, option, out)?;
        let too_small = OscoreError::Encode(EncodeError::BufferTooSmall);
        let body = out.get_mut(outer_len + 1..).ok_or(too_small)?;
        let plain_len = write_plaintext(plain, is_response, body)?;
        if plain_len > MAX_PLAINTEXT_LEN {
            return Err(OscoreError::PlaintextTooLong);
        }
        if body.len() < plain_len + TAG_LEN {
            return Err(too_small);
        }
        let sealed = aead::seal_in_place(&self.sender_key, nonce, aad, body, plain_len)
            .map_err(|()| OscoreError::PlaintextTooLong)?;
        out[outer_len] = covey_core::PAYLOAD_MARKER;
        Ok(outer_len + 1 + sealed)
    }
}

/// Refuses a message of the wrong kind, or whose outer part this crate cannot build.
fn check_plain(message: &Message<'_>, request: bool) -> Result<(), OscoreError> {
    if !code_is(message.code(), request) {
        return Err(OscoreError::WrongMessageKind);
    }
    if message.has_option(OptionNumber::OSCORE) {
        return Err(OscoreError::AlreadyProtected);
    }
    if message.has_option(OptionNumber::PROXY_URI) {
        return Err(OscoreError::ProxyUriPresent);
    }
    Ok(())
}

/// Writes the OSCORE message's header and token (those of `plain`), outer code, and its
/// Class U options and outer Observe with the OSCORE option in number order; returns the
/// length. The payload, the ciphertext, is the caller's to write after it.
fn write_outer(
    plain: &Message<'_>,
    outer_code: Code,
    oscore_option: &[u8],
    out: &mut [u8],
) -> Result<usize, OscoreError> {
    let mut encoder = MessageEncoder::new(
        out,
        plain.message_type(),
        outer_code,
        plain.message_id(),
        plain.token_bytes(),
    )?;
    let outer = plain
        .options()
        .filter(|o| !OptionClass::of(o.number).is_inner() || o.number == OptionNumber::OBSERVE);
    // A plain message has no OSCORE option (check_plain), so it goes before the first
    // option numbered above it.
    let mut oscore_written = false;
    for o in outer {
        if !oscore_written && o.number > OptionNumber::OSCORE {
            encoder.option(OptionNumber::OSCORE, oscore_option)?;
            oscore_written = true;
        }
        encoder.option(o.number, o.value)?;
    }
    if !oscore_written {
        encoder.option(OptionNumber::OSCORE, oscore_option)?;
    }
    Ok(encoder.finish())
}
