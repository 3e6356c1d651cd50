//! The CAs a server trusts to vouch for its peers' certificates (`--ca`): a peer's
//! certificate subject names it only when the certificate chains to one of them, is within
//! its validity period and may be used for the peer's role.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rustls_pki_types::{CertificateDer, TrustAnchor, UnixTime};
use webpki::{EndEntityCert, KeyUsage as ExtendedKeyUsage};
use x509_cert::der::Decode;
use x509_cert::ext::pkix::{BasicConstraints, KeyUsage};
use x509_cert::Certificate;

use super::credentials::CredentialsError;
use super::signature_algorithms::ALGORITHMS;

/// What the peer's certificate must be good for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A client authenticating to this server.
    ClientAuth,
    /// A server this side connected to.
    ServerAuth,
}

/// CA certificates whose peers' certificates name their holder by subject.
#[derive(Clone)]
pub struct TrustAnchors {
    anchors: Arc<Vec<TrustAnchor<'static>>>,
}

impl fmt::Debug for TrustAnchors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TrustAnchors({} CAs)", self.anchors.len())
    }
}

impl TrustAnchors {
    /// Reads every PEM `CERTIFICATE` block of `path`; each must be a CA certificate.
    pub fn from_pem_file(path: &Path) -> Result<TrustAnchors, CredentialsError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| CredentialsError::Read {
            path: origin.clone(),
            reason: e.to_string(),
        })?;
        let bad = |reason: String| CredentialsError::BadPem {
            path: origin.clone(),
            reason,
        };
        const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
        const END: &str = "-----END CERTIFICATE-----";
        let mut certificates = Vec::new();
        let mut rest = text.as_str();
        while let Some(start) = rest.find(BEGIN) {
            let Some(stop) = rest[start..].find(END) else {
                return Err(bad(format!("no {END} line")));
            };
            let block = &rest[start..start + stop + END.len()];
            let (_, der) = pem_rfc7468::decode_vec(block.as_bytes())
                .map_err(|e| bad(format!("bad PEM: {e}")))?;
            certificates.push(der);
            rest = &rest[start + stop + END.len()..];
        }
        TrustAnchors::from_der(&certificates).map_err(bad)
    }

    /// CA certificates in DER; why not if one is not a usable CA certificate.
    fn from_der(certificates: &[Vec<u8>]) -> Result<TrustAnchors, String> {
        if certificates.is_empty() {
            return Err("no CERTIFICATE block: --ca wants the PEM certificates of CAs".into());
        }
        let mut anchors = Vec::with_capacity(certificates.len());
        for (n, der) in certificates.iter().enumerate() {
            let which = |reason: String| format!("certificate {}: {reason}", n + 1);
            check_ca(der).map_err(which)?;
            let der = CertificateDer::from(der.as_slice());
            let anchor = webpki::anchor_from_trusted_cert(&der)
                .map_err(|e| which(format!("not usable as a trust anchor ({e:?})")))?;
            anchors.push(anchor.to_owned());
        }
        Ok(TrustAnchors {
            anchors: Arc::new(anchors),
        })
    }

    /// How many CA certificates there are.
    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    /// Whether there are none (never, once built).
    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }

    /// Whether the DER certificate `der` chains to one of the CAs at time `at` and may be
    /// used for `purpose`; why not otherwise.
    pub(crate) fn verify(
        &self,
        der: &[u8],
        purpose: Purpose,
        at: SystemTime,
    ) -> Result<(), String> {
        let certificate = CertificateDer::from(der);
        let leaf = EndEntityCert::try_from(&certificate).map_err(describe)?;
        let usage = match purpose {
            Purpose::ClientAuth => ExtendedKeyUsage::client_auth(),
            Purpose::ServerAuth => ExtendedKeyUsage::server_auth(),
        };
        let time = UnixTime::since_unix_epoch(at.duration_since(UNIX_EPOCH).unwrap_or_default());
        // The peer's chain is its leaf: dimpl passes on no intermediates.
        leaf.verify_for_usage(ALGORITHMS, &self.anchors, &[], time, usage, None, None)
            .map_err(describe)?;
        // webpki leaves key usage alone; a DTLS peer signs its handshake with the key.
        match key_usage(der)? {
            Some(usage) if !usage.digital_signature() => {
                Err("its key usage does not allow signatures (digitalSignature)".into())
            }
            _ => Ok(()),
        }
    }
}

/// Whether `der` is a CA certificate that may sign certificates.
fn check_ca(der: &[u8]) -> Result<(), String> {
    let certificate =
        Certificate::from_der(der).map_err(|e| format!("not a DER certificate ({e})"))?;
    let tbs = certificate.tbs_certificate();
    let subject = tbs.subject().to_string();
    let constraints = tbs
        .get_extension::<BasicConstraints>()
        .map_err(|e| format!("{subject}: bad basicConstraints ({e})"))?;
    if !constraints.is_some_and(|(_, c)| c.ca) {
        return Err(format!(
            "{subject} is not a CA certificate (no basicConstraints cA); to trust one peer's \
             certificate, name its sha256: fingerprint in the policy instead"
        ));
    }
    if key_usage(der)?.is_some_and(|u| !u.key_cert_sign()) {
        return Err(format!(
            "{subject}: its key usage does not allow signing certificates (keyCertSign)"
        ));
    }
    Ok(())
}

/// The key usage extension of `der`, if it has one.
fn key_usage(der: &[u8]) -> Result<Option<KeyUsage>, String> {
    let certificate =
        Certificate::from_der(der).map_err(|e| format!("not a DER certificate ({e})"))?;
    certificate
        .tbs_certificate()
        .get_extension::<KeyUsage>()
        .map(|found| found.map(|(_, usage)| usage))
        .map_err(|e| format!("bad keyUsage ({e})"))
}

/// webpki's verdict in words.
fn describe(error: webpki::Error) -> String {
    use webpki::Error as E;
    match error {
        E::UnknownIssuer => "not issued by a --ca certificate".into(),
        E::CertExpired { .. } => "expired".into(),
        E::CertNotValidYet { .. } => "not valid yet".into(),
        E::InvalidSignatureForPublicKey => "its signature does not verify".into(),
        E::CaUsedAsEndEntity => "a CA certificate presented as a peer's own".into(),
        E::RequiredEkuNotFoundContext(_) => {
            "its extended key usage does not allow this role (clientAuth or serverAuth)".into()
        }
        E::UnsupportedSignatureAlgorithmContext(_)
        | E::UnsupportedSignatureAlgorithmForPublicKeyContext(_) => {
            "signed with an algorithm other than ECDSA P-256 or P-384".into()
        }
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    fn testdata(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/dtls/testdata")
            .join(name)
    }

    fn der(name: &str) -> Vec<u8> {
        let text = std::fs::read(testdata(name)).unwrap();
        pem_rfc7468::decode_vec(&text).unwrap().1
    }

    #[test]
    fn a_chain_validates_only_within_its_period_and_purpose() {
        let anchors = TrustAnchors::from_pem_file(&testdata("ca.crt")).unwrap();
        let now = SystemTime::now();
        let operator = der("operator.crt");
        assert_eq!(anchors.verify(&operator, Purpose::ClientAuth, now), Ok(()));
        let year = Duration::from_secs(365 * 24 * 3600);
        let verdict = |at| anchors.verify(&operator, Purpose::ClientAuth, at);
        assert_eq!(verdict(now + 101 * year), Err("expired".into()));
        assert_eq!(verdict(now - year), Err("not valid yet".into()));
        let e = anchors
            .verify(&operator, Purpose::ServerAuth, now)
            .unwrap_err();
        assert!(e.contains("extended key usage"), "{e}");
        // openssl req -x509 makes a CA certificate, which is refused before its issuer is.
        let e = anchors
            .verify(&der("forged.crt"), Purpose::ClientAuth, now)
            .unwrap_err();
        assert!(
            e.contains("CA certificate") || e.contains("not issued by"),
            "{e}"
        );
        let other_ca = TrustAnchors::from_pem_file(&testdata("server.crt")).unwrap();
        assert_eq!(
            other_ca.verify(&operator, Purpose::ClientAuth, now),
            Err("not issued by a --ca certificate".into())
        );
        let e = anchors
            .verify(&der("no-signing.crt"), Purpose::ClientAuth, now)
            .unwrap_err();
        assert!(e.contains("digitalSignature"), "{e}");
        assert!(anchors
            .verify(b"garbage", Purpose::ClientAuth, now)
            .is_err());
    }

    #[test]
    fn only_ca_certificates_are_trust_anchors() {
        let e = TrustAnchors::from_pem_file(&testdata("operator.crt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a CA certificate"), "{e}");
        assert!(e.contains("operator.crt"), "{e}");
        let e = TrustAnchors::from_pem_file(&testdata("operator.key"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no CERTIFICATE block"), "{e}");
        assert!(TrustAnchors::from_pem_file(&testdata("absent.crt")).is_err());
        // Several CAs in one file.
        let both = std::env::temp_dir().join(format!("cvd-cas-{}.pem", std::process::id()));
        let text = [testdata("ca.crt"), testdata("server.crt")]
            .map(|p| std::fs::read_to_string(p).unwrap())
            .concat();
        std::fs::write(&both, text).unwrap();
        assert_eq!(TrustAnchors::from_pem_file(&both).unwrap().len(), 2);
        std::fs::remove_file(&both).unwrap();
    }
}
