//! Malformed, forged, replayed and exhausted input: each fails with the error, and the
//! response code, RFC 8613 §7.4 and §8.2 name.

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_oscore::{
    ContextInput, OscoreError, ResponsePartialIv, SecurityContext, MAX_SEQUENCE_NUMBER,
};

const SECRET: [u8; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

fn context(sender_id: &[u8], recipient_id: &[u8], id_context: Option<&[u8]>) -> SecurityContext {
    SecurityContext::derive(&ContextInput {
        master_secret: &SECRET,
        master_salt: &[0x9e, 0x7c, 0xa9, 0x22],
        sender_id,
        recipient_id,
        id_context,
    })
    .unwrap()
}

fn client() -> SecurityContext {
    context(&[], &[0x01], None)
}

fn server() -> SecurityContext {
    context(&[0x01], &[], None)
}

/// A GET /temp with Uri-Host, as the application hands it over.
fn plain_request() -> Vec<u8> {
    let mut buf = [0; 64];
    let mut encoder =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 7, &[0xAB]).unwrap();
    encoder
        .option(OptionNumber::URI_HOST, b"localhost")
        .unwrap();
    encoder.option(OptionNumber::URI_PATH, b"temp").unwrap();
    let len = encoder.finish();
    buf[..len].to_vec()
}

fn protect(client: &mut SecurityContext) -> Vec<u8> {
    let mut out = [0; 128];
    let (len, _) = client
        .protect_request(&Message::parse(&plain_request()).unwrap(), &mut out)
        .unwrap();
    out[..len].to_vec()
}

/// A POST with the given OSCORE option value and payload.
fn forged(oscore_option: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut buf = [0; 128];
    let mut encoder =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::POST, 7, &[0xAB]).unwrap();
    encoder.option(OptionNumber::OSCORE, oscore_option).unwrap();
    encoder.payload(payload).unwrap();
    let len = encoder.finish();
    buf[..len].to_vec()
}

fn unprotect(server: &mut SecurityContext, datagram: &[u8]) -> Result<usize, OscoreError> {
    let mut out = [0; 128];
    server
        .unprotect_request(&Message::parse(datagram).unwrap(), &mut out)
        .map(|(len, _)| len)
}

#[test]
fn malformed_oscore_options_are_4_02() {
    let payload = [0x55; 16];
    let malformed: [&[u8]; 7] = [
        &[0x09],                      // n = 1 but no Partial IV: truncated
        &[0x02, 0x14],                // Partial IV of 2 bytes cut short
        &[0x29, 0x14],                // reserved flag bit
        &[0x0e, 1, 2, 3, 4, 5, 6],    // n = 6
        &[0x0f, 1, 2, 3, 4, 5, 6, 7], // n = 7
        &[0x19, 0x14, 0x09, 0x37],    // kid context longer than the option
        &[0x01, 0x14],                // a request without kid
    ];
    for value in malformed {
        let error = unprotect(&mut server(), &forged(value, &payload)).unwrap_err();
        assert_eq!(error, OscoreError::MalformedOption, "{value:02x?}");
        assert_eq!(error.response_code(), Some(Code::BAD_OPTION));
    }
    // Without Partial IV a request cannot be verified either.
    let error = unprotect(&mut server(), &forged(&[0x08], &payload)).unwrap_err();
    assert_eq!(error, OscoreError::MalformedOption);
}

#[test]
fn a_ciphertext_shorter_than_the_tag_is_4_02() {
    for len in [0, 1, 7, 8] {
        let error = unprotect(&mut server(), &forged(&[0x09, 0x14], &vec![0x55; len])).unwrap_err();
        assert_eq!(error, OscoreError::MalformedPayload, "{len} bytes");
        assert_eq!(error.response_code(), Some(Code::BAD_OPTION));
    }
}

#[test]
fn a_flipped_ciphertext_bit_is_4_00_decryption_failed_and_does_not_burn_the_partial_iv() {
    let protected = protect(&mut client());
    let mut server = server();
    let payload_start = protected.iter().position(|&b| b == 0xFF).unwrap() + 1;
    // The first ciphertext byte, one inside, and the last byte of the tag.
    for (index, bit) in [
        (payload_start, 0),
        (payload_start + 3, 5),
        (protected.len() - 1, 7),
    ] {
        let mut tampered = protected.clone();
        tampered[index] ^= 1 << bit;
        let error = unprotect(&mut server, &tampered).unwrap_err();
        assert_eq!(error, OscoreError::DecryptionFailed);
        assert_eq!(error.response_code(), Some(Code::BAD_REQUEST));
        assert_eq!(error.diagnostic(), Some("Decryption failed"));
    }
    // The genuine request, with the same Partial IV, still verifies.
    assert!(unprotect(&mut server, &protected).is_ok());
}

#[test]
fn an_unknown_kid_or_kid_context_is_4_01_security_context_not_found() {
    // The client's kid is h'' but this server expects h'07'.
    let mut other_server = context(&[0x01], &[0x07], None);
    let error = unprotect(&mut other_server, &protect(&mut client())).unwrap_err();
    assert_eq!(error, OscoreError::UnknownContext);
    assert_eq!(error.response_code(), Some(Code::UNAUTHORIZED));
    assert_eq!(error.diagnostic(), Some("Security context not found"));

    let mut client_in_group_a = context(&[], &[0x01], Some(b"group-a"));
    let mut server_in_group_b = context(&[0x01], &[], Some(b"group-b"));
    let error = unprotect(&mut server_in_group_b, &protect(&mut client_in_group_a)).unwrap_err();
    assert_eq!(error, OscoreError::UnknownContext);
}

#[test]
fn a_replayed_request_is_4_01_replay_detected() {
    let mut client = client();
    let first = protect(&mut client);
    let second = protect(&mut client);
    let mut server = server();
    assert!(unprotect(&mut server, &second).is_ok());
    assert!(
        unprotect(&mut server, &first).is_ok(),
        "older but inside the window"
    );
    for replayed in [&first, &second] {
        let error = unprotect(&mut server, replayed).unwrap_err();
        assert_eq!(error, OscoreError::Replay);
        assert_eq!(error.response_code(), Some(Code::UNAUTHORIZED));
        assert_eq!(error.diagnostic(), Some("Replay detected"));
    }
}

#[test]
fn a_partial_iv_below_the_window_is_a_replay() {
    let mut client = client();
    let old = protect(&mut client);
    client.set_sender_sequence_number(100).unwrap();
    let new = protect(&mut client);
    let mut server = server();
    assert!(unprotect(&mut server, &new).is_ok());
    assert_eq!(unprotect(&mut server, &old), Err(OscoreError::Replay));
}

#[test]
fn sender_sequence_number_exhaustion_stops_protection() {
    let mut client = client();
    client
        .set_sender_sequence_number(MAX_SEQUENCE_NUMBER)
        .unwrap();
    let last = protect(&mut client);
    assert!(unprotect(&mut server(), &last).is_ok());
    let mut out = [0; 128];
    let request = plain_request();
    assert_eq!(
        client
            .protect_request(&Message::parse(&request).unwrap(), &mut out)
            .err(),
        Some(OscoreError::SequenceNumberExhausted)
    );
    // A response with its own Partial IV draws from the same sequence number.
    let mut server = server();
    let (_, request_id) = server
        .unprotect_request(&Message::parse(&last).unwrap(), &mut out)
        .unwrap();
    server
        .set_sender_sequence_number(MAX_SEQUENCE_NUMBER + 1)
        .unwrap();
    let response = [0x60, 0x45, 0, 7];
    assert_eq!(
        server.protect_response(
            &Message::parse(&response).unwrap(),
            &request_id,
            ResponsePartialIv::Own,
            &mut out
        ),
        Err(OscoreError::SequenceNumberExhausted)
    );
}

#[test]
fn a_response_verifies_only_for_its_own_request() {
    let mut client = client();
    let mut server = server();
    let mut out = [0; 128];
    let first = protect(&mut client);
    let second = protect(&mut client);
    let (_, first_id) = server
        .unprotect_request(&Message::parse(&first).unwrap(), &mut out)
        .unwrap();
    let (_, second_id) = server
        .unprotect_request(&Message::parse(&second).unwrap(), &mut out)
        .unwrap();
    let response = [0x60, 0x45, 0, 7, 0xFF, b'h', b'i'];
    let len = server
        .protect_response(
            &Message::parse(&response).unwrap(),
            &first_id,
            ResponsePartialIv::FromRequest,
            &mut out,
        )
        .unwrap();
    let protected = out[..len].to_vec();
    let message = Message::parse(&protected).unwrap();
    assert_eq!(
        client.unprotect_response(&message, &second_id, &mut out),
        Err(OscoreError::DecryptionFailed)
    );
    let len = client
        .unprotect_response(&message, &first_id, &mut out)
        .unwrap();
    assert_eq!(&out[..len], response);
}

#[test]
fn messages_that_cannot_be_protected_or_verified_are_refused() {
    let mut out = [0; 128];
    let mut client = client();
    // Already protected: an OSCORE option in the plain message.
    let protected = protect(&mut client);
    let message = Message::parse(&protected).unwrap();
    assert_eq!(
        client.protect_request(&message, &mut out).err(),
        Some(OscoreError::AlreadyProtected)
    );
    // A response where a request is expected.
    let response = [0x60, 0x45, 0, 7];
    assert_eq!(
        client
            .protect_request(&Message::parse(&response).unwrap(), &mut out)
            .err(),
        Some(OscoreError::WrongMessageKind)
    );
    // Proxy-Uri must be split first.
    let mut buf = [0; 64];
    let mut encoder =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 1, &[]).unwrap();
    encoder
        .option(OptionNumber::PROXY_URI, b"coap://example.com/a")
        .unwrap();
    let len = encoder.finish();
    assert_eq!(
        client
            .protect_request(&Message::parse(&buf[..len]).unwrap(), &mut out)
            .err(),
        Some(OscoreError::ProxyUriPresent)
    );
    // A plain request is no OSCORE message.
    assert_eq!(
        unprotect(&mut server(), &plain_request()),
        Err(OscoreError::NotProtected)
    );
    // An output buffer too small is an error, not a panic.
    let mut tiny = [0; 10];
    assert!(matches!(
        client.protect_request(&Message::parse(&plain_request()).unwrap(), &mut tiny),
        Err(OscoreError::Encode(_))
    ));
}

/// After a restart without the replay window (RFC 8613 Appendix B.1.2): every request is
/// refused as of unknown freshness, even one never seen; verifying without the window takes
/// nothing in; once a request's freshness is proven the window starts again at it, so it and
/// anything older are replays and newer ones are served.
#[test]
fn a_lost_replay_window_refuses_until_a_request_is_proven_fresh() {
    let mut client = client();
    let before_restart = protect(&mut client);
    let mut server = server();
    server.forget_replay_window();
    let mut out = [0; 256];
    let unknown = |server: &mut SecurityContext, datagram: &[u8], out: &mut [u8]| {
        server
            .unprotect_request(&Message::parse(datagram).unwrap(), out)
            .err()
    };
    let proof = protect(&mut client);
    assert_eq!(
        unknown(&mut server, &proof, &mut out),
        Some(OscoreError::FreshnessUnknown)
    );
    assert_eq!(
        OscoreError::FreshnessUnknown.response_code(),
        Some(Code::UNAUTHORIZED)
    );
    // Verified without the window: readable, and the window is still lost.
    let (len, id) = server
        .unprotect_request_of_unknown_freshness(&Message::parse(&proof).unwrap(), &mut out)
        .expect("it verifies");
    assert_eq!(Message::parse(&out[..len]).unwrap().code(), Code::GET);
    assert!(!server.replay_window().is_known());
    // A forgery does not verify that way either.
    let mut forged = proof.clone();
    *forged.last_mut().unwrap() ^= 1;
    assert_eq!(
        server
            .unprotect_request_of_unknown_freshness(&Message::parse(&forged).unwrap(), &mut out)
            .err(),
        Some(OscoreError::DecryptionFailed)
    );
    server.recover_replay_window(&id.partial_iv);
    for stale in [&before_restart, &proof] {
        assert_eq!(
            unknown(&mut server, stale, &mut out),
            Some(OscoreError::Replay)
        );
    }
    let next = protect(&mut client);
    assert!(server
        .unprotect_request(&Message::parse(&next).unwrap(), &mut out)
        .is_ok());
}

/// A client reads back the request it protected (to send it again with an Echo value), and
/// nobody else's.
#[test]
fn a_client_reads_back_its_own_request_only() {
    let mut client = client();
    let protected = protect(&mut client);
    let mut out = [0; 256];
    let len = client
        .unprotect_own_request(&Message::parse(&protected).unwrap(), &mut out)
        .expect("its own request");
    let plain = Message::parse(&out[..len]).unwrap();
    let original = plain_request();
    let original = Message::parse(&original).unwrap();
    assert_eq!(plain.code(), original.code());
    assert!(plain.options().eq(original.options()));
    assert_eq!(
        server()
            .unprotect_own_request(&Message::parse(&protected).unwrap(), &mut out)
            .err(),
        Some(OscoreError::UnknownContext)
    );
}
