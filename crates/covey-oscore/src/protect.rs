//! Protecting a request or a response (RFC 8613 §8.1, §8.3): the plain message in, the
//! OSCORE message out, with the outer code, Class U options, OSCORE option and ciphertext.

use crate::aad::aad;
use crate::inner::{code_is, plaintext};
use crate::{
    aead, nonce, OptionClass, OscoreError, OscoreOption, RequestId, SecurityContext, NONCE_LEN,
};
use alloc::vec::Vec;
use covey_core::{Code, Message, MessageEncoder, OptionNumber};

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
            kid: self.sender_id.clone(),
            partial_iv,
        };
        let len = self.seal_into(request, &request_id, &option, &nonce, out)?;
        Ok((len, request_id))
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
        let aad = aad(&request.kid, &request.partial_iv);
        let mut ciphertext = plaintext(plain, is_response)?;
        aead::seal(&self.sender_key, nonce, &aad, &mut ciphertext)
            .map_err(|()| OscoreError::PlaintextTooLong)?;
        write_protected(plain, outer_code, &option.encode()?, &ciphertext, out)
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

/// Writes the OSCORE message: header and token of `plain`, outer code, Class U options and
/// outer Observe with the OSCORE option in number order, and the ciphertext as payload.
fn write_protected(
    plain: &Message<'_>,
    outer_code: Code,
    oscore_option: &[u8],
    ciphertext: &[u8],
    out: &mut [u8],
) -> Result<usize, OscoreError> {
    let mut outer: Vec<(OptionNumber, &[u8])> = plain
        .options()
        .filter(|o| !OptionClass::of(o.number).is_inner() || o.number == OptionNumber::OBSERVE)
        .map(|o| (o.number, o.value))
        .collect();
    outer.push((OptionNumber::OSCORE, oscore_option));
    // Stable, so repeated options keep their order.
    outer.sort_by_key(|(number, _)| *number);
    let mut encoder = MessageEncoder::new(
        out,
        plain.message_type(),
        outer_code,
        plain.message_id(),
        plain.token_bytes(),
    )?;
    for (number, value) in outer {
        encoder.option(number, value)?;
    }
    encoder.payload(ciphertext)?;
    Ok(encoder.finish())
}
