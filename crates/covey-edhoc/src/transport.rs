//! EDHOC messages in CoAP payloads (RFC 9528 Appendix A.2): a request carries message_1
//! after CBOR `true`, or message_3 after the CBOR encoding of C_R.

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
