//! Just enough of the DTLS 1.2 record and handshake headers (RFC 6347 §4.1, §4.2.2) to
//! route a datagram before any session exists (which epoch it is in, whether it starts with
//! a ClientHello or, going out, a ServerHello) and to bound a peer's certificate before
//! dimpl reads it.

/// The record content type of handshake messages.
const HANDSHAKE: u8 = 22;
/// The length of a DTLS record header.
const RECORD_HEADER: usize = 13;
/// The length of a handshake message header.
const HANDSHAKE_HEADER: usize = 12;
/// Handshake message types.
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;
const CERTIFICATE: u8 = 11;

/// The epoch of the first record of `datagram`, if it is long enough to have one.
pub(crate) fn epoch(datagram: &[u8]) -> Option<u16> {
    let bytes = datagram.get(3..5)?;
    Some(u16::from_be_bytes([bytes[0], bytes[1]]))
}

/// Whether the first record of `datagram` is a plaintext handshake message of type `kind`.
fn starts_with_handshake(datagram: &[u8], kind: u8) -> bool {
    datagram.len() > RECORD_HEADER
        && datagram[0] == HANDSHAKE
        && epoch(datagram) == Some(0)
        && datagram[RECORD_HEADER] == kind
}

/// Whether `datagram` opens a handshake (its first record is a ClientHello in epoch 0).
pub(crate) fn is_client_hello(datagram: &[u8]) -> bool {
    starts_with_handshake(datagram, CLIENT_HELLO)
}

/// Whether a server's `datagram` carries its ServerHello: the client came back with a valid
/// cookie, so it receives at its address (a HelloVerifyRequest is sent before that).
pub(crate) fn is_server_hello(datagram: &[u8]) -> bool {
    starts_with_handshake(datagram, SERVER_HELLO)
}

/// The largest length a Certificate message declares in the plaintext handshake records of
/// `datagram` (0 if none): the whole message, so at least the size of the peer's leaf
/// certificate once reassembled. Walks every record and fragment dimpl would read, and
/// some it would not (malformed tails), so none escapes the count.
pub(crate) fn largest_certificate(datagram: &[u8]) -> usize {
    let mut largest = 0;
    let mut rest = datagram;
    while let Some(header) = rest.get(..RECORD_HEADER) {
        let length = usize::from(u16::from_be_bytes([header[11], header[12]]));
        let Some(fragment) = rest.get(RECORD_HEADER..RECORD_HEADER + length) else {
            break;
        };
        if header[0] == HANDSHAKE && epoch(header) == Some(0) {
            largest = largest.max(largest_certificate_in(fragment));
        }
        rest = &rest[RECORD_HEADER + length..];
    }
    largest
}

/// The largest length a Certificate message declares among the handshake fragments of one
/// plaintext record.
fn largest_certificate_in(mut record: &[u8]) -> usize {
    let u24 = |b: &[u8]| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]);
    let mut largest = 0;
    while let Some(header) = record.get(..HANDSHAKE_HEADER) {
        if header[0] == CERTIFICATE {
            largest = largest.max(u24(&header[1..4]));
        }
        let end = HANDSHAKE_HEADER + u24(&header[9..12]);
        let Some(rest) = record.get(end..) else {
            break;
        };
        record = rest;
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_told_apart_and_short_input_is_nothing() {
        let mut hello = vec![22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 1];
        assert!(is_client_hello(&hello));
        assert!(!is_server_hello(&hello));
        hello[13] = 2;
        assert!(is_server_hello(&hello));
        hello[4] = 1;
        assert_eq!(epoch(&hello), Some(1));
        assert!(!is_server_hello(&hello), "epoch 1 is encrypted");
        assert!(!is_client_hello(&[22, 0xfe, 0xfd]));
        assert_eq!(epoch(&[22, 0xfe]), None);
        assert!(!is_client_hello(&[]));
    }

    /// A plaintext handshake record holding `fragments` (type, message length, body).
    fn handshake_record(fragments: &[(u8, usize, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (kind, length, fragment) in fragments {
            body.push(*kind);
            body.extend_from_slice(&(*length as u32).to_be_bytes()[1..]);
            body.extend_from_slice(&[0, 0, 0, 0, 0]);
            body.extend_from_slice(&(fragment.len() as u32).to_be_bytes()[1..]);
            body.extend_from_slice(fragment);
        }
        let mut record = vec![22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0];
        record.extend_from_slice(&(body.len() as u16).to_be_bytes());
        record.extend_from_slice(&body);
        record
    }

    #[test]
    fn certificate_lengths_are_found_in_any_record_and_fragment() {
        let hello = handshake_record(&[(2, 3, b"abc")]);
        assert_eq!(largest_certificate(&hello), 0);
        // A ServerHello then a Certificate fragment declaring 70 000 bytes, in a second record.
        let certificate = handshake_record(&[(2, 2, b"ab"), (11, 70_000, &[0; 40])]);
        let datagram = [hello.clone(), certificate.clone()].concat();
        assert_eq!(largest_certificate(&datagram), 70_000);
        // Cut anywhere, it never panics; a cut record is not read (dimpl drops it too).
        for cut in 0..datagram.len() {
            assert_eq!(largest_certificate(&datagram[..cut]), 0);
        }
        // Encrypted records are not read.
        let mut sealed = certificate;
        sealed[4] = 1;
        assert_eq!(largest_certificate(&sealed), 0);
        assert_eq!(largest_certificate(&[]), 0);
    }
}
