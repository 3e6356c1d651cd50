//! Who a peer proved to be over a secured session, for authorization by Apps.

use alloc::string::String;
use core::fmt;

/// The identity a peer authenticated with over DTLS or OSCORE; requests that came in the
/// clear have none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PeerIdentity {
    /// A pre-shared key, named by the identity the client sent.
    Psk(String),
    /// A certificate or raw public key.
    Certificate {
        /// The certificate's subject (e.g. `CN=sensor-7`), only when a trust anchor validated
        /// the certificate; empty otherwise, and for a raw public key.
        subject: String,
        /// SHA-256 of the DER-encoded certificate (or SubjectPublicKeyInfo for a raw key).
        fingerprint: [u8; 32],
    },
    /// An OSCORE security context, named by the kid the request came under (the client's
    /// Sender ID); it speaks for the one request, whatever address it came from.
    #[cfg(feature = "oscore")]
    Oscore(alloc::vec::Vec<u8>),
    /// An OSCORE context EDHOC (RFC 9528) set up, named by the kid (hex) of the credential
    /// the peer authenticated with.
    #[cfg(feature = "edhoc")]
    Edhoc(String),
}

impl fmt::Display for PeerIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerIdentity::Psk(identity) => write!(f, "psk:{identity}"),
            PeerIdentity::Certificate {
                subject,
                fingerprint,
            } => {
                f.write_str("cert:")?;
                if !subject.is_empty() {
                    write!(f, "{subject} ")?;
                }
                f.write_str("sha256:")?;
                fingerprint.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
            #[cfg(feature = "edhoc")]
            PeerIdentity::Edhoc(kid) => write!(f, "edhoc:{kid}"),
            #[cfg(feature = "oscore")]
            PeerIdentity::Oscore(kid) => {
                f.write_str("oscore:")?;
                kid.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn identities_print_as_their_kind_and_name() {
        assert_eq!(PeerIdentity::Psk("ward-3".into()).to_string(), "psk:ward-3");
        let cert = PeerIdentity::Certificate {
            subject: "CN=em".into(),
            fingerprint: [0xab; 32],
        };
        assert_eq!(
            cert.to_string(),
            alloc::format!("cert:CN=em sha256:{}", "ab".repeat(32))
        );
        #[cfg(feature = "oscore")]
        assert_eq!(
            PeerIdentity::Oscore(alloc::vec![0x0c, 0x1a]).to_string(),
            "oscore:0c1a"
        );
    }
}
