//! DTLS alerts (RFC 5246 §7.2, RFC 4279 §2): the fatal alert a server sends when it refuses a
//! handshake whose peer proved its address, and what an alert a client receives means, so a
//! wrong key fails at once and says so instead of timing out.

/// The record content type of alerts.
const ALERT: u8 = 21;
/// The alert level of a fatal alert.
const FATAL: u8 = 2;
/// The sequence number of the alert record: above any a handshake's epoch 0 reaches, so the
/// peer's replay window takes it.
const SEQUENCE: u64 = 1 << 40;

/// `handshake_failure`: no acceptable set of security parameters.
pub(crate) const HANDSHAKE_FAILURE: u8 = 40;
/// `decrypt_error`: a handshake message did not decrypt or verify (a wrong key).
pub(crate) const DECRYPT_ERROR: u8 = 51;
/// `unknown_psk_identity` (RFC 4279): the server has no key for the identity.
pub(crate) const UNKNOWN_PSK_IDENTITY: u8 = 115;

/// A fatal alert `description` as a plaintext epoch-0 record (the handshake has no keys both
/// sides agree on, so it cannot be encrypted).
pub(crate) fn fatal_record(description: u8) -> Vec<u8> {
    let mut record = vec![ALERT, 0xfe, 0xfd, 0, 0];
    record.extend_from_slice(&SEQUENCE.to_be_bytes()[2..]);
    record.extend_from_slice(&2u16.to_be_bytes());
    record.extend_from_slice(&[FATAL, description]);
    record
}

/// What a client should understand from a fatal alert `description` its server sent.
pub(crate) fn meaning(description: u8) -> String {
    let (name, why) = match description {
        20 => ("bad_record_mac", "a wrong key"),
        40 => (
            "handshake_failure",
            "no cipher suite or credentials in common",
        ),
        42 => ("bad_certificate", "the server refused our certificate"),
        43 => (
            "unsupported_certificate",
            "the server refused our certificate",
        ),
        45 => ("certificate_expired", "the server refused our certificate"),
        46 => ("certificate_unknown", "the server refused our certificate"),
        48 => (
            "unknown_ca",
            "the server does not trust our certificate's issuer",
        ),
        51 => ("decrypt_error", "a wrong key (our key is not the server's)"),
        115 => (
            "unknown_psk_identity",
            "the server has no key for our identity",
        ),
        _ => ("alert", "a wrong key or certificate"),
    };
    format!("the server refused the handshake ({name}, {description}): {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fatal_alert_is_one_plaintext_record() {
        let record = fatal_record(DECRYPT_ERROR);
        assert_eq!(record.len(), 15);
        assert_eq!(
            &record[..5],
            &[21, 0xfe, 0xfd, 0, 0],
            "alert, DTLS 1.2, epoch 0"
        );
        assert_eq!(
            &record[11..],
            &[0, 2, 2, 51],
            "length 2: fatal decrypt_error"
        );
    }

    #[test]
    fn alerts_are_explained() {
        assert!(meaning(51).contains("a wrong key"));
        assert!(meaning(115).contains("no key for our identity"));
        assert!(meaning(99).contains("a wrong key or certificate"));
    }
}
