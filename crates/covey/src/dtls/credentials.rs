//! What a DTLS endpoint proves itself with: pre-shared keys (`identity:key` lines) or an
//! ECDSA certificate and its private key (PEM).

use std::fmt;
use std::path::Path;

/// Why credentials could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// A file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// What the operating system said.
        reason: String,
    },
    /// A pre-shared key line is not `identity:key`.
    #[error("{origin} line {line}: {reason}")]
    BadPsk {
        /// Where the line came from (a file name or the command line).
        origin: String,
        /// The line number (from 1).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// No pre-shared key was given.
    #[error("{0}: no identity:key line")]
    NoPsk(String),
    /// The DTLS engine refused the configuration.
    #[error("{0}")]
    Rejected(String),
    /// A PEM file holds no usable certificate or key.
    #[error("{path}: {reason}")]
    BadPem {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The longest PSK identity and key accepted (RFC 4279 §5.3 allows identities up to 128 bytes
/// in practice and keys up to 64).
pub const MAX_PSK_IDENTITY: usize = 128;
/// The longest pre-shared key accepted, in bytes.
pub const MAX_PSK_KEY: usize = 64;

/// Pre-shared keys by identity; a client uses the first, a server accepts any.
#[derive(Clone, PartialEq, Eq)]
pub struct PskKeys {
    keys: Vec<(String, Vec<u8>)>,
}

impl fmt::Debug for PskKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keys stay out of logs.
        f.debug_list()
            .entries(self.keys.iter().map(|(identity, _)| identity))
            .finish()
    }
}

impl PskKeys {
    /// One identity and its key (libcoap's `-u IDENTITY -k KEY`).
    pub fn single(identity: &str, key: &[u8]) -> Result<PskKeys, CredentialsError> {
        let bad = |reason: &str| CredentialsError::BadPsk {
            origin: "the command line".into(),
            line: 1,
            reason: reason.into(),
        };
        check_psk(identity, key).map_err(bad)?;
        Ok(PskKeys {
            keys: vec![(identity.to_string(), key.to_vec())],
        })
    }

    /// Parses `identity:key` lines (blank lines and `#` comments skipped); the key is the rest
    /// of the line after the first colon, as text (a `0x` prefix reads it as hex).
    pub fn parse(text: &str, origin: &str) -> Result<PskKeys, CredentialsError> {
        let mut keys: Vec<(String, Vec<u8>)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let bad = |reason: String| CredentialsError::BadPsk {
                origin: origin.to_string(),
                line: n + 1,
                reason,
            };
            let (identity, key) = line
                .split_once(':')
                .ok_or_else(|| bad("expected identity:key".into()))?;
            let key = match key.strip_prefix("0x") {
                Some(hex) => decode_hex(hex).ok_or_else(|| bad("bad hex key".into()))?,
                None => key.as_bytes().to_vec(),
            };
            check_psk(identity, &key).map_err(|r| bad(r.into()))?;
            if keys.iter().any(|(i, _)| i == identity) {
                return Err(bad(format!("identity {identity:?} appears twice")));
            }
            keys.push((identity.to_string(), key));
        }
        if keys.is_empty() {
            return Err(CredentialsError::NoPsk(origin.to_string()));
        }
        Ok(PskKeys { keys })
    }

    /// Reads a file of `identity:key` lines (see [`PskKeys::parse`]).
    pub fn from_file(path: &Path) -> Result<PskKeys, CredentialsError> {
        let text = read(path)?;
        PskKeys::parse(&text, &path.display().to_string())
    }

    /// The identity and key a client presents (the first).
    pub fn client(&self) -> (&str, &[u8]) {
        let (identity, key) = &self.keys[0];
        (identity, key)
    }

    /// The key of `identity`, if known.
    pub fn key(&self, identity: &[u8]) -> Option<&[u8]> {
        self.keys
            .iter()
            .find(|(i, _)| i.as_bytes() == identity)
            .map(|(_, k)| k.as_slice())
    }
}

fn check_psk(identity: &str, key: &[u8]) -> Result<(), &'static str> {
    if identity.is_empty() {
        return Err("empty identity");
    }
    if identity.len() > MAX_PSK_IDENTITY {
        return Err("identity longer than 128 bytes");
    }
    if key.is_empty() {
        return Err("empty key");
    }
    if key.len() > MAX_PSK_KEY {
        return Err("key longer than 64 bytes");
    }
    Ok(())
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

fn read(path: &Path) -> Result<String, CredentialsError> {
    std::fs::read_to_string(path).map_err(|e| CredentialsError::Read {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// An ECDSA (P-256 or P-384) certificate and its private key, DER-encoded.
#[derive(Clone)]
pub struct CertifiedKey {
    /// The leaf certificate (DER).
    pub certificate: Vec<u8>,
    /// The private key (PKCS#8 or SEC1 DER).
    pub private_key: Vec<u8>,
}

impl fmt::Debug for CertifiedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertifiedKey")
            .field("certificate", &self.certificate.len())
            .finish_non_exhaustive()
    }
}

impl CertifiedKey {
    /// Reads a PEM certificate (the first `CERTIFICATE` block) and a PEM private key
    /// (`PRIVATE KEY` or `EC PRIVATE KEY`), checking that the key signs for the certificate.
    pub fn from_pem_files(
        certificate: &Path,
        key: &Path,
    ) -> Result<CertifiedKey, CredentialsError> {
        let cert_der = pem_block(certificate, &["CERTIFICATE"])?;
        let key_der = pem_block(key, &["PRIVATE KEY", "EC PRIVATE KEY"])?;
        let certified = CertifiedKey {
            certificate: cert_der,
            private_key: key_der,
        };
        certified
            .check()
            .map_err(|reason| CredentialsError::BadPem {
                path: key.display().to_string(),
                reason,
            })?;
        Ok(certified)
    }

    /// Whether dimpl can sign with the key and parse the certificate, and the certificate's
    /// public key verifies what the key signs: a mismatched pair is refused here rather than
    /// failing every handshake.
    fn check(&self) -> Result<(), String> {
        use x509_cert::der::Decode;
        let certificate = x509_cert::Certificate::from_der(&self.certificate)
            .map_err(|e| format!("the certificate does not parse: {e}"))?;
        let provider = dimpl::crypto::rust_crypto::default_provider();
        let mut key = provider
            .key_provider
            .load_private_key(&self.private_key)
            .map_err(|_| "not an ECDSA P-256 or P-384 private key".to_string())?;
        const PROBE: &[u8] = b"covey: does this key belong to its certificate?";
        let mut signature = dimpl::crypto::Buf::new();
        key.sign(PROBE, dimpl::HashAlgorithm::SHA256, &mut signature)
            .map_err(|e| format!("the key cannot sign: {e}"))?;
        let public_key = certificate
            .tbs_certificate()
            .subject_public_key_info()
            .subject_public_key
            .raw_bytes();
        let matches = super::signature_algorithms::ALGORITHMS
            .iter()
            .any(|a| a.verify_signature(public_key, PROBE, &signature).is_ok());
        match matches {
            true => Ok(()),
            false => Err(
                "this key does not belong to the certificate (--cert and --key are not a pair)"
                    .into(),
            ),
        }
    }
}

/// The DER of the first PEM block in `path` whose label is one of `labels`.
fn pem_block(path: &Path, labels: &[&str]) -> Result<Vec<u8>, CredentialsError> {
    let text = read(path)?;
    let bad = |reason: String| CredentialsError::BadPem {
        path: path.display().to_string(),
        reason,
    };
    for label in labels {
        let begin = format!("-----BEGIN {label}-----");
        let end = format!("-----END {label}-----");
        let Some(start) = text.find(&begin) else {
            continue;
        };
        let Some(stop) = text[start..].find(&end) else {
            return Err(bad(format!("no {end} line")));
        };
        let block = &text[start..start + stop + end.len()];
        let (_, der) =
            pem_rfc7468::decode_vec(block.as_bytes()).map_err(|e| bad(format!("bad PEM: {e}")))?;
        return Ok(der);
    }
    Err(bad(format!(
        "no PEM block labelled {}",
        labels.join(" or ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psk_lines_give_identities_and_keys_in_order() {
        let keys = PskKeys::parse("# comment\nward-3:secret\n\nem:0x00ff\r\n", "f").unwrap();
        assert_eq!(keys.client(), ("ward-3", &b"secret"[..]));
        assert_eq!(keys.key(b"em"), Some(&[0x00, 0xff][..]));
        assert_eq!(keys.key(b"nobody"), None);
        // A colon in the key belongs to the key.
        let keys = PskKeys::parse("a:b:c", "f").unwrap();
        assert_eq!(keys.key(b"a"), Some(&b"b:c"[..]));
    }

    #[test]
    fn bad_psk_lines_name_the_line() {
        let e = PskKeys::parse("ok:1\nnocolon\n", "keys.txt").unwrap_err();
        assert_eq!(e.to_string(), "keys.txt line 2: expected identity:key");
        assert!(PskKeys::parse(":key", "f").is_err());
        assert!(PskKeys::parse("id:", "f").is_err());
        assert!(PskKeys::parse("id:0xabc", "f").is_err());
        assert!(PskKeys::parse("id:1\nid:2", "f").is_err());
        assert!(PskKeys::parse(&format!("id:{}", "k".repeat(65)), "f").is_err());
        assert_eq!(
            PskKeys::parse("# only a comment\n", "f")
                .unwrap_err()
                .to_string(),
            "f: no identity:key line"
        );
        assert!(PskKeys::single("", b"k").is_err());
    }

    #[test]
    fn a_certificate_is_taken_only_with_its_own_key() {
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dtls/testdata");
        let file = |name: &str| testdata.join(name);
        assert!(CertifiedKey::from_pem_files(&file("server.crt"), &file("server.key")).is_ok());
        let e = CertifiedKey::from_pem_files(&file("server.crt"), &file("client.key")).unwrap_err();
        assert!(matches!(e, CredentialsError::BadPem { .. }), "{e:?}");
        assert!(
            e.to_string().contains("does not belong to the certificate"),
            "{e}"
        );
    }

    #[test]
    fn keys_stay_out_of_debug_output() {
        let keys = PskKeys::single("id", b"topsecret").unwrap();
        assert!(!format!("{keys:?}").contains("topsecret"));
    }
}
