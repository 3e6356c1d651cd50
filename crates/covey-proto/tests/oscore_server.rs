//! OSCORE on the server side: a protected request reaches the application as its inner
//! request, its response leaves protected, and the RFC 8613 §8.2 failures are answered
//! unprotected without the application seeing them.
#![cfg(feature = "oscore")]

use covey_core::{Block, Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::covey_oscore::{ContextInput, RequestId, SecurityContext};
use covey_proto::{
    AddOscoreContextError, App, AppContext, Config, Endpoint, Event, Instant, LocalAddr, Lone,
    Node, NullHost, Reception, Response,
};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;

const SECRET: &[u8] = b"a shared secret!";

fn context(secret: &[u8], sender_id: &[u8], recipient_id: &[u8]) -> SecurityContext {
    SecurityContext::derive(&ContextInput {
        master_secret: secret,
        master_salt: b"salt",
        sender_id,
        recipient_id,
        id_context: None,
    })
    .unwrap()
}

fn client_addr() -> SocketAddr {
    "[2001:db8::1]:5683".parse().unwrap()
}

fn server() -> Endpoint {
    let mut server = Endpoint::new(Config::default(), 1).unwrap();
    server
        .add_oscore_context(context(SECRET, b"S", b"C"))
        .unwrap();
    server
}

/// A plain CON request with Uri-Path `path` and `payload`.
fn plain_request(mid: u16, code: Code, path: &str, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0; 256];
    let mut encoder = MessageEncoder::new(
        &mut buf,
        MessageType::Confirmable,
        code,
        mid,
        &[0xAB, mid as u8],
    )
    .unwrap();
    encoder
        .option(OptionNumber::URI_PATH, path.as_bytes())
        .unwrap();
    encoder.payload(payload).unwrap();
    let len = encoder.finish();
    buf.truncate(len);
    buf
}

fn protect(client: &mut SecurityContext, plain: &[u8]) -> (Vec<u8>, RequestId) {
    let mut out = vec![0; 512];
    let (len, id) = client
        .protect_request(&Message::parse(plain).unwrap(), &mut out)
        .unwrap();
    out.truncate(len);
    (out, id)
}

fn deliver(server: &mut Endpoint, datagram: &[u8]) -> Reception {
    server.handle_datagram(Instant::ZERO, client_addr(), LocalAddr::UNICAST, datagram)
}

fn sent(server: &mut Endpoint) -> Vec<u8> {
    let mut buf = vec![0; 1500];
    let t = server.poll_transmit(Instant::ZERO, &mut buf).unwrap();
    buf.truncate(t.size);
    buf
}

/// Answers every request with 2.05 and "echo:<method>:<path>:<payload>", noting the kid.
fn serve_one(server: &mut Endpoint) -> Option<Option<Vec<u8>>> {
    let Some(Event::Request(id)) = server.poll_event() else {
        return None;
    };
    let request = server.request(id).unwrap();
    let path = request
        .message
        .option(OptionNumber::URI_PATH)
        .unwrap_or(&[]);
    let code = request.message.code();
    let mut text = format!("echo:{}.{:02}:", code.class(), code.detail()).into_bytes();
    text.extend_from_slice(path);
    text.push(b':');
    text.extend_from_slice(request.payload());
    assert!(!request.message.has_option(OptionNumber::OSCORE));
    let kid = request.oscore_kid.map(<[u8]>::to_vec);
    let response = Response {
        code: Code::CONTENT,
        options: &[],
        payload: &text,
    };
    server.respond(Instant::ZERO, id, &response).unwrap();
    Some(kid)
}

#[test]
fn a_protected_request_is_served_as_its_inner_request_and_answered_protected() {
    let mut server = server();
    let mut client = context(SECRET, b"C", b"S");
    let (protected, id) = protect(&mut client, &plain_request(7, Code::PUT, "hello", b"hi"));
    assert_eq!(deliver(&mut server, &protected), Reception::Accepted);
    let kid = serve_one(&mut server).expect("the application sees the request");
    assert_eq!(kid.as_deref(), Some(&b"C"[..]));

    let wire = sent(&mut server);
    let outer = Message::parse(&wire).unwrap();
    assert_eq!(outer.message_type(), MessageType::Acknowledgement);
    assert_eq!(outer.message_id(), 7);
    assert_eq!(
        outer.code(),
        Code::CHANGED,
        "outer code of a protected response"
    );
    assert!(outer.has_option(OptionNumber::OSCORE));
    assert!(
        !outer.payload().windows(4).any(|w| w == b"echo"),
        "payload is encrypted"
    );
    let mut out = vec![0; 512];
    let len = client.unprotect_response(&outer, &id, &mut out).unwrap();
    let inner = Message::parse(&out[..len]).unwrap();
    assert_eq!(inner.code(), Code::CONTENT);
    assert_eq!(inner.payload(), b"echo:0.03:hello:hi");
    assert_eq!(server.stats().oscore_refused, 0);
}

#[test]
fn a_plain_request_is_served_as_before() {
    let mut server = server();
    deliver(&mut server, &plain_request(3, Code::GET, "plain", b""));
    assert_eq!(serve_one(&mut server), Some(None));
    let wire = sent(&mut server);
    let response = Message::parse(&wire).unwrap();
    assert_eq!(response.code(), Code::CONTENT);
    assert!(!response.has_option(OptionNumber::OSCORE));
    assert_eq!(response.payload(), b"echo:0.01:plain:");
}

/// The unprotected error the server sent: code, Max-Age and diagnostic.
fn refusal(server: &mut Endpoint) -> (Code, Option<Vec<u8>>, String) {
    assert!(
        server.poll_event().is_none(),
        "the application saw a refused request"
    );
    let wire = sent(server);
    let m = Message::parse(&wire).unwrap();
    assert!(!m.has_option(OptionNumber::OSCORE));
    let max_age = m.option(OptionNumber::MAX_AGE).map(<[u8]>::to_vec);
    (
        m.code(),
        max_age,
        String::from_utf8_lossy(m.payload()).into(),
    )
}

#[test]
fn an_unknown_kid_gets_4_01_security_context_not_found() {
    let mut server = server();
    let mut stranger = context(SECRET, b"X", b"S");
    let (protected, _) = protect(&mut stranger, &plain_request(1, Code::GET, "hello", b""));
    deliver(&mut server, &protected);
    let (code, max_age, text) = refusal(&mut server);
    assert_eq!(code, Code::UNAUTHORIZED);
    assert_eq!(max_age, Some(vec![]), "Max-Age 0");
    assert_eq!(text, "Security context not found");
    assert_eq!(server.stats().oscore_refused, 1);
}

#[test]
fn a_wrong_key_gets_4_00_decryption_failed() {
    let mut server = server();
    let mut wrong = context(b"another secret!!", b"C", b"S");
    let (protected, _) = protect(&mut wrong, &plain_request(1, Code::GET, "hello", b""));
    deliver(&mut server, &protected);
    let (code, max_age, text) = refusal(&mut server);
    assert_eq!(code, Code::BAD_REQUEST);
    assert_eq!(max_age, Some(vec![]));
    assert_eq!(text, "Decryption failed");
    assert_eq!(server.stats().oscore_refused, 1);
}

#[test]
fn a_replayed_request_with_a_new_message_id_gets_4_01_replay_detected() {
    let mut server = server();
    let mut client = context(SECRET, b"C", b"S");
    let (protected, _) = protect(&mut client, &plain_request(1, Code::POST, "hello", b"once"));
    deliver(&mut server, &protected);
    assert!(serve_one(&mut server).is_some());
    sent(&mut server);
    // The same bytes under another message ID pass deduplication, not the replay window.
    let mut replay = protected.clone();
    replay[3] ^= 0x55;
    deliver(&mut server, &replay);
    let (code, max_age, text) = refusal(&mut server);
    assert_eq!(code, Code::UNAUTHORIZED);
    assert_eq!(max_age, Some(vec![]));
    assert_eq!(text, "Replay detected");
    assert_eq!(server.stats().oscore_refused, 1);
}

#[test]
fn a_retransmission_gets_the_same_protected_response_without_the_application() {
    let mut server = server();
    let mut client = context(SECRET, b"C", b"S");
    let (protected, _) = protect(&mut client, &plain_request(9, Code::POST, "hello", b"x"));
    deliver(&mut server, &protected);
    serve_one(&mut server).unwrap();
    let first = sent(&mut server);
    assert_eq!(deliver(&mut server, &protected), Reception::Duplicate);
    assert!(server.poll_event().is_none());
    assert_eq!(sent(&mut server), first);
}

#[test]
fn contexts_are_bounded_and_a_duplicate_recipient_id_is_refused() {
    let config = Config {
        max_oscore_contexts: 1,
        ..Config::default()
    };
    let mut server = Endpoint::new(config, 1).unwrap();
    server
        .add_oscore_context(context(SECRET, b"S", b"C"))
        .unwrap();
    assert_eq!(
        server.add_oscore_context(context(SECRET, b"S", b"C")),
        Err(AddOscoreContextError::Duplicate)
    );
    assert_eq!(
        server.add_oscore_context(context(SECRET, b"S", b"D")),
        Err(AddOscoreContextError::Full)
    );
}

/// Notes the identity `AppContext::peer_identity` gives each request, and answers 2.05.
struct Identities(Rc<RefCell<Vec<Option<String>>>>);

impl App for Identities {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        if let Event::Request(id) = event {
            let request = cx.endpoint.request(id).unwrap();
            let identity = cx.peer_identity(&request).map(|i| i.to_string());
            self.0.borrow_mut().push(identity);
            let _ = cx
                .endpoint
                .respond(cx.now, id, &Response::new(Code::CONTENT));
        }
    }
}

#[test]
fn an_app_sees_the_oscore_kid_as_the_peer_identity() {
    let seen = Rc::default();
    let mut node = Node::new(server(), Lone(Identities(Rc::clone(&seen))));
    let host = &mut NullHost;
    node.start(Instant::ZERO, host);
    let mut client = context(SECRET, b"C", b"S");
    let (protected, _) = protect(&mut client, &plain_request(1, Code::GET, "who", b""));
    node.handle_datagram(
        Instant::ZERO,
        client_addr(),
        LocalAddr::UNICAST,
        &protected,
        host,
    );
    let plain = plain_request(2, Code::GET, "who", b"");
    node.handle_datagram(
        Instant::ZERO,
        client_addr(),
        LocalAddr::UNICAST,
        &plain,
        host,
    );
    assert_eq!(*seen.borrow(), [Some("oscore:43".to_string()), None]);
}

/// A plain CON GET of `path` carrying Echo `echo`.
fn plain_request_with_echo(mid: u16, path: &str, echo: &[u8]) -> Vec<u8> {
    let mut buf = vec![0; 256];
    let token = [0xAB, mid as u8];
    let mut encoder =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, mid, &token).unwrap();
    encoder
        .option(OptionNumber::URI_PATH, path.as_bytes())
        .unwrap();
    encoder.option(OptionNumber::ECHO, echo).unwrap();
    let len = encoder.finish();
    buf.truncate(len);
    buf
}

/// RFC 8613 Appendix B.1.2: a server whose context lost its replay window in a restart
/// answers a request, even a genuine one, with a protected 4.01 carrying Echo, sealed under
/// its own Partial IV (the request's nonce may be a replayed one); the request repeated with
/// that Echo is served and starts the window again, so what came before it is a replay.
#[test]
fn a_lost_replay_window_is_recovered_with_echo_and_replays_stay_refused() {
    let mut client = context(SECRET, b"C", b"S");
    let (before_restart, _) = protect(&mut client, &plain_request(1, Code::GET, "t", b""));
    let mut restarted = context(SECRET, b"S", b"C");
    restarted.forget_replay_window();
    let mut server = Endpoint::new(Config::default(), 1).unwrap();
    server.add_oscore_context(restarted).unwrap();

    let (first, id) = protect(&mut client, &plain_request(2, Code::GET, "t", b""));
    deliver(&mut server, &first);
    assert!(serve_one(&mut server).is_none(), "not served yet");
    let wire = sent(&mut server);
    let outer = Message::parse(&wire).unwrap();
    let option = covey_proto::covey_oscore::OscoreOption::parse(
        outer.option(OptionNumber::OSCORE).expect("protected"),
    )
    .unwrap();
    assert!(
        option.partial_iv.is_some(),
        "sealed under its own Partial IV"
    );
    let mut out = vec![0; 512];
    let len = client.unprotect_response(&outer, &id, &mut out).unwrap();
    let challenge = Message::parse(&out[..len]).unwrap();
    assert_eq!(challenge.code(), Code::UNAUTHORIZED);
    let echo = challenge.option(OptionNumber::ECHO).expect("Echo").to_vec();

    // A request from before the restart only earns a challenge, never service.
    deliver(&mut server, &before_restart);
    assert!(serve_one(&mut server).is_none());
    let _ = sent(&mut server);

    let (proven, id) = protect(&mut client, &plain_request_with_echo(3, "t", &echo));
    deliver(&mut server, &proven);
    assert!(serve_one(&mut server).is_some(), "served once proven fresh");
    let wire = sent(&mut server);
    let len = client
        .unprotect_response(&Message::parse(&wire).unwrap(), &id, &mut out)
        .unwrap();
    assert_eq!(Message::parse(&out[..len]).unwrap().code(), Code::CONTENT);

    // The window is known again: the old request and the proof are replays now.
    for (mid, stale) in [(10u16, &before_restart), (11, &proven)] {
        let mut copy = stale.clone();
        copy[2..4].copy_from_slice(&mid.to_be_bytes());
        deliver(&mut server, &copy);
        assert!(serve_one(&mut server).is_none());
        let refusal = sent(&mut server);
        let refusal = Message::parse(&refusal).unwrap();
        assert_eq!(refusal.code(), Code::UNAUTHORIZED);
        assert_eq!(refusal.payload(), b"Replay detected");
    }
    let (next, _) = protect(&mut client, &plain_request(4, Code::GET, "t", b""));
    deliver(&mut server, &next);
    assert!(serve_one(&mut server).is_some());
}

/// Contexts added only for sending (one per server a gateway asks) may share a Recipient ID,
/// and no request is verified with them: a request under such a context's kid is as unknown
/// as any other.
#[test]
fn sending_contexts_share_recipient_ids_and_verify_no_request() {
    let mut server = Endpoint::new(Config::default(), 1).unwrap();
    server
        .add_oscore_sending_context(context(SECRET, b"S", b"C"))
        .unwrap();
    server
        .add_oscore_sending_context(context(b"another secret!!", b"S", b"C"))
        .unwrap();
    let mut client = context(SECRET, b"C", b"S");
    let (protected, _) = protect(&mut client, &plain_request(9, Code::GET, "t", b""));
    deliver(&mut server, &protected);
    assert!(serve_one(&mut server).is_none());
    let refusal = sent(&mut server);
    let refusal = Message::parse(&refusal).unwrap();
    assert_eq!(refusal.code(), Code::UNAUTHORIZED);
    assert_eq!(refusal.payload(), b"Security context not found");
    // A serving context with that Recipient ID is still accepted beside them.
    server
        .add_oscore_context(context(SECRET, b"S", b"C"))
        .unwrap();
}

/// The blocks of `protected` split with outer Block1 options of 1 024 bytes (RFC 8613
/// §4.1.3.4.2, as a proxy would split it), each a CON with its own message ID.
fn outer_blocks(protected: &[u8]) -> Vec<Vec<u8>> {
    let whole = Message::parse(protected).unwrap();
    let payload = whole.payload();
    let chunks: Vec<&[u8]> = payload.chunks(1024).collect();
    chunks
        .iter()
        .enumerate()
        .map(|(num, chunk)| {
            let mut buf = vec![0; 1200];
            let mut encoder = MessageEncoder::new(
                &mut buf,
                MessageType::Confirmable,
                whole.code(),
                0x7000 + num as u16,
                whole.token_bytes(),
            )
            .unwrap();
            encoder
                .option(
                    OptionNumber::OSCORE,
                    whole.option(OptionNumber::OSCORE).unwrap(),
                )
                .unwrap();
            let more = num + 1 < chunks.len();
            let mut value = [0; 4];
            let block = Block::new(num as u32, more, 6).unwrap().encode(&mut value);
            encoder.option(OptionNumber::BLOCK1, block).unwrap();
            if num == 0 {
                encoder
                    .uint_option(OptionNumber::SIZE1, payload.len() as u32)
                    .unwrap();
            }
            encoder.payload(chunk).unwrap();
            let len = encoder.finish();
            buf.truncate(len);
            buf
        })
        .collect()
}

/// RFC 8613 §4.1.3.4.2: a protected request split into outer Block1 blocks is put together
/// before it is verified; each block but the last gets 2.31 Continue in the clear, and the
/// last the protected response, which acknowledges that block with an outer Block1.
#[test]
fn a_protected_request_in_outer_blocks_is_put_together_then_verified() {
    let mut server = server();
    let mut client = context(SECRET, b"C", b"S");
    let body = vec![b'o'; 2500];
    let mut plain = vec![0; 3000];
    let mut encoder =
        MessageEncoder::new(&mut plain, MessageType::Confirmable, Code::PUT, 1, &[0x0B]).unwrap();
    encoder.option(OptionNumber::URI_PATH, b"store").unwrap();
    encoder.payload(&body).unwrap();
    let len = encoder.finish();
    let mut out = vec![0; 3200];
    let (len, request) = client
        .protect_request(&Message::parse(&plain[..len]).unwrap(), &mut out)
        .unwrap();
    let blocks = outer_blocks(&out[..len]);
    assert_eq!(blocks.len(), 3);
    for (num, block) in blocks[..2].iter().enumerate() {
        deliver(&mut server, block);
        assert!(server.poll_event().is_none(), "nothing verified yet");
        let answer = sent(&mut server);
        let answer = Message::parse(&answer).unwrap();
        assert_eq!(answer.code(), Code::CONTINUE);
        assert!(!answer.has_option(OptionNumber::OSCORE), "in the clear");
        assert_eq!(answer.block1().map(|b| b.num), Some(num as u32));
    }
    deliver(&mut server, &blocks[2]);
    assert_eq!(serve_one(&mut server), Some(Some(b"C".to_vec())));
    // The answer is large for an address not verified yet: an empty ACK, then the answer.
    let mut buf = vec![0; 1500];
    let mut answers = Vec::new();
    while let Some(t) = server.poll_transmit(Instant::ZERO, &mut buf) {
        answers.push(buf[..t.size].to_vec());
    }
    let answer = answers
        .iter()
        .find(|a| Message::parse(a).unwrap().has_option(OptionNumber::OSCORE))
        .expect("a protected answer");
    let outer = Message::parse(answer).unwrap();
    assert_eq!(
        outer.block1(),
        Some(Block::new(2, false, 6).unwrap()),
        "the last block acknowledged"
    );
    let mut inner = vec![0; 4000];
    let len = client
        .unprotect_response(&outer, &request, &mut inner)
        .expect("the response verifies");
    let response = Message::parse(&inner[..len]).unwrap();
    assert_eq!(response.code(), Code::CONTENT);
    // The application saw the whole body; its long echo comes in inner Block2 blocks.
    let mut expected = b"echo:0.03:store:".to_vec();
    expected.extend_from_slice(&body);
    assert_eq!(response.block2(), Some(Block::new(0, true, 6).unwrap()));
    assert!(
        response.payload() == &expected[..1024],
        "the echo's first block"
    );
    assert_eq!(
        response.uint_option(OptionNumber::SIZE2),
        Some(expected.len() as u32)
    );
}

/// Outer blocks cost what Block1 uploads cost: a flood of first blocks of protected
/// requests that never complete holds at most `max_uploads` reassemblies; the rest are told
/// 5.03 in the clear, nothing reaches the application, and a whole request is still served.
#[test]
fn a_flood_of_unfinished_outer_blocks_holds_at_most_max_uploads() {
    let config = Config {
        max_uploads: 4,
        ..Config::default()
    };
    let mut server = Endpoint::new(config, 1).unwrap();
    server
        .add_oscore_context(context(SECRET, b"S", b"C"))
        .unwrap();
    let mut client = context(SECRET, b"C", b"S");
    let body = vec![b'f'; 2100];
    let mut continued = 0;
    let mut busy = 0;
    for n in 0..40u16 {
        let mut plain = vec![0; 2300];
        let mut encoder = MessageEncoder::new(
            &mut plain,
            MessageType::Confirmable,
            Code::PUT,
            n,
            &[n as u8],
        )
        .unwrap();
        encoder.option(OptionNumber::URI_PATH, b"store").unwrap();
        encoder.payload(&body).unwrap();
        let len = encoder.finish();
        let mut out = vec![0; 2400];
        let (len, _) = client
            .protect_request(&Message::parse(&plain[..len]).unwrap(), &mut out)
            .unwrap();
        let mut first = outer_blocks(&out[..len]).remove(0);
        // Each flood message a message ID of its own.
        first[2..4].copy_from_slice(&(0x1000 + n).to_be_bytes());
        deliver(&mut server, &first);
        let answer = sent(&mut server);
        match Message::parse(&answer).unwrap().code() {
            Code::CONTINUE => continued += 1,
            Code::SERVICE_UNAVAILABLE => busy += 1,
            other => panic!("{other:?}"),
        }
    }
    assert!(server.poll_event().is_none(), "nothing was verified");
    assert!(
        (1..=4).contains(&continued),
        "{continued} reassemblies held"
    );
    assert_eq!(continued + busy, 40);
    // A request that comes whole is still served.
    let (protected, _) = protect(&mut client, &plain_request(0x2000, Code::GET, "hello", b""));
    deliver(&mut server, &protected);
    assert_eq!(serve_one(&mut server), Some(Some(b"C".to_vec())));
}
