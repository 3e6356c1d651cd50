//! Own and trusted credentials: CCS (CWT Claims Set with a P-256 COSE_Key) identified by kid
//! (RFC 9528 §3.5.2, §3.5.3).

use crate::error::EdhocError;
use lakers_shared::{Credential, IdCred};

/// Lowercase hex of `bytes`, for kids in messages and identities.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses a CCS and checks it carries a kid, as credentials are referenced by kid.
pub fn parse_ccs(ccs: &[u8]) -> Result<Credential, EdhocError> {
    let credential = Credential::parse_ccs(ccs)
        .map_err(|e| EdhocError::Credential(format!("not a CCS with a P-256 COSE_Key: {e:?}")))?;
    if credential.kid.is_none() {
        return Err(EdhocError::Credential("CCS COSE_Key has no kid".into()));
    }
    Ok(credential)
}

/// This endpoint's credential and its private key.
#[derive(Clone)]
pub struct OwnIdentity {
    pub(crate) credential: Credential,
    pub(crate) private_key: [u8; 32],
}

impl std::fmt::Debug for OwnIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnIdentity")
            .field("kid", &self.kid())
            .finish_non_exhaustive()
    }
}

impl OwnIdentity {
    /// Pairs a CCS with its P-256 private key (the 32-byte scalar).
    pub fn new(ccs: &[u8], private_key: &[u8]) -> Result<OwnIdentity, EdhocError> {
        let credential = parse_ccs(ccs)?;
        let private_key = private_key
            .try_into()
            .map_err(|_| EdhocError::Credential("private key must be 32 bytes".into()))?;
        Ok(OwnIdentity {
            credential,
            private_key,
        })
    }

    /// The kid of this endpoint's credential, hex.
    pub fn kid(&self) -> String {
        hex(self
            .credential
            .kid
            .as_ref()
            .map_or(&[][..], |k| k.as_slice()))
    }
}

/// The peers' credentials this endpoint trusts.
#[derive(Debug, Clone, Default)]
pub struct TrustedPeers {
    credentials: Vec<Credential>,
}

impl TrustedPeers {
    /// Trusts each CCS in `ccs_list`.
    pub fn new<'a>(
        ccs_list: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<TrustedPeers, EdhocError> {
        let credentials = ccs_list
            .into_iter()
            .map(parse_ccs)
            .collect::<Result<_, _>>()?;
        Ok(TrustedPeers { credentials })
    }

    /// Finds the trusted credential `id_cred` refers to (RFC 9528 §3.5.3: by kid only).
    pub(crate) fn find(&self, id_cred: IdCred) -> Result<(Credential, String), EdhocError> {
        if !id_cred.reference_only() {
            return Err(EdhocError::CredentialNotByKid);
        }
        for candidate in &self.credentials {
            if let Ok(found) = lakers::credential_check_or_fetch(Some(*candidate), id_cred) {
                let kid = hex(found.kid.as_ref().map_or(&[][..], |k| k.as_slice()));
                return Ok((found, kid));
            }
        }
        Err(EdhocError::UntrustedPeer {
            kid: kid_of(&id_cred),
        })
    }
}

/// The kid an ID_CRED_x refers to, hex; a compact kid is a one-byte CBOR int (RFC 9528 §3.5.3.2).
fn kid_of(id_cred: &IdCred) -> String {
    let full = id_cred.as_full_value();
    // {4: kid} is a1 04 followed by the kid's CBOR byte string.
    match full {
        [0xa1, 0x04, len, rest @ ..] if (0x40..0x58).contains(len) => hex(rest),
        _ => hex(id_cred.as_encoded_value()),
    }
}
