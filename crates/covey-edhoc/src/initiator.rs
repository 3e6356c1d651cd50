//! The EDHOC Initiator, the CoAP client's side (RFC 9528 §5, Appendix A.2).

use crate::credential::{OwnIdentity, TrustedPeers};
use crate::error::EdhocError;
use crate::established::Established;
use crate::transport;
use lakers::{
    CredentialTransfer, EDHOCMethod, EDHOCSuite, EdhocInitiator, EdhocInitiatorWaitM2,
    EdhocInitiatorWaitM4, EdhocMessageBuffer,
};
use lakers_crypto_rustcrypto::Crypto;
use rand_core::OsRng;

/// Starts EDHOC sessions as Initiator.
#[derive(Debug)]
pub struct Initiator;

/// An Initiator that sent message_1 and waits for message_2.
#[derive(Debug)]
pub struct InitiatorAwaitingMessage2 {
    state: EdhocInitiatorWaitM2<Crypto<OsRng>>,
    own: OwnIdentity,
    c_i: Vec<u8>,
}

impl Initiator {
    /// Builds message_1 (method 3, suite 2) and the CoAP payload carrying it: `true`, message_1.
    pub fn start(own: &OwnIdentity) -> Result<(InitiatorAwaitingMessage2, Vec<u8>), EdhocError> {
        let initiator = EdhocInitiator::new(
            crate::crypto(),
            EDHOCMethod::StatStat,
            EDHOCSuite::CipherSuite2,
        );
        let c_i = lakers::generate_connection_identifier_cbor(&mut crate::crypto());
        let (state, message_1) = initiator
            .prepare_message_1(Some(c_i), &None)
            .map_err(|e| EdhocError::protocol("message_1", e))?;
        let awaiting = InitiatorAwaitingMessage2 {
            state,
            own: own.clone(),
            c_i: c_i.as_slice().to_vec(),
        };
        Ok((awaiting, transport::frame_message_1(message_1.as_slice())))
    }
}

impl InitiatorAwaitingMessage2 {
    /// The connection identifier C_I that message_1 offered; the Responder's C_R must differ.
    pub fn c_i(&self) -> &[u8] {
        &self.c_i
    }

    /// Verifies message_2 against the trusted peers and builds message_3; returns the CoAP
    /// payload carrying it (C_R, message_3) and the session, which message_4 completes.
    pub fn receive_message_2(
        self,
        message_2: &[u8],
        trusted: &TrustedPeers,
    ) -> Result<(Vec<u8>, InitiatorAwaitingMessage4), EdhocError> {
        let message_2 = EdhocMessageBuffer::new_from_slice(message_2)
            .map_err(|_| EdhocError::TooLong("message_2"))?;
        let (mut state, c_r, id_cred_r, _ead_2) = self
            .state
            .parse_message_2(&message_2)
            .map_err(|e| EdhocError::protocol("message_2", e))?;
        let (cred_r, peer_kid) = trusted.find(id_cred_r)?;
        // Our identity is exposed only after the Responder's is validated.
        state
            .set_identity(self.own.private_key, self.own.credential)
            .map_err(|e| EdhocError::protocol("message_2", e))?;
        let state = state
            .verify_message_2(cred_r)
            .map_err(|e| EdhocError::protocol("message_2", e))?;
        let (state, message_3, _prk_out) = state
            .prepare_message_3(CredentialTransfer::ByReference, &None)
            .map_err(|e| EdhocError::protocol("message_3", e))?;
        let payload = transport::frame_message_3(c_r.as_cbor(), message_3.as_slice());
        let awaiting = InitiatorAwaitingMessage4 {
            state,
            message_3: message_3.as_slice().to_vec(),
            c_r: c_r.as_slice().to_vec(),
            c_i: self.c_i,
            peer_kid,
        };
        Ok((payload, awaiting))
    }
}

/// An Initiator that sent message_3: message_4 confirms the key (RFC 9528 §5.5), or the
/// session completes without it (RFC 9668: the first OSCORE response confirms it).
#[derive(Debug)]
pub struct InitiatorAwaitingMessage4 {
    state: EdhocInitiatorWaitM4<Crypto<OsRng>>,
    message_3: Vec<u8>,
    c_r: Vec<u8>,
    c_i: Vec<u8>,
    peer_kid: String,
}

impl InitiatorAwaitingMessage4 {
    /// message_3 as sent, a CBOR byte string: what an EDHOC + OSCORE request (RFC 9668
    /// §3.2.1) puts before its OSCORE ciphertext.
    pub fn message_3(&self) -> &[u8] {
        &self.message_3
    }

    /// The OSCORE Sender ID the session gives this end: the Responder's C_R.
    pub fn sender_id(&self) -> &[u8] {
        &self.c_r
    }

    /// Verifies the Responder's message_4 and returns the OSCORE material.
    pub fn receive_message_4(self, message_4: &[u8]) -> Result<Established, EdhocError> {
        let message_4 = EdhocMessageBuffer::new_from_slice(message_4)
            .map_err(|_| EdhocError::TooLong("message_4"))?;
        let (mut done, _ead_4) = self
            .state
            .process_message_4(&message_4)
            .map_err(|e| EdhocError::protocol("message_4", e))?;
        // RFC 9528 Appendix A.1: the Initiator's Sender ID is C_R, its Recipient ID C_I.
        Ok(Established::export(
            |label, len| done.edhoc_exporter(label, &[], len),
            &self.c_r,
            &self.c_i,
            self.peer_kid,
        ))
    }

    /// Completes the session without message_4 and returns the OSCORE material.
    pub fn complete_without_message_4(self) -> Result<Established, EdhocError> {
        let mut done = self
            .state
            .completed_without_message_4()
            .map_err(|e| EdhocError::protocol("message_3", e))?;
        Ok(Established::export(
            |label, len| done.edhoc_exporter(label, &[], len),
            &self.c_r,
            &self.c_i,
            self.peer_kid,
        ))
    }
}
