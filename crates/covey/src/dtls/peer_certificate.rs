//! Naming a peer by the certificate it presented: its SHA-256 fingerprint, and its subject
//! when a trust anchor vouched for it.

use covey_proto::PeerIdentity;
use sha2::{Digest, Sha256};
use x509_cert::der::Decode;
use x509_cert::Certificate;

/// The subject of a DER certificate, as RFC 4514 text (e.g. `CN=sensor-7`).
pub(crate) fn subject(der: &[u8]) -> Result<String, x509_cert::der::Error> {
    let certificate = Certificate::from_der(der)?;
    Ok(certificate.tbs_certificate().subject().to_string())
}

/// The identity of a peer that presented the DER certificate `der`: its fingerprint, and
/// its subject only if a trust anchor vouched for the certificate (`validated`), since
/// anyone can write any subject into a certificate of their own.
pub(crate) fn identity(der: &[u8], validated: bool) -> PeerIdentity {
    let subject = match validated {
        true => subject(der).unwrap_or_default(),
        false => String::new(),
    };
    PeerIdentity::Certificate {
        subject,
        fingerprint: Sha256::digest(der).into(),
    }
}
