//! Verifying a request or a response (RFC 8613 §8.2, §8.4): the OSCORE message in, the plain
//! message out, or the error the RFC names.

use crate::aad::aad;
use crate::inner::{code_is, plaintext_as_datagram, write_unprotected};
use crate::{
    aead, nonce, Kid, NotificationNumber, OscoreError, OscoreOption, RequestId, SecurityContext,
    KEY_LEN, NONCE_LEN, TAG_LEN,
};
use covey_core::{EncodeError, Message, OptionNumber};

impl SecurityContext {
    /// Verifies and decrypts `protected` into `out`; returns the length and what the response
    /// must be bound to. The replay window is updated only when all of this succeeds. `out`
    /// holds the plaintext at its end while the message is written at its start, so it needs
    /// room for about twice the protected message.
    pub fn unprotect_request(
        &mut self,
        protected: &Message<'_>,
        out: &mut [u8],
    ) -> Result<(usize, RequestId), OscoreError> {
        if !self.replay_window.is_known() {
            return Err(OscoreError::FreshnessUnknown);
        }
        let (len, request_id) = self.verify_request(protected, out)?;
        self.replay_window.accept(request_id.partial_iv.value());
        Ok((len, request_id))
    }

    /// [`Self::unprotect_request`] for a context whose replay window is lost: verifies and
    /// decrypts without consulting or moving the window. The request may be a replay, so a
    /// server answers it only with a challenge sealed under its own Partial IV, unless it
    /// carries the Echo value the server chose; then [`Self::recover_replay_window`]
    /// (RFC 8613 Appendix B.1.2).
    pub fn unprotect_request_of_unknown_freshness(
        &self,
        protected: &Message<'_>,
        out: &mut [u8],
    ) -> Result<(usize, RequestId), OscoreError> {
        self.verify_request(protected, out)
    }

    /// Verifies and decrypts a request this context protected itself, e.g. to send it again
    /// with a changed option under a new Partial IV; no window is involved.
    pub fn unprotect_own_request(
        &self,
        protected: &Message<'_>,
        out: &mut [u8],
    ) -> Result<usize, OscoreError> {
        let option = oscore_option(protected)?;
        let (Some(partial_iv), Some(kid)) = (option.partial_iv, option.kid) else {
            return Err(OscoreError::MalformedOption);
        };
        if kid != self.sender_id.as_slice() {
            return Err(OscoreError::UnknownContext);
        }
        check_payload(protected)?;
        let nonce = nonce(&self.common_iv, kid, &partial_iv)?;
        let aad = aad(kid, &partial_iv)?;
        let opening = Opening {
            key: &self.sender_key,
            nonce: &nonce,
            aad: aad.written().ok_or(OscoreError::IdTooLong)?,
        };
        opening.open_into(protected, true, out)
    }

    /// Verifies a request: its kid and kid context name this context, its Partial IV is
    /// fresh in a known window, and its ciphertext opens.
    fn verify_request(
        &self,
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
        let known = self.replay_window.is_known();
        if known && !self.replay_window.is_fresh(partial_iv.value()) {
            return Err(OscoreError::Replay);
        }
        let nonce = nonce(&self.common_iv, kid, &partial_iv)?;
        let aad = aad(kid, &partial_iv)?;
        let opening = Opening {
            key: &self.recipient_key,
            nonce: &nonce,
            aad: aad.written().ok_or(OscoreError::IdTooLong)?,
        };
        let len = opening.open_into(protected, true, out)?;
        let request_id = RequestId {
            kid: Kid::new(kid)?,
            partial_iv,
        };
        Ok((len, request_id))
    }

    /// Verifies and decrypts `protected`, the response to `request`, into `out` (room for
    /// about twice the protected message, as for [`Self::unprotect_request`]); returns the
    /// length. A response needs no replay window: it is bound to its request (§7.4). Not so
    /// notifications, several to one request: they need [`Self::unprotect_notification`].
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
        let aad = aad(&request.kid, &request.partial_iv)?;
        let opening = Opening {
            key: &self.recipient_key,
            nonce: &nonce,
            aad: aad.written().ok_or(OscoreError::IdTooLong)?,
        };
        opening.open_into(protected, false, out)
    }

    /// [`Self::unprotect_response`] for a notification of the observation `request`
    /// registered: refuses it as [`OscoreError::Replay`] unless its Partial IV is above the
    /// observation's `number`, which a verified one then advances (RFC 8613 §7.4.1).
    pub fn unprotect_notification(
        &self,
        protected: &Message<'_>,
        request: &RequestId,
        number: &mut NotificationNumber,
        out: &mut [u8],
    ) -> Result<usize, OscoreError> {
        let partial_iv = oscore_option(protected)?.partial_iv.map(|p| p.value());
        if !number.is_fresh(partial_iv) {
            return Err(OscoreError::Replay);
        }
        let len = self.unprotect_response(protected, request, out)?;
        number.accept(partial_iv);
        Ok(len)
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

/// What verifying one message's ciphertext takes.
struct Opening<'a> {
    key: &'a [u8; KEY_LEN],
    nonce: &'a [u8; NONCE_LEN],
    aad: &'a [u8],
}

impl Opening<'_> {
    /// Decrypts the ciphertext of `protected` at the end of `out`, checks the plaintext's
    /// code is of the expected kind, and writes the unprotected message at the start of
    /// `out`; returns its length. `out` needs room for both.
    fn open_into(
        &self,
        protected: &Message<'_>,
        request: bool,
        out: &mut [u8],
    ) -> Result<usize, OscoreError> {
        let ciphertext = protected.payload();
        // The plaintext becomes a datagram, a 4-byte header where it has a code byte.
        let need = ciphertext.len() + 3;
        let split = out
            .len()
            .checked_sub(need)
            .ok_or(OscoreError::Encode(EncodeError::BufferTooSmall))?;
        let (head, tail) = out.split_at_mut(split);
        tail[3..].copy_from_slice(ciphertext);
        let len = aead::open_in_place(self.key, self.nonce, self.aad, &mut tail[3..])
            .map_err(|()| OscoreError::DecryptionFailed)?;
        let datagram_len = plaintext_as_datagram(tail, len)?;
        let inner =
            Message::parse(&tail[..datagram_len]).map_err(|_| OscoreError::MalformedPlaintext)?;
        if !code_is(inner.code(), request) {
            return Err(OscoreError::MalformedPlaintext);
        }
        write_unprotected(protected, &inner, head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ContextInput, PartialIv};
    use alloc::vec::Vec;
    use covey_core::{Code, MessageEncoder, MessageType};

    fn context(sender_id: &[u8], recipient_id: &[u8]) -> SecurityContext {
        SecurityContext::derive(&ContextInput {
            master_secret: &[7; 16],
            master_salt: &[],
            sender_id,
            recipient_id,
            id_context: None,
        })
        .unwrap()
    }

    /// A request from kid h'' with Partial IV 20 whose ciphertext is `plaintext`, sealed right.
    fn sealed_request(plaintext: &[u8], buf: &mut [u8]) -> usize {
        let client = context(&[], &[1]);
        let piv = PartialIv::from_sequence_number(20).unwrap();
        let nonce = nonce(&client.common_iv, &[], &piv).unwrap();
        let mut ciphertext = plaintext.to_vec();
        ciphertext.resize(plaintext.len() + TAG_LEN, 0);
        let aad = aad(&[], &piv).unwrap();
        aead::seal_in_place(
            &client.sender_key,
            &nonce,
            aad.written().unwrap(),
            &mut ciphertext,
            plaintext.len(),
        )
        .unwrap();
        let mut encoder =
            MessageEncoder::new(buf, MessageType::Confirmable, Code::POST, 1, &[]).unwrap();
        encoder.option(OptionNumber::OSCORE, &[0x09, 0x14]).unwrap();
        encoder.payload(&ciphertext).unwrap();
        encoder.finish()
    }

    #[test]
    fn an_authentic_but_malformed_plaintext_is_refused() {
        let malformed: [&[u8]; 4] = [
            &[0x45],             // a response code inside a request
            &[0x01, 0xFF],       // payload marker without payload
            &[0x01, 0xF1, 0x00], // reserved option delta nibble
            &[0x01, 0xB5, b'a'], // option value cut short
        ];
        for plaintext in malformed {
            let mut buf = [0; 64];
            let len = sealed_request(plaintext, &mut buf);
            let datagram: Vec<u8> = buf[..len].to_vec();
            let mut server = context(&[1], &[]);
            let mut out = [0; 64];
            assert_eq!(
                server
                    .unprotect_request(&Message::parse(&datagram).unwrap(), &mut out)
                    .err(),
                Some(OscoreError::MalformedPlaintext),
                "{plaintext:02x?}"
            );
            // Refused, so the Partial IV is not spent.
            assert!(server.replay_window.is_fresh(20));
        }
        // The same sealing with a well-formed plaintext verifies.
        let mut buf = [0; 64];
        let len = sealed_request(&[0x01, 0xB1, b'a'], &mut buf);
        let mut server = context(&[1], &[]);
        let mut out = [0; 64];
        assert!(server
            .unprotect_request(&Message::parse(&buf[..len]).unwrap(), &mut out)
            .is_ok());
    }
}
