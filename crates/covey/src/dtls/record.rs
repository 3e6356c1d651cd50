//! Just enough of the DTLS 1.2 record and handshake headers (RFC 6347 §4.1, §4.2.2) to
//! route a datagram before any session exists: which epoch it is in, and whether it starts
//! with a ClientHello (or, going out, a ServerHello).

/// The record content type of handshake messages.
const HANDSHAKE: u8 = 22;
/// The length of a DTLS record header.
const RECORD_HEADER: usize = 13;
/// Handshake message types.
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;

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
}
