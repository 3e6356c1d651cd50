//! The EDHOC Responder, the CoAP server's side (RFC 9528 §5, Appendix A.2).

use crate::credential::{OwnIdentity, TrustedPeers};
use crate::error::EdhocError;
use crate::established::Established;
use lakers::{
    ConnId, CredentialTransfer, EDHOCMethod, EdhocMessageBuffer, EdhocResponder,
    EdhocResponderWaitM3,
};
use lakers_crypto_rustcrypto::Crypto;
use rand_core::{CryptoRng, OsRng, RngCore};

/// Answers EDHOC sessions as Responder.
#[derive(Debug)]
pub struct Responder;

/// A Responder that sent message_2 and waits for message_3 under connection identifier C_R;
/// `R` draws its ephemeral key (the OS's randomness but in test-vector checks).
#[derive(Debug)]
pub struct ResponderAwaitingMessage3<R: RngCore + CryptoRng = OsRng> {
    state: EdhocResponderWaitM3<Crypto<R>>,
    c_i: Vec<u8>,
    c_r: Vec<u8>,
}

impl Responder {
    /// Processes message_1 and builds message_2, choosing a C_R that differs from C_I (RFC
    /// 9528 Appendix A.1: the OSCORE IDs must differ) by `c_r_rank`: `Some(0)` for a free
    /// one, `Some(n)` for one that may be taken over (the lowest first), `None` for one that
    /// may not.
    pub fn respond(
        own: &OwnIdentity,
        message_1: &[u8],
        c_r_rank: impl Fn(&[u8]) -> Option<u64>,
    ) -> Result<(ResponderAwaitingMessage3, Vec<u8>), EdhocError> {
        Responder::respond_with_rng(OsRng, own, message_1, c_r_rank)
    }

    /// [`respond`](Self::respond) with the ephemeral key drawn from `rng`: RFC 9529's traces
    /// fix it, so tests can check every byte.
    pub fn respond_with_rng<R: RngCore + CryptoRng>(
        rng: R,
        own: &OwnIdentity,
        message_1: &[u8],
        c_r_rank: impl Fn(&[u8]) -> Option<u64>,
    ) -> Result<(ResponderAwaitingMessage3<R>, Vec<u8>), EdhocError> {
        let message_1 = EdhocMessageBuffer::new_from_slice(message_1)
            .map_err(|_| EdhocError::TooLong("message_1"))?;
        let responder = EdhocResponder::new(
            Crypto::new(rng),
            EDHOCMethod::StatStat,
            own.private_key,
            own.credential,
        );
        let (state, c_i, _ead_1) = responder
            .process_message_1(&message_1)
            .map_err(|e| EdhocError::protocol("message_1", e))?;
        let c_r = choose_c_r(c_i.as_slice(), c_r_rank)?;
        let (state, message_2) = state
            .prepare_message_2(CredentialTransfer::ByReference, Some(c_r), &None)
            .map_err(|e| EdhocError::protocol("message_2", e))?;
        let awaiting = ResponderAwaitingMessage3 {
            state,
            c_i: c_i.as_slice().to_vec(),
            c_r: c_r.as_slice().to_vec(),
        };
        Ok((awaiting, message_2.as_slice().to_vec()))
    }
}

/// Picks one of the 48 one-byte connection identifiers (-24..=23) other than C_I: the first
/// free one (rank 0) from a random start, else the one of lowest rank.
fn choose_c_r(c_i: &[u8], c_r_rank: impl Fn(&[u8]) -> Option<u64>) -> Result<ConnId, EdhocError> {
    let start = lakers::generate_connection_identifier(&mut crate::crypto());
    let mut best: Option<(u64, u8)> = None;
    // Walk all 48 values from a random start so the search is bounded.
    for step in 0..48i16 {
        let value = (i16::from(start) + 24 + step).rem_euclid(48) - 24;
        let raw = if value >= 0 {
            value as u8
        } else {
            0x1f + value.unsigned_abs() as u8
        };
        if [raw] == c_i {
            continue;
        }
        match c_r_rank(&[raw]) {
            Some(0) => {
                best = Some((0, raw));
                break;
            }
            Some(rank) if best.is_none_or(|(lowest, _)| rank < lowest) => best = Some((rank, raw)),
            _ => {}
        }
    }
    best.and_then(|(_, raw)| ConnId::from_slice(&[raw]))
        .ok_or(EdhocError::NoFreeConnectionId)
}

impl<R: RngCore + CryptoRng> ResponderAwaitingMessage3<R> {
    /// The connection identifier C_R that message_3 will be prefixed with.
    pub fn c_r(&self) -> &[u8] {
        &self.c_r
    }

    /// Verifies message_3 against the trusted peers and returns the OSCORE material with
    /// message_4, which confirms the key to the Initiator (RFC 9528 §5.5; aiocoap waits for
    /// it when it sends message_3 on its own).
    pub fn receive_message_3(
        self,
        message_3: &[u8],
        trusted: &TrustedPeers,
    ) -> Result<(Established, Vec<u8>), EdhocError> {
        let message_3 = EdhocMessageBuffer::new_from_slice(message_3)
            .map_err(|_| EdhocError::TooLong("message_3"))?;
        let (state, id_cred_i, _ead_3) = self
            .state
            .parse_message_3(&message_3)
            .map_err(|e| EdhocError::protocol("message_3", e))?;
        let (cred_i, peer_kid) = trusted.find(id_cred_i)?;
        let (state, _prk_out) = state
            .verify_message_3(cred_i)
            .map_err(|e| EdhocError::protocol("message_3", e))?;
        let (mut done, message_4) = state
            .prepare_message_4(&None)
            .map_err(|e| EdhocError::protocol("message_4", e))?;
        // RFC 9528 Appendix A.1: the Responder's Sender ID is C_I, its Recipient ID C_R.
        let established = Established::export(
            |label, len| done.edhoc_exporter(label, &[], len),
            &self.c_i,
            &self.c_r,
            peer_kid,
        );
        Ok((established, message_4.as_slice().to_vec()))
    }
}
