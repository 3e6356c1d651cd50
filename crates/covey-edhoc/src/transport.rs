//! EDHOC messages in CoAP payloads (RFC 9528 Appendix A.2): a request carries message_1
//! after CBOR `true`, or message_3 after the CBOR encoding of C_R; an EDHOC + OSCORE request
//! (RFC 9668 §3.2) carries message_3 before the OSCORE ciphertext.

use crate::error::EdhocError;

/// CBOR `true`, the prefix of message_1 in a request (RFC 9528 Appendix A.2).
const CBOR_TRUE: u8 = 0xf5;

/// What a POST to /.well-known/edhoc carries.
#[derive(Debug, PartialEq, Eq)]
pub enum EdhocRequest<'a> {
    /// message_1, starting a session.
    Message1(&'a [u8]),
    /// message_3 of the session the Responder knows as `c_r` (its CBOR encoding).
    Message3 {
        /// C_R as a one-byte CBOR integer or a CBOR byte string, as sent.
        c_r: &'a [u8],
        /// The message itself.
        message_3: &'a [u8],
    },
}

/// The payload of a request carrying message_1.
pub fn frame_message_1(message_1: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(1 + message_1.len());
    payload.push(CBOR_TRUE);
    payload.extend_from_slice(message_1);
    payload
}

/// The payload of a request carrying message_3, given C_R's CBOR encoding.
pub fn frame_message_3(c_r_cbor: &[u8], message_3: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(c_r_cbor.len() + message_3.len());
    payload.extend_from_slice(c_r_cbor);
    payload.extend_from_slice(message_3);
    payload
}

/// Splits a request payload into the EDHOC message it carries.
pub fn parse_request(payload: &[u8]) -> Result<EdhocRequest<'_>, EdhocError> {
    let (&first, rest) = payload.split_first().ok_or(EdhocError::Framing("empty"))?;
    match first {
        CBOR_TRUE => Ok(EdhocRequest::Message1(rest)),
        // One-byte CBOR integers -24..=23.
        0x00..=0x17 | 0x20..=0x37 => Ok(EdhocRequest::Message3 {
            c_r: &payload[..1],
            message_3: rest,
        }),
        // A short CBOR byte string.
        0x40..=0x57 => {
            let len = usize::from(first - 0x40);
            if rest.len() < len {
                return Err(EdhocError::Framing("C_R byte string is truncated"));
            }
            Ok(EdhocRequest::Message3 {
                c_r: &payload[..1 + len],
                message_3: &rest[len..],
            })
        }
        _ => Err(EdhocError::Framing(
            "must start with CBOR true or a connection identifier",
        )),
    }
}

/// Splits the payload of an EDHOC + OSCORE request (RFC 9668 §3.2.1) into message_3, the
/// CBOR byte string it starts with, and the OSCORE ciphertext after it.
pub fn split_combined_payload(payload: &[u8]) -> Result<(&[u8], &[u8]), EdhocError> {
    let (&first, rest) = payload.split_first().ok_or(EdhocError::Framing(
        "no message_3 before the OSCORE payload",
    ))?;
    // A CBOR byte string: its length in the initial byte, or in the 1 or 2 bytes after it.
    let (head, len): (usize, usize) = match first {
        0x40..=0x57 => (1, usize::from(first - 0x40)),
        0x58 => (2, usize::from(*rest.first().unwrap_or(&0))),
        0x59 => match rest {
            [high, low, ..] => (3, usize::from(u16::from_be_bytes([*high, *low]))),
            _ => (3, usize::MAX),
        },
        _ => return Err(EdhocError::Framing("message_3 must be a CBOR byte string")),
    };
    let end = head
        .checked_add(len)
        .filter(|&end| end <= payload.len() && head <= payload.len())
        .ok_or(EdhocError::Framing("message_3 is truncated"))?;
    Ok(payload.split_at(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_combined_payload_splits_after_its_byte_string() {
        assert_eq!(
            split_combined_payload(&[0x43, 1, 2, 3, 9, 9]),
            Ok((&[0x43, 1, 2, 3][..], &[9, 9][..]))
        );
        let long: Vec<u8> = [0x58, 30].into_iter().chain([7; 30]).chain([1]).collect();
        assert_eq!(split_combined_payload(&long), Ok((&long[..32], &[1][..])));
        let longer: Vec<u8> = [0x59, 1, 0].into_iter().chain([7; 256]).collect();
        assert_eq!(split_combined_payload(&longer), Ok((&longer[..], &[][..])));
    }

    #[test]
    fn a_truncated_or_foreign_combined_payload_is_refused() {
        for bad in [
            &[][..],
            &[0x43, 1],
            &[0x58],
            &[0x59, 1],
            &[0x01, 2],
            &[0xf5, 1],
        ] {
            assert!(
                matches!(split_combined_payload(bad), Err(EdhocError::Framing(_))),
                "{bad:02x?}"
            );
        }
    }
}
