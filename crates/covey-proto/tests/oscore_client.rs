//! OSCORE on the client side: a request sent protected with a context reaches an OSCORE
//! server as its inner request, and only a response that verifies reaches the application.
#![cfg(feature = "oscore")]

use covey_core::{Code, Message, OptionNumber};
use covey_proto::covey_oscore::{ContextInput, SecurityContext};
use covey_proto::{
    opt, Config, Endpoint, Event, Failure, Instant, LocalAddr, OscoreContextId, Request,
    RequestError, RequestParams, Response,
};
use std::net::SocketAddr;

const SECRET: &[u8] = b"a shared secret!";

fn context(secret: &[u8], sender_id: &[u8], recipient_id: &[u8]) -> SecurityContext {
    SecurityContext::derive(&ContextInput {
        master_secret: secret,
        master_salt: &[],
        sender_id,
        recipient_id,
        id_context: None,
    })
    .unwrap()
}

fn addr(n: u8) -> SocketAddr {
    SocketAddr::from(([192, 0, 2, n], 5683))
}

/// A client and a server, each with its side of a context; the client's under `secret`.
fn pair(secret: &[u8]) -> (Endpoint, OscoreContextId, Endpoint) {
    let mut client = Endpoint::new(Config::default(), 1).unwrap();
    let id = client
        .add_oscore_context(context(secret, b"C", b"S"))
        .unwrap();
    let mut server = Endpoint::new(Config::default(), 2).unwrap();
    server
        .add_oscore_context(context(SECRET, b"S", b"C"))
        .unwrap();
    (client, id, server)
}

/// Moves every queued datagram from `from` (at `from_addr`) to `to`; returns them.
fn carry(from: &mut Endpoint, from_addr: SocketAddr, to: &mut Endpoint) -> Vec<Vec<u8>> {
    let mut carried = Vec::new();
    let mut buf = vec![0; 1500];
    while let Some(t) = from.poll_transmit(Instant::ZERO, &mut buf) {
        to.handle_datagram(Instant::ZERO, from_addr, LocalAddr::UNICAST, &buf[..t.size]);
        carried.push(buf[..t.size].to_vec());
    }
    carried
}

/// Answers each request 2.05 with "inner <method> <path>: <payload>".
fn answer_all(server: &mut Endpoint) {
    while let Some(event) = server.poll_event() {
        let Event::Request(id) = event else { continue };
        let request = server.request(id).unwrap();
        let path = String::from_utf8_lossy(
            request
                .message
                .option(OptionNumber::URI_PATH)
                .unwrap_or(&[]),
        )
        .into_owned();
        let code = request.message.code();
        let text = format!(
            "inner {}.{:02} {path}: {}",
            code.class(),
            code.detail(),
            String::from_utf8_lossy(request.payload())
        );
        let response = Response::with_payload(Code::CONTENT, text.as_bytes());
        server.respond(Instant::ZERO, id, &response).unwrap();
    }
}

/// The client's events: (code, payload) of each response, or the failure.
fn outcome(client: &mut Endpoint) -> Vec<Result<(Code, Vec<u8>), Failure>> {
    let mut seen = Vec::new();
    while let Some(event) = client.poll_event() {
        match event {
            Event::Response { key, .. } => {
                let r = client.response(key).unwrap();
                seen.push(Ok((r.message.code(), r.payload().to_vec())));
            }
            Event::Failed { failure, .. } => seen.push(Err(failure)),
            _ => {}
        }
    }
    seen
}

#[test]
fn a_protected_request_is_answered_and_its_response_verified() {
    let (mut client, id, mut server) = pair(SECRET);
    let options = [opt(OptionNumber::URI_PATH, b"echo")];
    let request = Request {
        options: &options,
        payload: b"hidden",
        ..Request::new(Code::PUT)
    };
    client
        .send_protected_request(
            Instant::ZERO,
            addr(2),
            &request,
            RequestParams::default(),
            id,
        )
        .unwrap();
    let sent = carry(&mut client, addr(1), &mut server);
    let outer = Message::parse(&sent[0]).unwrap();
    assert_eq!(outer.code(), Code::POST, "PUT hidden as POST");
    assert!(
        !outer.has_option(OptionNumber::URI_PATH),
        "Uri-Path is inner"
    );
    answer_all(&mut server);
    carry(&mut server, addr(2), &mut client);
    assert_eq!(
        outcome(&mut client),
        [Ok((Code::CONTENT, b"inner 0.03 echo: hidden".to_vec()))]
    );
}

#[test]
fn a_request_under_the_wrong_key_gets_the_servers_unprotected_4_00() {
    let (mut client, id, mut server) = pair(b"another secret!!");
    let request = Request::new(Code::GET);
    client
        .send_protected_request(
            Instant::ZERO,
            addr(2),
            &request,
            RequestParams::default(),
            id,
        )
        .unwrap();
    carry(&mut client, addr(1), &mut server);
    assert!(server.poll_event().is_none());
    carry(&mut server, addr(2), &mut client);
    assert_eq!(
        outcome(&mut client),
        [Ok((Code::BAD_REQUEST, b"Decryption failed".to_vec()))]
    );
}

#[test]
fn an_unprotected_success_or_a_tampered_response_fails_the_request() {
    for tamper in [false, true] {
        let (mut client, id, mut server) = pair(SECRET);
        client
            .send_protected_request(
                Instant::ZERO,
                addr(2),
                &Request::new(Code::GET),
                RequestParams::default(),
                id,
            )
            .unwrap();
        let sent = carry(&mut client, addr(1), &mut server);
        let request = Message::parse(&sent[0]).unwrap();
        let mut forged = if tamper {
            answer_all(&mut server);
            let mut buf = vec![0; 1500];
            let t = server.poll_transmit(Instant::ZERO, &mut buf).unwrap();
            buf.truncate(t.size);
            buf
        } else {
            // A plain 2.05 in the ACK, as an attacker on the path could send.
            let mut buf = vec![0; 64];
            let mut encoder = covey_core::MessageEncoder::new(
                &mut buf,
                covey_core::MessageType::Acknowledgement,
                Code::CONTENT,
                request.message_id(),
                request.token_bytes(),
            )
            .unwrap();
            encoder.payload(b"forged").unwrap();
            let len = encoder.finish();
            buf.truncate(len);
            buf
        };
        if tamper {
            let last = forged.len() - 1;
            forged[last] ^= 1;
        }
        client.handle_datagram(Instant::ZERO, addr(2), LocalAddr::UNICAST, &forged);
        assert_eq!(
            outcome(&mut client),
            [Err(Failure::UnverifiedResponse)],
            "tampered: {tamper}"
        );
    }
}

#[test]
fn observe_block_wise_and_unknown_contexts_are_refused() {
    let (mut client, id, _) = pair(SECRET);
    let observe = [opt(OptionNumber::OBSERVE, &[])];
    let large = vec![b'x'; 4096];
    let requests = [
        Request {
            options: &observe,
            ..Request::new(Code::GET)
        },
        Request {
            payload: &large,
            ..Request::new(Code::PUT)
        },
    ];
    for request in &requests {
        assert_eq!(
            client.send_protected_request(
                Instant::ZERO,
                addr(2),
                request,
                RequestParams::default(),
                id
            ),
            Err(RequestError::Oscore)
        );
    }
    let mut other = Endpoint::new(Config::default(), 3).unwrap();
    assert_eq!(
        other.send_protected_request(
            Instant::ZERO,
            addr(2),
            &Request::new(Code::GET),
            RequestParams::default(),
            id
        ),
        Err(RequestError::Oscore),
        "a context id of another endpoint"
    );
}

/// RFC 8613 Appendix B.1.2: against a server that lost its replay window, the client's
/// request earns a protected 4.01 with Echo; the engine repeats it with that Echo under a
/// new Partial IV by itself, and the application sees only the final answer.
#[test]
fn a_servers_echo_challenge_after_a_restart_is_answered_transparently() {
    let mut client = Endpoint::new(Config::default(), 1).unwrap();
    let id = client
        .add_oscore_context(context(SECRET, b"C", b"S"))
        .unwrap();
    let mut restarted = context(SECRET, b"S", b"C");
    restarted.forget_replay_window();
    let mut server = Endpoint::new(Config::default(), 2).unwrap();
    server.add_oscore_context(restarted).unwrap();

    let options = [opt(OptionNumber::URI_PATH, b"temp")];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    client
        .send_protected_request(
            Instant::ZERO,
            addr(2),
            &request,
            RequestParams::default(),
            id,
        )
        .unwrap();
    let first = carry(&mut client, addr(1), &mut server);
    assert_eq!(first.len(), 1);
    answer_all(&mut server);
    carry(&mut server, addr(2), &mut client);
    let repeated = carry(&mut client, addr(1), &mut server);
    assert_eq!(repeated.len(), 1, "the request goes again by itself");
    assert_ne!(
        Message::parse(&repeated[0])
            .unwrap()
            .option(OptionNumber::OSCORE),
        Message::parse(&first[0])
            .unwrap()
            .option(OptionNumber::OSCORE),
        "under a new Partial IV"
    );
    answer_all(&mut server);
    carry(&mut server, addr(2), &mut client);
    assert_eq!(
        outcome(&mut client),
        [Ok((Code::CONTENT, b"inner 0.01 temp: ".to_vec()))]
    );
    assert_eq!(client.stats().echo_retries, 1);
}
