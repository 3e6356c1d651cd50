//! What can go wrong protecting or verifying a message, and the response each failure earns
//! (RFC 8613 §7.4, §8.2, §8.4).

use covey_core::{Code, EncodeError};

/// Why OSCORE processing failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OscoreError {
    /// The OSCORE option cannot be decompressed: truncated, reserved bits or lengths, or a
    /// request without kid or Partial IV (§8.2 step 2).
    MalformedOption,
    /// The payload is no COSE ciphertext: shorter than the tag plus one byte (§8.2 step 2).
    MalformedPayload,
    /// No security context for the kid (and kid context) of the request (§8.2 step 2).
    UnknownContext,
    /// The Partial IV was already received or is below the replay window (§7.4), or a
    /// notification is not newer than the observation's Notification Number (§7.4.1).
    Replay,
    /// The replay window was lost in a restart, so no request is known fresh until one
    /// proves it with Echo (Appendix B.1.2).
    FreshnessUnknown,
    /// The AEAD rejected the ciphertext (§8.2 step 6).
    DecryptionFailed,
    /// The decrypted plaintext is no code, options and payload, or its code is of the
    /// wrong kind for the message.
    MalformedPlaintext,
    /// The message carries no OSCORE option, so it is not an OSCORE message.
    NotProtected,
    /// The message to protect already carries an OSCORE option.
    AlreadyProtected,
    /// The message to protect has Proxy-Uri, which must first be split into Proxy-Scheme and
    /// Uri-* options (§4.1.3.3); this crate does not do that.
    ProxyUriPresent,
    /// A request was given where a response was expected, or the other way round.
    WrongMessageKind,
    /// The plaintext is longer than AES-CCM with a 13-byte nonce can encrypt (65 535 bytes).
    PlaintextTooLong,
    /// The sender sequence number passed 2^40 − 1: the context must be renewed (§7.2.1).
    SequenceNumberExhausted,
    /// A Sender or Recipient ID longer than the nonce allows (7 bytes, §3.3).
    IdTooLong,
    /// The ID Context does not fit the OSCORE option's one-byte length (255 bytes).
    IdContextTooLong,
    /// The output message could not be encoded.
    Encode(EncodeError),
}

impl OscoreError {
    /// The error response a server sends for this failure of a request, if it sends one.
    pub fn response_code(&self) -> Option<Code> {
        match self {
            OscoreError::MalformedOption | OscoreError::MalformedPayload => Some(Code::BAD_OPTION),
            OscoreError::UnknownContext | OscoreError::Replay | OscoreError::FreshnessUnknown => {
                Some(Code::UNAUTHORIZED)
            }
            OscoreError::DecryptionFailed | OscoreError::MalformedPlaintext => {
                Some(Code::BAD_REQUEST)
            }
            _ => None,
        }
    }

    /// The diagnostic payload RFC 8613 suggests for that response, if any.
    pub fn diagnostic(&self) -> Option<&'static str> {
        match self {
            OscoreError::UnknownContext => Some("Security context not found"),
            OscoreError::Replay => Some("Replay detected"),
            OscoreError::DecryptionFailed => Some("Decryption failed"),
            _ => None,
        }
    }
}

impl From<EncodeError> for OscoreError {
    fn from(e: EncodeError) -> OscoreError {
        OscoreError::Encode(e)
    }
}

impl core::fmt::Display for OscoreError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let text = match self {
            OscoreError::MalformedOption => "malformed OSCORE option",
            OscoreError::MalformedPayload => "malformed OSCORE payload",
            OscoreError::UnknownContext => "security context not found",
            OscoreError::Replay => "replay detected",
            OscoreError::FreshnessUnknown => "replay window lost in a restart",
            OscoreError::DecryptionFailed => "decryption failed",
            OscoreError::MalformedPlaintext => "malformed decrypted message",
            OscoreError::NotProtected => "no OSCORE option",
            OscoreError::AlreadyProtected => "message already carries an OSCORE option",
            OscoreError::ProxyUriPresent => "Proxy-Uri must be split before protection",
            OscoreError::WrongMessageKind => "request and response confused",
            OscoreError::PlaintextTooLong => "plaintext longer than 65535 bytes",
            OscoreError::SequenceNumberExhausted => "sender sequence number exhausted",
            OscoreError::IdTooLong => "sender or recipient ID longer than 7 bytes",
            OscoreError::IdContextTooLong => "ID context longer than 255 bytes",
            OscoreError::Encode(e) => return write!(f, "cannot encode: {e}"),
        };
        f.write_str(text)
    }
}

impl core::error::Error for OscoreError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_map_to_the_responses_of_rfc_8613_section_8_2() {
        assert_eq!(
            OscoreError::MalformedOption.response_code(),
            Some(Code::BAD_OPTION)
        );
        assert_eq!(
            OscoreError::MalformedPayload.response_code(),
            Some(Code::BAD_OPTION)
        );
        assert_eq!(
            OscoreError::UnknownContext.response_code(),
            Some(Code::UNAUTHORIZED)
        );
        assert_eq!(
            OscoreError::Replay.response_code(),
            Some(Code::UNAUTHORIZED)
        );
        assert_eq!(
            OscoreError::DecryptionFailed.response_code(),
            Some(Code::BAD_REQUEST)
        );
        assert_eq!(OscoreError::SequenceNumberExhausted.response_code(), None);
        assert_eq!(
            OscoreError::UnknownContext.diagnostic(),
            Some("Security context not found")
        );
        assert_eq!(OscoreError::Replay.diagnostic(), Some("Replay detected"));
        assert_eq!(
            OscoreError::DecryptionFailed.diagnostic(),
            Some("Decryption failed")
        );
    }
}
