//! Verifying a request or a response (RFC 8613 §8.2, §8.4): the OSCORE message in, the plain
//! message out, or the error the RFC names.

use crate::aad::aad;
use crate::inner::{as_datagram, code_is, write_unprotected};
use crate::{aead, nonce, OscoreError, OscoreOption, RequestId, SecurityContext, TAG_LEN};
use covey_core::{Message, OptionNumber};

impl SecurityContext {
    /// Verifies and decrypts `protected` into `out`; returns the length and what the response
    /// must be bound to. The replay window is updated only when all of this succeeds.
    pub fn unprotect_request(
        &mut self,
        protected: &Message<'_>,
        out: &mut [u8],
    ) -> Result<(usize, RequestId), OscoreError> {
        if !code_is(protected.code(), true) {
            return Err(OscoreError::WrongMessageKind);
        }
        let option = oscore_option(protected)?;
        // §6.1: a request carries both kid and Partial IV.
        let (Some(partial_iv), Some(kid)) = (option.partial_iv, option.kid) else {
            return Err(OscoreError::MalformedOption);
        };
        let context_matches = option
            .kid_context
            .is_none_or(|c| self.id_context.as_deref() == Some(c));
        if kid != self.recipient_id.as_slice() || !context_matches {
            return Err(OscoreError::UnknownContext);
        }
        check_payload(protected)?;
        let sequence_number = partial_iv.value();
        if !self.replay_window.is_fresh(sequence_number) {
            return Err(OscoreError::Replay);
        }
        let nonce = nonce(&self.common_iv, kid, &partial_iv)?;
        let aad = aad(kid, &partial_iv);
        let plaintext = aead::open(&self.recipient_key, &nonce, &aad, protected.payload())
            .map_err(|()| OscoreError::DecryptionFailed)?;
        let len = write_inner(protected, &plaintext, true, out)?;
        self.replay_window.accept(sequence_number);
        let request_id = RequestId {
            kid: kid.to_vec(),
            partial_iv,
        };
        Ok((len, request_id))
    }

    /// Verifies and decrypts `protected`, the response to `request`, into `out`; returns the
    /// length. Responses need no replay window: each is bound to its request (§7.4).
    pub fn unprotect_response(
        &self,
        protected: &Message<'_>,
        request: &RequestId,
        out: &mut [u8],
    ) -> Result<usize, OscoreError> {
        if !code_is(protected.code(), false) {
            return Err(OscoreError::WrongMessageKind);
        }
        let option = oscore_option(protected)?;
        check_payload(protected)?;
        // §8.4 step 5: the server's own Partial IV if it sent one, else the request's nonce.
        let nonce = match &option.partial_iv {
            Some(piv) => nonce(&self.common_iv, &self.recipient_id, piv)?,
            None => nonce(&self.common_iv, &request.kid, &request.partial_iv)?,
        };
        let aad = aad(&request.kid, &request.partial_iv);
        let plaintext = aead::open(&self.recipient_key, &nonce, &aad, protected.payload())
            .map_err(|()| OscoreError::DecryptionFailed)?;
        write_inner(protected, &plaintext, false, out)
    }
}

/// The decompressed OSCORE option of `protected`.
fn oscore_option<'a>(protected: &Message<'a>) -> Result<OscoreOption<'a>, OscoreError> {
    let value = protected
        .option(OptionNumber::OSCORE)
        .ok_or(OscoreError::NotProtected)?;
    OscoreOption::parse(value)
}

/// The payload must hold at least the tag and the code byte.
fn check_payload(protected: &Message<'_>) -> Result<(), OscoreError> {
    if protected.payload().len() < TAG_LEN + 1 {
        return Err(OscoreError::MalformedPayload);
    }
    Ok(())
}

/// Parses the plaintext, checks its code is of the expected kind, and writes the message.
fn write_inner(
    protected: &Message<'_>,
    plaintext: &[u8],
    request: bool,
    out: &mut [u8],
) -> Result<usize, OscoreError> {
    let datagram = as_datagram(plaintext)?;
    let inner = Message::parse(&datagram).map_err(|_| OscoreError::MalformedPlaintext)?;
    if !code_is(inner.code(), request) {
        return Err(OscoreError::MalformedPlaintext);
    }
    write_unprotected(protected, &inner, out)
}
