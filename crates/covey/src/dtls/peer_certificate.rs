//! Naming a peer by the certificate it presented: its subject and SHA-256 fingerprint.

use covey_proto::PeerIdentity;
use sha2::{Digest, Sha256};
use x509_cert::der::Decode;
use x509_cert::Certificate;

/// The subject of a DER certificate, as RFC 4514 text (e.g. `CN=sensor-7`).
pub(crate) fn subject(der: &[u8]) -> Result<String, x509_cert::der::Error> {
    let certificate = Certificate::from_der(der)?;
    Ok(certificate.tbs_certificate().subject().to_string())
}

/// The identity of a peer that presented the DER certificate `der`; a certificate whose
/// subject does not parse is still named by its fingerprint.
pub(crate) fn identity(der: &[u8]) -> PeerIdentity {
    PeerIdentity::Certificate {
        subject: subject(der).unwrap_or_default(),
        fingerprint: Sha256::digest(der).into(),
    }
}
