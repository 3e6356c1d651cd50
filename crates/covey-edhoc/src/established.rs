//! What a completed EDHOC session yields: an OSCORE security context (RFC 9528 Appendix A.1).

use covey_oscore::{ContextInput, SecurityContext};

/// A completed EDHOC session: the OSCORE keying material and the authenticated peer.
#[derive(Debug, Clone)]
pub struct Established {
    /// OSCORE Master Secret: EDHOC_Exporter(0, h'', 16).
    pub master_secret: [u8; 16],
    /// OSCORE Master Salt: EDHOC_Exporter(1, h'', 8).
    pub master_salt: [u8; 8],
    /// This endpoint's OSCORE Sender ID: the connection identifier the peer chose.
    pub sender_id: Vec<u8>,
    /// This endpoint's OSCORE Recipient ID: the connection identifier this endpoint chose.
    pub recipient_id: Vec<u8>,
    /// The peer's credential kid, hex: the `edhoc:KID` identity.
    pub peer_kid: String,
}

impl Established {
    /// Derives keying material from a completed session (RFC 9528 Appendix A.1).
    pub(crate) fn export(
        mut exporter: impl FnMut(u8, usize) -> [u8; lakers_shared::MAX_BUFFER_LEN],
        sender_id: &[u8],
        recipient_id: &[u8],
        peer_kid: String,
    ) -> Established {
        let secret = exporter(0, 16);
        let salt = exporter(1, 8);
        let mut master_secret = [0; 16];
        master_secret.copy_from_slice(&secret[..16]);
        let mut master_salt = [0; 8];
        master_salt.copy_from_slice(&salt[..8]);
        Established {
            master_secret,
            master_salt,
            sender_id: sender_id.to_vec(),
            recipient_id: recipient_id.to_vec(),
            peer_kid,
        }
    }

    /// The OSCORE security context both sides now share, without an ID Context.
    pub fn security_context(&self) -> Result<SecurityContext, covey_oscore::OscoreError> {
        SecurityContext::derive(&ContextInput {
            master_secret: &self.master_secret,
            master_salt: &self.master_salt,
            sender_id: &self.sender_id,
            recipient_id: &self.recipient_id,
            id_context: None,
        })
    }
}
