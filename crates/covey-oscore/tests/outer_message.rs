//! The outer message (RFC 8613 §4.1, §4.2): its code, and which options stay visible; and
//! notifications, taken in Partial IV order (§7.4.1).

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_oscore::{
    ContextInput, NotificationNumber, OscoreError, RequestId, ResponsePartialIv, SecurityContext,
};

fn context(sender_id: &[u8], recipient_id: &[u8]) -> SecurityContext {
    SecurityContext::derive(&ContextInput {
        master_secret: b"0123456789abcdef",
        master_salt: &[],
        sender_id,
        recipient_id,
        id_context: None,
    })
    .unwrap()
}

/// Encodes a message with options given in number order.
fn message(code: Code, options: &[(OptionNumber, &[u8])], payload: &[u8]) -> Vec<u8> {
    let mut buf = [0; 256];
    let mut encoder =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, code, 9, &[1, 2]).unwrap();
    for (number, value) in options {
        encoder.option(*number, value).unwrap();
    }
    encoder.payload(payload).unwrap();
    let len = encoder.finish();
    buf[..len].to_vec()
}

fn option_numbers(datagram: &[u8]) -> Vec<u16> {
    Message::parse(datagram)
        .unwrap()
        .options()
        .map(|o| o.number.0)
        .collect()
}

#[test]
fn only_class_u_options_and_outer_observe_stay_outside() {
    let plain = message(
        Code::GET,
        &[
            (OptionNumber::URI_HOST, b"example.com"),
            (OptionNumber::OBSERVE, &[]),
            (OptionNumber::URI_PORT, &[0x16, 0x33]),
            (OptionNumber::URI_PATH, b"temp"),
            (OptionNumber::MAX_AGE, &[60]),
            (OptionNumber::BLOCK2, &[0x02]),
            (OptionNumber::PROXY_SCHEME, b"coap"),
        ],
        b"",
    );
    let mut client = context(b"c", b"s");
    let mut out = [0; 256];
    let (len, _) = client
        .protect_request(&Message::parse(&plain).unwrap(), &mut out)
        .unwrap();
    let protected = out[..len].to_vec();
    // §4.2: FETCH, since POST with Observe is not defined.
    assert_eq!(Message::parse(&protected).unwrap().code(), Code::FETCH);
    assert_eq!(option_numbers(&protected), [3, 6, 7, 9, 39]);

    let mut server = context(b"s", b"c");
    let (len, _) = server
        .unprotect_request(&Message::parse(&protected).unwrap(), &mut out)
        .unwrap();
    assert_eq!(&out[..len], plain.as_slice());
}

#[test]
fn a_request_without_observe_is_a_post() {
    let plain = message(Code::PUT, &[(OptionNumber::URI_PATH, b"a")], b"x");
    let mut out = [0; 256];
    let (len, _) = context(b"c", b"s")
        .protect_request(&Message::parse(&plain).unwrap(), &mut out)
        .unwrap();
    let protected = Message::parse(&out[..len]).unwrap();
    assert_eq!(protected.code(), Code::POST);
    assert_eq!(option_numbers(&out[..len]), [9]);
}

/// A client and server after `request` went from one to the other, and the request's id.
fn after_request(request: &[u8]) -> (SecurityContext, SecurityContext, RequestId) {
    let mut client = context(b"c", b"s");
    let mut server = context(b"s", b"c");
    let mut out = [0; 256];
    let (len, request_id) = client
        .protect_request(&Message::parse(request).unwrap(), &mut out)
        .unwrap();
    let protected = out[..len].to_vec();
    server
        .unprotect_request(&Message::parse(&protected).unwrap(), &mut out)
        .unwrap();
    (client, server, request_id)
}

#[test]
fn a_notification_is_2_05_with_outer_observe_and_an_empty_inner_observe() {
    let registration = message(
        Code::GET,
        &[(OptionNumber::OBSERVE, &[]), (OptionNumber::URI_PATH, b"t")],
        b"",
    );
    let (client, mut server, request_id) = after_request(&registration);
    let mut out = [0; 256];

    let notification = message(Code::CONTENT, &[(OptionNumber::OBSERVE, &[5])], b"22 C");
    let len = server
        .protect_response(
            &Message::parse(&notification).unwrap(),
            &request_id,
            ResponsePartialIv::Own,
            &mut out,
        )
        .unwrap();
    let protected = out[..len].to_vec();
    let outer = Message::parse(&protected).unwrap();
    assert_eq!(outer.code(), Code::CONTENT);
    assert_eq!(outer.option(OptionNumber::OBSERVE), Some(&[5][..]));

    // §4.1.3.5.2: the client orders notifications by Partial IV, so the inner Observe is
    // empty and the verified notification carries it so.
    let len = client
        .unprotect_response(&outer, &request_id, &mut out)
        .unwrap();
    let verified = Message::parse(&out[..len]).unwrap();
    assert_eq!(verified.code(), Code::CONTENT);
    assert_eq!(verified.option(OptionNumber::OBSERVE), Some(&[][..]));
    assert_eq!(verified.payload(), b"22 C");
}

/// A client takes each notification once and in Partial IV order: a replayed or older one
/// is refused, and so is a forged one, without moving the Notification Number.
#[test]
fn notifications_are_refused_when_replayed_or_older() {
    let registration = message(
        Code::GET,
        &[(OptionNumber::OBSERVE, &[]), (OptionNumber::URI_PATH, b"t")],
        b"",
    );
    let (client, mut server, request_id) = after_request(&registration);
    let mut notify = |partial_iv, payload: &[u8]| {
        let plain = message(Code::CONTENT, &[(OptionNumber::OBSERVE, &[])], payload);
        let mut out = [0; 256];
        let len = server
            .protect_response(
                &Message::parse(&plain).unwrap(),
                &request_id,
                partial_iv,
                &mut out,
            )
            .unwrap();
        out[..len].to_vec()
    };
    let first = notify(ResponsePartialIv::FromRequest, b"0");
    let n1 = notify(ResponsePartialIv::Own, b"1");
    let n2 = notify(ResponsePartialIv::Own, b"2");
    let mut forged = notify(ResponsePartialIv::Own, b"3");
    *forged.last_mut().unwrap() ^= 1;

    let mut number = NotificationNumber::new();
    let mut out = [0; 256];
    let mut verify = |datagram: &[u8], number: &mut NotificationNumber| {
        client
            .unprotect_notification(
                &Message::parse(datagram).unwrap(),
                &request_id,
                number,
                &mut out,
            )
            .map(|len| out[..len].to_vec())
    };
    assert!(verify(&first, &mut number).is_ok());
    assert!(verify(&n2, &mut number).is_ok());
    assert_eq!(number.value(), Some(1));
    assert_eq!(verify(&n2, &mut number), Err(OscoreError::Replay));
    assert_eq!(verify(&n1, &mut number), Err(OscoreError::Replay));
    assert_eq!(verify(&first, &mut number), Err(OscoreError::Replay));
    assert_eq!(
        verify(&forged, &mut number),
        Err(OscoreError::DecryptionFailed)
    );
    assert_eq!(number.value(), Some(1), "a forgery moves nothing");
    // Each verified alone by unprotect_response, as a plain response would be.
    assert!(client
        .unprotect_response(&Message::parse(&n1).unwrap(), &request_id, &mut [0; 256])
        .is_ok());
}

#[test]
fn a_plain_response_is_2_04_changed() {
    let request = message(Code::GET, &[(OptionNumber::URI_PATH, b"t")], b"");
    let (client, mut server, request_id) = after_request(&request);
    let mut out = [0; 256];
    let response = message(Code::NOT_FOUND, &[(OptionNumber::MAX_AGE, &[0])], b"");
    let len = server
        .protect_response(
            &Message::parse(&response).unwrap(),
            &request_id,
            ResponsePartialIv::FromRequest,
            &mut out,
        )
        .unwrap();
    let protected = out[..len].to_vec();
    assert_eq!(Message::parse(&protected).unwrap().code(), Code::CHANGED);
    // No Partial IV and no kid: an empty OSCORE option.
    assert_eq!(
        Message::parse(&protected)
            .unwrap()
            .option(OptionNumber::OSCORE),
        Some(&[][..])
    );
    let len = client
        .unprotect_response(&Message::parse(&protected).unwrap(), &request_id, &mut out)
        .unwrap();
    assert_eq!(&out[..len], response.as_slice());
}
