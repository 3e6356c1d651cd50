//! The signature algorithms a certificate chain may use, for webpki: ECDSA on P-256 and
//! P-384 with SHA-256 or SHA-384, checked by the RustCrypto crates dimpl uses.

use ecdsa::signature::hazmat::PrehashVerifier;
use ecdsa::{Signature, VerifyingKey};
use p256::NistP256;
use p384::NistP384;
use rustls_pki_types::SignatureVerificationAlgorithm;
use rustls_pki_types::{alg_id, AlgorithmIdentifier, InvalidSignature};
use sha2::{Digest, Sha256, Sha384};

/// A curve and a hash.
#[derive(Debug, Clone, Copy)]
struct Ecdsa {
    curve: Curve,
    hash: Hash,
}

#[derive(Debug, Clone, Copy)]
enum Curve {
    P256,
    P384,
}

#[derive(Debug, Clone, Copy)]
enum Hash {
    Sha256,
    Sha384,
}

/// Every combination webpki knows for these curves (OpenSSL signs with SHA-256 on P-384 by
/// default, so the crossed ones occur).
pub(crate) static ALGORITHMS: &[&dyn SignatureVerificationAlgorithm] = &[
    &Ecdsa {
        curve: Curve::P256,
        hash: Hash::Sha256,
    },
    &Ecdsa {
        curve: Curve::P256,
        hash: Hash::Sha384,
    },
    &Ecdsa {
        curve: Curve::P384,
        hash: Hash::Sha256,
    },
    &Ecdsa {
        curve: Curve::P384,
        hash: Hash::Sha384,
    },
];

impl SignatureVerificationAlgorithm for Ecdsa {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        let digest = match self.hash {
            Hash::Sha256 => Sha256::digest(message).to_vec(),
            Hash::Sha384 => Sha384::digest(message).to_vec(),
        };
        match self.curve {
            Curve::P256 => {
                let key = VerifyingKey::<NistP256>::from_sec1_bytes(public_key)
                    .map_err(|_| InvalidSignature)?;
                let signature =
                    Signature::<NistP256>::from_der(signature).map_err(|_| InvalidSignature)?;
                key.verify_prehash(&digest, &signature)
                    .map_err(|_| InvalidSignature)
            }
            Curve::P384 => {
                let key = VerifyingKey::<NistP384>::from_sec1_bytes(public_key)
                    .map_err(|_| InvalidSignature)?;
                let signature =
                    Signature::<NistP384>::from_der(signature).map_err(|_| InvalidSignature)?;
                key.verify_prehash(&digest, &signature)
                    .map_err(|_| InvalidSignature)
            }
        }
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        match self.curve {
            Curve::P256 => alg_id::ECDSA_P256,
            Curve::P384 => alg_id::ECDSA_P384,
        }
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        match self.hash {
            Hash::Sha256 => alg_id::ECDSA_SHA256,
            Hash::Sha384 => alg_id::ECDSA_SHA384,
        }
    }
}
