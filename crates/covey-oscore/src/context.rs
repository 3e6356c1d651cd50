//! The security context (RFC 8613 §3): keys and Common IV derived once from the shared input,
//! the sender sequence number and the recipient's replay window.

use crate::derive::{expand, info, Derived};
use crate::{Kid, OscoreError, PartialIv, ReplayWindow, KEY_LEN, MAX_SEQUENCE_NUMBER, NONCE_LEN};
use alloc::vec::Vec;

/// Longest Sender or Recipient ID: the nonce length minus 6 (RFC 8613 §3.3).
pub const MAX_ID_LEN: usize = NONCE_LEN - 6;

/// What both endpoints share to derive a context (RFC 8613 §3.2); algorithms are the
/// defaults, AES-CCM-16-64-128 and HKDF-SHA-256.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextInput<'a> {
    /// The Master Secret.
    pub master_secret: &'a [u8],
    /// The Master Salt; empty is the default.
    pub master_salt: &'a [u8],
    /// This endpoint's Sender ID (0–7 bytes).
    pub sender_id: &'a [u8],
    /// The peer's Sender ID, this endpoint's Recipient ID (0–7 bytes).
    pub recipient_id: &'a [u8],
    /// The ID Context, if any; a client sends it as 'kid context' in its requests.
    pub id_context: Option<&'a [u8]>,
}

/// What a response is bound to: the kid and Partial IV of its request (RFC 8613 §5.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestId {
    /// The request's kid: the client's Sender ID.
    pub kid: Kid,
    /// The request's Partial IV.
    pub partial_iv: PartialIv,
}

/// One OSCORE security context: a Common Context, a Sender Context and a Recipient Context.
#[derive(Clone)]
pub struct SecurityContext {
    pub(crate) sender_id: Vec<u8>,
    pub(crate) recipient_id: Vec<u8>,
    pub(crate) id_context: Option<Vec<u8>>,
    pub(crate) sender_key: [u8; KEY_LEN],
    pub(crate) recipient_key: [u8; KEY_LEN],
    pub(crate) common_iv: [u8; NONCE_LEN],
    sender_sequence_number: u64,
    /// The first sequence number this context may not use: the end of what the host
    /// reserved in stored state (Appendix B.1.1), or past the largest Partial IV.
    sender_sequence_limit: u64,
    pub(crate) replay_window: ReplayWindow,
}

impl SecurityContext {
    /// Derives the Sender Key, Recipient Key and Common IV (RFC 8613 §3.2.1).
    pub fn derive(input: &ContextInput<'_>) -> Result<SecurityContext, OscoreError> {
        if input.sender_id.len() > MAX_ID_LEN || input.recipient_id.len() > MAX_ID_LEN {
            return Err(OscoreError::IdTooLong);
        }
        if input
            .id_context
            .is_some_and(|c| c.len() > usize::from(u8::MAX))
        {
            return Err(OscoreError::IdContextTooLong);
        }
        let derive = |id: &[u8], what: Derived, out: &mut [u8]| {
            let info = info(id, input.id_context, what, out.len());
            expand(input.master_secret, input.master_salt, &info, out);
        };
        let mut sender_key = [0; KEY_LEN];
        let mut recipient_key = [0; KEY_LEN];
        let mut common_iv = [0; NONCE_LEN];
        derive(input.sender_id, Derived::Key, &mut sender_key);
        derive(input.recipient_id, Derived::Key, &mut recipient_key);
        derive(&[], Derived::Iv, &mut common_iv);
        Ok(SecurityContext {
            sender_id: input.sender_id.to_vec(),
            recipient_id: input.recipient_id.to_vec(),
            id_context: input.id_context.map(<[u8]>::to_vec),
            sender_key,
            recipient_key,
            common_iv,
            sender_sequence_number: 0,
            sender_sequence_limit: MAX_SEQUENCE_NUMBER + 1,
            replay_window: ReplayWindow::new(),
        })
    }

    /// This endpoint's Sender ID.
    pub fn sender_id(&self) -> &[u8] {
        &self.sender_id
    }

    /// This endpoint's Recipient ID (the kid the peer sends).
    pub fn recipient_id(&self) -> &[u8] {
        &self.recipient_id
    }

    /// The ID Context, if any.
    pub fn id_context(&self) -> Option<&[u8]> {
        self.id_context.as_deref()
    }

    /// The derived Sender Key.
    pub fn sender_key(&self) -> &[u8; KEY_LEN] {
        &self.sender_key
    }

    /// The derived Recipient Key.
    pub fn recipient_key(&self) -> &[u8; KEY_LEN] {
        &self.recipient_key
    }

    /// The derived Common IV.
    pub fn common_iv(&self) -> &[u8; NONCE_LEN] {
        &self.common_iv
    }

    /// The sequence number the next Partial IV this endpoint sends will carry.
    pub fn sender_sequence_number(&self) -> u64 {
        self.sender_sequence_number
    }

    /// Resumes sending at `value`, e.g. from stored state; it must never go back to a
    /// number already used with these keys (RFC 8613 §7.5).
    pub fn set_sender_sequence_number(&mut self, value: u64) -> Result<(), OscoreError> {
        if value > MAX_SEQUENCE_NUMBER + 1 {
            return Err(OscoreError::SequenceNumberExhausted);
        }
        self.sender_sequence_number = value;
        Ok(())
    }

    /// Stops sending at `limit` (exclusive): the end of the sequence numbers the host has
    /// reserved in stored state, so a crash can never lead to a number used twice
    /// (Appendix B.1.1). Protecting past it fails with
    /// [`OscoreError::SequenceNumberExhausted`].
    pub fn set_sender_sequence_limit(&mut self, limit: u64) {
        self.sender_sequence_limit = limit.min(MAX_SEQUENCE_NUMBER + 1);
    }

    /// The sender sequence number this context stops before (see
    /// [`Self::set_sender_sequence_limit`]).
    pub fn sender_sequence_limit(&self) -> u64 {
        self.sender_sequence_limit
    }

    /// The recipient's replay window.
    pub fn replay_window(&self) -> &ReplayWindow {
        &self.replay_window
    }

    /// Marks the replay window lost, as a context loaded after a restart has it when the
    /// window was not kept: requests are then refused as
    /// [`OscoreError::FreshnessUnknown`] until one proves its freshness (Appendix B.1.2).
    pub fn forget_replay_window(&mut self) {
        self.replay_window = ReplayWindow::lost();
    }

    /// Starts the replay window again at `partial_iv`, a request whose freshness the server
    /// proved with Echo (Appendix B.1.2).
    pub fn recover_replay_window(&mut self, partial_iv: &PartialIv) {
        self.replay_window.recover(partial_iv.value());
    }

    /// Takes the next Partial IV; fails, leaving the number unchanged, once 2^40 − 1 is used.
    pub(crate) fn next_partial_iv(&mut self) -> Result<PartialIv, OscoreError> {
        if self.sender_sequence_number >= self.sender_sequence_limit {
            return Err(OscoreError::SequenceNumberExhausted);
        }
        let piv = PartialIv::from_sequence_number(self.sender_sequence_number)?;
        self.sender_sequence_number += 1;
        Ok(piv)
    }
}

impl core::fmt::Debug for SecurityContext {
    /// Shows the identifiers and counters, never the keys.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SecurityContext")
            .field("sender_id", &self.sender_id)
            .field("recipient_id", &self.recipient_id)
            .field("id_context", &self.id_context)
            .field("sender_sequence_number", &self.sender_sequence_number)
            .field("replay_window", &self.replay_window)
            .finish_non_exhaustive()
    }
}

/// The limit to store as reserved next for a context that sends `next` and stops before
/// `limit` (RFC 8613 Appendix B.1.1), reserving `block` numbers at a time once half a block
/// or less is left, so that sending never waits for the store: `None` while more than that
/// is left, or once the reservation reaches the end of the sequence numbers.
pub fn next_reservation(next: u64, limit: u64, block: u64) -> Option<u64> {
    let end = MAX_SEQUENCE_NUMBER + 1;
    (limit < end && limit.saturating_sub(next) <= block / 2).then(|| (limit + block).min(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_longer_than_the_nonce_allows_are_refused() {
        let input = ContextInput {
            master_secret: &[1; 16],
            master_salt: &[],
            sender_id: &[0; 8],
            recipient_id: &[],
            id_context: None,
        };
        assert_eq!(
            SecurityContext::derive(&input).err(),
            Some(OscoreError::IdTooLong)
        );
        let long_context = [0; 256];
        let input = ContextInput {
            sender_id: &[],
            id_context: Some(&long_context),
            ..input
        };
        assert_eq!(
            SecurityContext::derive(&input).err(),
            Some(OscoreError::IdContextTooLong)
        );
    }

    /// A client's context with a throwaway secret.
    fn client_context() -> SecurityContext {
        SecurityContext::derive(&ContextInput {
            master_secret: &[1; 16],
            master_salt: &[],
            sender_id: &[],
            recipient_id: &[1],
            id_context: None,
        })
        .unwrap()
    }

    #[test]
    fn a_reserved_limit_stops_sending_at_its_end() {
        let mut context = client_context();
        context.set_sender_sequence_number(10).unwrap();
        context.set_sender_sequence_limit(12);
        assert_eq!(context.next_partial_iv().unwrap().value(), 10);
        assert_eq!(context.next_partial_iv().unwrap().value(), 11);
        assert_eq!(
            context.next_partial_iv().err(),
            Some(OscoreError::SequenceNumberExhausted)
        );
        assert_eq!(context.sender_sequence_number(), 12);
    }

    #[test]
    fn the_sequence_number_is_exhausted_after_2_to_the_40_minus_1() {
        let mut context = client_context();
        context
            .set_sender_sequence_number(MAX_SEQUENCE_NUMBER)
            .unwrap();
        assert_eq!(
            context.next_partial_iv().unwrap().value(),
            MAX_SEQUENCE_NUMBER
        );
        assert_eq!(
            context.next_partial_iv(),
            Err(OscoreError::SequenceNumberExhausted)
        );
        assert_eq!(
            context.next_partial_iv(),
            Err(OscoreError::SequenceNumberExhausted)
        );
        assert!(context
            .set_sender_sequence_number(MAX_SEQUENCE_NUMBER + 2)
            .is_err());
    }

    #[test]
    fn a_reservation_is_due_at_half_a_block_and_stops_at_the_end() {
        assert_eq!(next_reservation(0, 0, 16), Some(16));
        assert_eq!(next_reservation(7, 16, 16), None);
        assert_eq!(next_reservation(8, 16, 16), Some(32));
        let end = MAX_SEQUENCE_NUMBER + 1;
        assert_eq!(next_reservation(end - 4, end - 4, 16), Some(end));
        assert_eq!(next_reservation(end - 1, end, 16), None);
    }
}
