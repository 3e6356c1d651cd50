//! EDHOC Responder in the engine: a client runs message_1..3 against /.well-known/edhoc and
//! then talks OSCORE under the context the handshake set up, on virtual time.
#![cfg(feature = "edhoc")]

use covey_core::{Code, Message, MessageEncoder, OptionNumber};
use covey_proto::covey_edhoc::{
    Established, Initiator, InitiatorAwaitingMessage2, OwnIdentity, TrustedPeers,
};
use covey_proto::{
    opt, Config, EdhocConfig, Endpoint, Event, Instant, LocalAddr, Request, RequestParams, Response,
};
use std::net::SocketAddr;

const CRED_I: &str = "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7d37ecb52a387d257e6db3c2a93df21ff3affc8";
const I: &str = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b";
const CRED_R: &str = "a2026008a101a5010202410a2001215820bbc34960526ea4d32e940cad2a234148ddc21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eabf6072";
const R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn addr(n: u8) -> SocketAddr {
    SocketAddr::from(([192, 0, 2, n], 5683))
}

fn server(max_sessions: usize, trusting: &str) -> Endpoint {
    server_with(Config::default(), max_sessions, trusting)
}

/// [`server`] with `config`.
fn server_with(config: Config, max_sessions: usize, trusting: &str) -> Endpoint {
    let mut server = Endpoint::new(config, 2).unwrap();
    server.enable_edhoc(EdhocConfig {
        own: OwnIdentity::new(&unhex(CRED_R), &unhex(R)).unwrap(),
        trusted: TrustedPeers::new([unhex(trusting).as_slice()]).unwrap(),
        max_sessions,
    });
    server
}

fn initiator() -> OwnIdentity {
    OwnIdentity::new(&unhex(CRED_I), &unhex(I)).unwrap()
}

/// Moves every queued datagram from `from` (at `from_addr`) to `to`.
fn carry(now: Instant, from: &mut Endpoint, from_addr: SocketAddr, to: &mut Endpoint) {
    let mut buf = vec![0; 1500];
    while let Some(t) = from.poll_transmit(now, &mut buf) {
        to.handle_datagram(now, from_addr, LocalAddr::UNICAST, &buf[..t.size]);
    }
}

/// The payload of the last response `client` announced, if any.
fn last_payload(client: &mut Endpoint) -> Option<Vec<u8>> {
    let mut got = None;
    while let Some(event) = client.poll_event() {
        if let Event::Response { key, .. } = event {
            got = Some(client.response(key).unwrap().payload().to_vec());
        }
    }
    got
}

/// POSTs `payload` to /.well-known/edhoc and returns the response's code and payload.
fn post_edhoc(
    now: Instant,
    client: &mut Endpoint,
    server: &mut Endpoint,
    payload: &[u8],
) -> (Code, Vec<u8>) {
    let options = [
        opt(OptionNumber::URI_PATH, b".well-known"),
        opt(OptionNumber::URI_PATH, b"edhoc"),
    ];
    let request = Request {
        options: &options,
        payload,
        ..Request::new(Code::POST)
    };
    client
        .send_request(now, addr(2), &request, RequestParams::default())
        .unwrap();
    carry(now, client, addr(1), server);
    assert!(server.poll_event().is_none(), "EDHOC never reaches the app");
    carry(now, server, addr(2), client);
    while let Some(event) = client.poll_event() {
        if let Event::Response { key, .. } = event {
            let r = client.response(key).unwrap();
            return (r.message.code(), r.payload().to_vec());
        }
    }
    panic!("no response to the EDHOC request");
}

fn start(
    now: Instant,
    client: &mut Endpoint,
    server: &mut Endpoint,
) -> (InitiatorAwaitingMessage2, (Code, Vec<u8>)) {
    start_offering(now, client, server, |_| true)
}

/// [`start`] with a C_I (drawn at random by the Initiator) that `wanted` accepts.
fn start_offering(
    now: Instant,
    client: &mut Endpoint,
    server: &mut Endpoint,
    wanted: impl Fn(&[u8]) -> bool,
) -> (InitiatorAwaitingMessage2, (Code, Vec<u8>)) {
    let (initiator, payload_1) = (0..10_000)
        .map(|_| Initiator::start(&initiator()).unwrap())
        .find(|(initiator, _)| wanted(initiator.c_i()))
        .expect("a C_I out of 48 comes up in 10 000 draws");
    let answer = post_edhoc(now, client, server, &payload_1);
    (initiator, answer)
}

fn handshake(now: Instant, client: &mut Endpoint, server: &mut Endpoint) -> Established {
    handshake_offering(now, client, server, |_| true)
}

/// [`handshake`] with a C_I that `wanted` accepts.
fn handshake_offering(
    now: Instant,
    client: &mut Endpoint,
    server: &mut Endpoint,
    wanted: impl Fn(&[u8]) -> bool,
) -> Established {
    let (initiator, (code, message_2)) = start_offering(now, client, server, wanted);
    assert_eq!(code, Code::CHANGED);
    let trusted = TrustedPeers::new([unhex(CRED_R).as_slice()]).unwrap();
    let (payload_3, awaiting) = initiator.receive_message_2(&message_2, &trusted).unwrap();
    let (code, message_4) = post_edhoc(now, client, server, &payload_3);
    assert_eq!(code, Code::CHANGED);
    // message_4 answers message_3 and verifies at the Initiator (RFC 9528 §5.5).
    awaiting.receive_message_4(&message_4).unwrap()
}

/// `datagram` with the EDHOC option (RFC 9668 §3.1) and `message_3` before its payload: an
/// EDHOC + OSCORE request made of a protected one.
fn combined(datagram: &[u8], message_3: &[u8]) -> Vec<u8> {
    let m = Message::parse(datagram).unwrap();
    let mut out = vec![0; datagram.len() + message_3.len() + 8];
    let mut encoder = MessageEncoder::new(
        &mut out,
        m.message_type(),
        m.code(),
        m.message_id(),
        m.token_bytes(),
    )
    .unwrap();
    let mut edhoc_written = false;
    for o in m.options() {
        if !edhoc_written && o.number > OptionNumber::EDHOC {
            encoder.option(OptionNumber::EDHOC, &[]).unwrap();
            edhoc_written = true;
        }
        encoder.option(o.number, o.value).unwrap();
    }
    if !edhoc_written {
        encoder.option(OptionNumber::EDHOC, &[]).unwrap();
    }
    let payload: Vec<u8> = message_3.iter().chain(m.payload()).copied().collect();
    encoder.payload(&payload).unwrap();
    let len = encoder.finish();
    out.truncate(len);
    out
}

/// RFC 9668 §3.3.1: message_3 travels in the first OSCORE request (aiocoap's default); the
/// server completes the handshake with it, verifies the rest as an OSCORE request under the
/// new context, and the protected response confirms the key without message_4. The same
/// request again (a replay under a new message ID) finds no session and gets 4.00.
#[test]
fn an_edhoc_and_oscore_request_completes_the_handshake_and_is_served() {
    let now = Instant::ZERO;
    let (mut client, mut server) = (
        Endpoint::new(Config::default(), 1).unwrap(),
        server(4, CRED_I),
    );
    let (initiator, (code, message_2)) = start(now, &mut client, &mut server);
    assert_eq!(code, Code::CHANGED);
    let trusted = TrustedPeers::new([unhex(CRED_R).as_slice()]).unwrap();
    let (_, awaiting) = initiator.receive_message_2(&message_2, &trusted).unwrap();
    let message_3 = awaiting.message_3().to_vec();
    let established = awaiting.complete_without_message_4().unwrap();
    let context = client
        .add_oscore_context(established.security_context().unwrap())
        .unwrap();
    let options = [opt(OptionNumber::URI_PATH, b"secret")];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    client
        .send_protected_request(now, addr(2), &request, RequestParams::default(), context)
        .unwrap();
    let mut buf = vec![0; 1500];
    let t = client.poll_transmit(now, &mut buf).unwrap();
    let request = combined(&buf[..t.size], &message_3);
    server.handle_datagram(now, addr(1), LocalAddr::UNICAST, &request);
    let Some(Event::Request(id)) = server.poll_event() else {
        panic!("the combined request did not verify");
    };
    let received = server.request(id).unwrap();
    assert_eq!(received.edhoc_kid, Some("2b"));
    assert_eq!(received.message.option(OptionNumber::EDHOC), None);
    server
        .respond(now, id, &Response::with_payload(Code::CONTENT, b"for 2b"))
        .unwrap();
    carry(now, &mut server, addr(2), &mut client);
    assert_eq!(last_payload(&mut client).as_deref(), Some(&b"for 2b"[..]));

    // A replay of it under a new message ID: the session is gone.
    let mut replay = request.clone();
    replay[2] ^= 0xFF;
    server.handle_datagram(now, addr(1), LocalAddr::UNICAST, &replay);
    assert!(server.poll_event().is_none());
    let t = server.poll_transmit(now, &mut buf).unwrap();
    let answer = Message::parse(&buf[..t.size]).unwrap();
    assert_eq!(answer.code(), Code::BAD_REQUEST);
    assert_eq!(answer.payload(), b"no EDHOC session with this C_R");
}

/// A combined request whose payload does not start with a CBOR byte string, or whose
/// message_3 does not verify, is refused before OSCORE and adds no context.
#[test]
fn a_malformed_edhoc_and_oscore_request_is_refused() {
    let now = Instant::ZERO;
    let (mut client, mut server) = (
        Endpoint::new(Config::default(), 1).unwrap(),
        server(4, CRED_I),
    );
    let (initiator, (_, message_2)) = start(now, &mut client, &mut server);
    let trusted = TrustedPeers::new([unhex(CRED_R).as_slice()]).unwrap();
    let (_, awaiting) = initiator.receive_message_2(&message_2, &trusted).unwrap();
    let mut message_3 = awaiting.message_3().to_vec();
    let established = awaiting.complete_without_message_4().unwrap();
    let context = client
        .add_oscore_context(established.security_context().unwrap())
        .unwrap();
    let mut buf = vec![0; 1500];
    let mut protected = || {
        let id = client
            .send_protected_request(
                now,
                addr(2),
                &Request::new(Code::GET),
                RequestParams::default(),
                context,
            )
            .unwrap();
        let t = client.poll_transmit(now, &mut buf).unwrap();
        // Only its bytes are wanted: the next request need not wait for it (NSTART).
        client.cancel(now, id);
        buf[..t.size].to_vec()
    };
    let not_cbor = combined(&protected(), &[0x01]);
    let last = message_3.len() - 1;
    message_3[last] ^= 1;
    let corrupt = combined(&protected(), &message_3);
    let mut out = vec![0; 1500];
    for (request, diagnostic) in [
        (not_cbor, "message_3 must be a CBOR byte string"),
        (corrupt, "EDHOC message_3 failed"),
    ] {
        server.handle_datagram(now, addr(1), LocalAddr::UNICAST, &request);
        assert!(server.poll_event().is_none());
        let t = server.poll_transmit(now, &mut out).unwrap();
        let answer = Message::parse(&out[..t.size]).unwrap();
        assert_eq!(answer.code(), Code::BAD_REQUEST);
        let text = String::from_utf8_lossy(answer.payload()).into_owned();
        assert!(text.contains(diagnostic), "{text}");
    }
}

#[test]
fn a_handshake_lets_the_client_talk_oscore() {
    let now = Instant::ZERO;
    let (mut client, mut server) = (
        Endpoint::new(Config::default(), 1).unwrap(),
        server(4, CRED_I),
    );
    let established = handshake(now, &mut client, &mut server);
    assert_eq!(established.peer_kid, "0a");
    assert_eq!(server.edhoc_peer_kid(&established.sender_id), Some("2b"));

    let context = client
        .add_oscore_context(established.security_context().unwrap())
        .unwrap();
    let options = [opt(OptionNumber::URI_PATH, b"secret")];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    client
        .send_protected_request(now, addr(2), &request, RequestParams::default(), context)
        .unwrap();
    carry(now, &mut client, addr(1), &mut server);
    let Some(Event::Request(id)) = server.poll_event() else {
        panic!("the protected request did not verify");
    };
    let received = server.request(id).unwrap();
    // Requests under the context carry the identity of the credential, not the C_R.
    assert_eq!(received.edhoc_kid, Some("2b"));
    assert_eq!(
        covey_proto::PeerIdentity::Edhoc("2b".into()).to_string(),
        "edhoc:2b"
    );
    assert_eq!(
        received.message.option(OptionNumber::URI_PATH),
        Some(&b"secret"[..])
    );
    server
        .respond(now, id, &Response::with_payload(Code::CONTENT, b"for 2b"))
        .unwrap();
    carry(now, &mut server, addr(2), &mut client);
    assert_eq!(last_payload(&mut client).as_deref(), Some(&b"for 2b"[..]));
}

#[test]
fn an_untrusted_initiator_gets_4_00_saying_why() {
    let now = Instant::ZERO;
    let (mut client, mut server) = (
        Endpoint::new(Config::default(), 1).unwrap(),
        server(4, CRED_R),
    );
    let (initiator, (_, message_2)) = start(now, &mut client, &mut server);
    let trusted = TrustedPeers::new([unhex(CRED_R).as_slice()]).unwrap();
    let (payload_3, _) = initiator.receive_message_2(&message_2, &trusted).unwrap();
    let (code, diagnostic) = post_edhoc(now, &mut client, &mut server, &payload_3);
    assert_eq!(code, Code::BAD_REQUEST);
    assert_eq!(diagnostic, b"EDHOC peer credential kid 2b is not trusted");
}

#[test]
fn a_flood_of_message_1_gets_5_03_until_sessions_expire() {
    let mut now = Instant::ZERO;
    let (mut client, mut server) = (
        Endpoint::new(Config::default(), 1).unwrap(),
        server(2, CRED_I),
    );
    for _ in 0..2 {
        assert_eq!(start(now, &mut client, &mut server).1 .0, Code::CHANGED);
    }
    let (code, diagnostic) = start(now, &mut client, &mut server).1;
    assert_eq!(code, Code::SERVICE_UNAVAILABLE);
    assert_eq!(diagnostic, b"too many EDHOC sessions in progress");
    // Abandoned sessions make room after EXCHANGE_LIFETIME.
    now = now + Config::default().transmission.exchange_lifetime();
    assert_eq!(start(now, &mut client, &mut server).1 .0, Code::CHANGED);
}

#[test]
fn malformed_requests_get_4_00() {
    let now = Instant::ZERO;
    let (mut client, mut server) = (
        Endpoint::new(Config::default(), 1).unwrap(),
        server(2, CRED_I),
    );
    let (code, diagnostic) = post_edhoc(now, &mut client, &mut server, &[0xa0]);
    assert_eq!(code, Code::BAD_REQUEST);
    assert!(String::from_utf8(diagnostic).unwrap().contains("malformed"));
    let (code, diagnostic) = post_edhoc(now, &mut client, &mut server, &[0x05, 0x01]);
    assert_eq!(
        (code, &diagnostic[..]),
        (Code::BAD_REQUEST, &b"no EDHOC session with this C_R"[..])
    );
    let (code, _) = post_edhoc(now, &mut client, &mut server, &[0xf5, 0xff, 0x00]);
    assert_eq!(code, Code::BAD_REQUEST);
}

/// GETs /secret from `client` under `context` and returns the server's answer code: 2.05 when
/// the server still holds the context, or its refusal.
fn ask(
    now: Instant,
    client: &mut Endpoint,
    context: covey_proto::OscoreContextId,
    server: &mut Endpoint,
) -> Code {
    let options = [opt(OptionNumber::URI_PATH, b"secret")];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    client
        .send_protected_request(now, addr(2), &request, RequestParams::default(), context)
        .unwrap();
    carry(now, client, addr(1), server);
    while let Some(event) = server.poll_event() {
        if let Event::Request(id) = event {
            server
                .respond(now, id, &Response::with_payload(Code::CONTENT, b"ok"))
                .unwrap();
        }
    }
    carry(now, server, addr(2), client);
    let mut code = None;
    while let Some(event) = client.poll_event() {
        if let Event::Response { key, .. } = event {
            code = Some(client.response(key).unwrap().message.code());
        }
    }
    code.expect("an answer")
}

/// A server full of EDHOC contexts makes room for a new session by giving up the context that
/// verified a request least recently: its client is refused from then on (4.01, the context
/// is gone), the others go on.
#[test]
fn a_new_session_replaces_the_least_recently_used_edhoc_context() {
    let now = Instant::ZERO;
    let config = Config {
        max_oscore_contexts: 3,
        ..Config::default()
    };
    let mut server = server_with(config, 4, CRED_I);
    let mut clients = Vec::new();
    for n in 0..3 {
        let mut client = Endpoint::new(Config::default(), 10 + n).unwrap();
        let established = handshake(now, &mut client, &mut server);
        let context = client
            .add_oscore_context(established.security_context().unwrap())
            .unwrap();
        clients.push((client, context));
    }
    // The first and third are used; the second is the least recent.
    for n in [0, 2] {
        let (client, context) = &mut clients[n];
        assert_eq!(ask(now, client, *context, &mut server), Code::CONTENT);
    }
    let mut fourth = Endpoint::new(Config::default(), 20).unwrap();
    let established = handshake(now, &mut fourth, &mut server);
    let context = fourth
        .add_oscore_context(established.security_context().unwrap())
        .unwrap();
    assert_eq!(ask(now, &mut fourth, context, &mut server), Code::CONTENT);
    let answers: Vec<Code> = clients
        .iter_mut()
        .map(|(client, context)| ask(now, client, *context, &mut server))
        .collect();
    assert_eq!(
        answers,
        [Code::CONTENT, Code::UNAUTHORIZED, Code::CONTENT],
        "the second's context made room"
    );
}

/// All 48 one-byte C_Rs taken by contexts: the 49th session takes over the C_R of the one used
/// least recently, and completes.
#[test]
fn a_49th_session_takes_over_the_least_recently_used_connection_identifier() {
    let now = Instant::ZERO;
    let (mut client, mut server, ids) = every_c_r_taken(now);
    let first = ids[0].clone();
    let established = handshake_offering(now, &mut client, &mut server, |c_i| {
        ids[1..].iter().any(|id| id == c_i)
    });
    assert_eq!(
        established.sender_id, first,
        "the least recently used C_R, the first"
    );
    assert_eq!(server.edhoc_peer_kid(&first), Some("2b"));
}

/// The C_R used least recently is the 49th Initiator's own C_I, which C_R must differ from
/// (RFC 9528 §3.3.2): the session takes over the next least recently used one.
#[test]
fn a_49th_session_whose_c_i_is_the_oldest_c_r_takes_over_the_next_one() {
    let now = Instant::ZERO;
    let (mut client, mut server, ids) = every_c_r_taken(now);
    let established = handshake_offering(now, &mut client, &mut server, |c_i| c_i == ids[0]);
    assert_eq!(established.sender_id, ids[1], "the second oldest C_R");
    assert_eq!(server.edhoc_peer_kid(&ids[1]), Some("2b"));
}

/// A client and a server whose contexts hold all 48 one-byte C_Rs, and those C_Rs oldest first.
fn every_c_r_taken(now: Instant) -> (Endpoint, Endpoint, Vec<Vec<u8>>) {
    // Room for more contexts than there are one-byte C_Rs.
    let config = Config {
        max_oscore_contexts: 64,
        ..Config::default()
    };
    let mut server = server_with(config, 4, CRED_I);
    let mut client = Endpoint::new(Config::default(), 1).unwrap();
    let mut ids: Vec<Vec<u8>> = Vec::new();
    for _ in 0..48 {
        // The last free C_R must not be C_I: offer one already taken.
        let wanted = |c_i: &[u8]| ids.len() < 47 || ids.iter().any(|id| id == c_i);
        let established = handshake_offering(now, &mut client, &mut server, wanted);
        ids.push(established.sender_id);
    }
    (client, server, ids)
}

/// The engine's own EDHOC + OSCORE request (RFC 9668 §3.2): the first message carries the
/// EDHOC option and message_3 before its ciphertext, the server completes the handshake and
/// serves it, and the verified answer reaches the client; later requests are plain OSCORE.
#[test]
fn the_client_sends_message_3_in_its_first_oscore_request() {
    let now = Instant::ZERO;
    let (mut client, mut server) = (
        Endpoint::new(Config::default(), 1).unwrap(),
        server(4, CRED_I),
    );
    let (initiator, (_, message_2)) = start(now, &mut client, &mut server);
    let trusted = TrustedPeers::new([unhex(CRED_R).as_slice()]).unwrap();
    let (_, awaiting) = initiator.receive_message_2(&message_2, &trusted).unwrap();
    let message_3 = awaiting.message_3().to_vec();
    let established = awaiting.complete_without_message_4().unwrap();
    let context = client
        .add_oscore_context(established.security_context().unwrap())
        .unwrap();
    let options = [opt(OptionNumber::URI_PATH, b"secret")];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    let mut buf = vec![0; 1500];
    for first in [true, false] {
        let params = RequestParams::default();
        if first {
            client
                .send_edhoc_oscore_request(now, addr(2), &request, params, (context, &message_3))
                .unwrap();
        } else {
            client
                .send_protected_request(now, addr(2), &request, params, context)
                .unwrap();
        }
        let t = client.poll_transmit(now, &mut buf).unwrap();
        let sent = Message::parse(&buf[..t.size]).unwrap();
        assert_eq!(sent.has_option(OptionNumber::EDHOC), first);
        assert_eq!(sent.payload().starts_with(&message_3), first);
        server.handle_datagram(now, addr(1), LocalAddr::UNICAST, &buf[..t.size]);
        let Some(Event::Request(id)) = server.poll_event() else {
            panic!("the request did not verify");
        };
        assert_eq!(server.request(id).unwrap().edhoc_kid, Some("2b"));
        server
            .respond(now, id, &Response::with_payload(Code::CONTENT, b"for 2b"))
            .unwrap();
        carry(now, &mut server, addr(2), &mut client);
        assert_eq!(last_payload(&mut client).as_deref(), Some(&b"for 2b"[..]));
    }
}
