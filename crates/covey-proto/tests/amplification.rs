//! Echo against amplification (RFC 9175 §2.4) on virtual time: what a spoofed request makes
//! the server send, and that a client answering Echo still gets everything.

mod support;

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{
    opt, AmplificationLimit, App, AppContext, Config, Duration, Endpoint, Event, Instant, Request,
    RequestParams, Response,
};
use std::cell::RefCell;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::rc::Rc;
use std::sync::atomic::{AtomicU16, Ordering};
use support::{addr, FnApp, Network};

/// Size of the `/large` representation: more than one 1 024-byte block.
const LARGE: usize = 1100;

/// Size of `/fit`: its answer is exactly three times an 8-byte GET of it.
const FIT: usize = 19;

/// A server with `/large` (1 100 bytes), `/fit` (19 bytes), `/tagged` (the same with an 8-byte ETag) and an
/// observable `/time`.
fn server_app() -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    let body: Vec<u8> = (0..LARGE).map(|i| (i % 251) as u8).collect();
    Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        let Event::Request(id) = ev else { return };
        let path: Vec<u8> = ep
            .request(id)
            .unwrap()
            .message
            .options()
            .filter(|o| o.number == OptionNumber::URI_PATH)
            .flat_map(|o| o.value.to_vec())
            .collect();
        if path == b"time" {
            let response = Response::with_payload(Code::CONTENT, b"12:00:00");
            let _ = ep.respond_observable(now, id, 1, &response);
        } else if path == b"fit" {
            let response = Response::with_payload(Code::CONTENT, &body[..FIT]);
            ep.respond(now, id, &response).unwrap();
        } else if path == b"tagged" {
            let options = [opt(OptionNumber::ETAG, b"8-bytes!")];
            let response = Response {
                code: Code::CONTENT,
                options: &options,
                payload: &body,
            };
            ep.respond(now, id, &response).unwrap();
        } else {
            ep.respond(now, id, &Response::with_payload(Code::CONTENT, &body))
                .unwrap();
        }
    }))
}

/// A request as an attacker writes it: NON, no token, one Uri-Path, optional Observe and
/// Echo; each with a message ID of its own.
fn raw_get(path: &str, observe: bool, echo: Option<&[u8]>) -> Vec<u8> {
    raw_get_with_token(path, &[], observe, echo)
}

/// [`raw_get`] with a token.
fn raw_get_with_token(path: &str, token: &[u8], observe: bool, echo: Option<&[u8]>) -> Vec<u8> {
    static NEXT_MID: AtomicU16 = AtomicU16::new(1);
    let mid = NEXT_MID.fetch_add(1, Ordering::Relaxed);
    let mut buf = [0u8; 128];
    let mut enc = MessageEncoder::new(&mut buf, MessageType::NonConfirmable, Code::GET, mid, token)
        .expect("header");
    if observe {
        enc.option(OptionNumber::OBSERVE, &[]).expect("observe");
    }
    enc.option(OptionNumber::URI_PATH, path.as_bytes())
        .expect("path");
    if let Some(value) = echo {
        enc.option(OptionNumber::ECHO, value).expect("echo");
    }
    let n = enc.finish();
    buf[..n].to_vec()
}

/// Bytes `net`'s node `from` sent to `to`, and the datagrams themselves.
fn sent_to(net: &Network, from: SocketAddr, to: SocketAddr) -> (usize, Vec<Vec<u8>>) {
    let datagrams: Vec<Vec<u8>> = net
        .sent_by(from)
        .into_iter()
        .filter(|s| s.to == to)
        .map(|s| s.bytes.clone())
        .collect();
    (datagrams.iter().map(Vec::len).sum(), datagrams)
}

fn victim() -> SocketAddr {
    SocketAddr::new(
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0xbad, 0, 0, 0, 0, 1)),
        40_000,
    )
}

fn network_with_server(config: Config) -> (Network, usize) {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let server = net.add(addr(2), config, 2, Some(server_app()));
    (net, server)
}

/// Whether `datagram` is a CoAP ping (an Empty CON).
fn is_ping(datagram: &[u8]) -> bool {
    Message::parse(datagram)
        .is_ok_and(|m| m.message_type() == MessageType::Confirmable && m.code() == Code::EMPTY)
}

/// Injects `request` from the victim into a default server and returns the one response
/// the victim got (all it got checked to be within three times the request) and the
/// server's `echo_challenges`. A response too large for the budget is held while a ping
/// checks the address; the victim never answers it, and the response goes cut.
fn spoof_once(request: &[u8]) -> (Vec<u8>, u64) {
    let (mut net, server) = network_with_server(Config::default());
    net.inject(victim(), server, request);
    net.run_for(Duration::from_secs(10));
    let (bytes, mut datagrams) = sent_to(&net, addr(2), victim());
    assert!(
        bytes <= 3 * request.len(),
        "{bytes} bytes for {}",
        request.len()
    );
    if datagrams.len() == 2 && is_ping(&datagrams[0]) {
        datagrams.remove(0);
    }
    assert_eq!(datagrams.len(), 1);
    let challenges = net.nodes[server].endpoint.stats().echo_challenges;
    (datagrams[0].clone(), challenges)
}

#[test]
fn a_spoofed_get_of_a_large_resource_draws_at_most_three_times_its_size() {
    let request = raw_get("large", false, None);
    assert_eq!(request.len(), 10, "the issue's 10-byte GET");
    // One 16-byte block, too small a message for an Echo value too: a client that does not
    // know Echo continues block-wise.
    let (datagram, challenges) = spoof_once(&request);
    let reply = Message::parse(&datagram).unwrap();
    let block = reply.block2().expect("Block2");
    assert_eq!(
        (reply.code(), block.num, block.more, reply.payload().len()),
        (Code::CONTENT, 0, true, 16)
    );
    assert!(reply.option(OptionNumber::ECHO).is_none());
    assert_eq!(challenges, 0);
}

#[test]
fn an_answer_exactly_within_the_budget_goes_whole_without_echo() {
    // An 8-byte GET of /fit: a budget of 24 bytes, which its 19-byte body fills exactly
    // (4-byte header and the payload marker), with no room for block options.
    let request = raw_get("fit", false, None);
    assert_eq!(request.len(), 8);
    let (datagram, challenges) = spoof_once(&request);
    assert_eq!(datagram.len(), 24);
    let reply = Message::parse(&datagram).unwrap();
    assert_eq!(reply.code(), Code::CONTENT);
    assert_eq!(reply.payload().len(), FIT);
    assert!(reply.block2().is_none() && reply.option(OptionNumber::ECHO).is_none());
    assert_eq!(challenges, 0);
}

#[test]
fn a_get_with_room_for_echo_draws_a_cut_block_carrying_echo() {
    let (datagram, challenges) = spoof_once(&raw_get_with_token("large", b"8-bytes!", false, None));
    let reply = Message::parse(&datagram).unwrap();
    let block = reply.block2().expect("Block2");
    assert_eq!(
        (reply.code(), block.num, block.more),
        (Code::CONTENT, 0, true)
    );
    assert!(reply.option(OptionNumber::ECHO).is_some(), "carries Echo");
    assert_eq!(challenges, 1);
}

#[test]
fn a_get_whose_answer_cannot_be_cut_small_enough_draws_4_01_with_echo() {
    let (datagram, challenges) = spoof_once(&raw_get("tagged", false, None));
    let reply = Message::parse(&datagram).unwrap();
    assert_eq!(reply.code(), Code::UNAUTHORIZED);
    assert!(reply.option(OptionNumber::ECHO).is_some(), "carries Echo");
    assert_eq!(challenges, 1);
}

/// The payload size of the last datagram `net`'s server sent to `to`, and its Echo value.
fn last_reply(net: &Network, to: SocketAddr) -> (usize, Option<Vec<u8>>) {
    let (_, datagrams) = sent_to(net, addr(2), to);
    let m = Message::parse(datagrams.last().unwrap()).unwrap();
    assert_eq!(m.code(), Code::CONTENT);
    (
        m.payload().len(),
        m.option(OptionNumber::ECHO).map(<[u8]>::to_vec),
    )
}

#[test]
fn echoing_the_value_verifies_only_that_address_while_fresh() {
    let (mut net, server) = network_with_server(Config::default());
    let token = b"8-bytes!";
    net.inject(
        victim(),
        server,
        &raw_get_with_token("large", token, false, None),
    );
    net.run_for(Duration::from_secs(5));
    let (cut, echo) = last_reply(&net, victim());
    let echo = echo.expect("a cut block with Echo");
    assert!(cut < 1024, "{cut}");
    // Another address replaying the value is not verified by it.
    let other = SocketAddr::new(victim().ip(), 40_001);
    net.inject(other, server, &raw_get("large", false, Some(&echo)));
    net.run_for(Duration::from_secs(5));
    let (replayed, _) = last_reply(&net, other);
    assert!(replayed < 1024, "replayed elsewhere: {replayed} bytes");
    // Echoed from its own address, the full block flows.
    net.inject(victim(), server, &raw_get("large", false, Some(&echo)));
    net.run_for(Duration::from_secs(5));
    assert_eq!(last_reply(&net, victim()), (1024, None));
    // Once verified, later requests need no Echo, until the verification expires.
    net.inject(victim(), server, &raw_get("large", false, None));
    net.run_for(Duration::from_secs(5));
    assert_eq!(last_reply(&net, victim()), (1024, None));
    net.run_for(AmplificationLimit::default().verified_lifetime);
    net.inject(victim(), server, &raw_get("large", false, None));
    net.run_for(Duration::from_secs(5));
    let (expired, _) = last_reply(&net, victim());
    assert!(expired < 1024, "{expired}");
    // A stale value (two Echo lifetimes on) no longer verifies.
    net.inject(victim(), server, &raw_get("large", false, Some(&echo)));
    net.run_for(Duration::from_secs(5));
    let (stale, fresh_echo) = last_reply(&net, victim());
    assert!(stale < 1024, "{stale}");
    assert!(fresh_echo.is_some_and(|v| v != echo), "a new value");
}

#[test]
fn the_off_switch_serves_unverified_peers_in_full() {
    let config = Config {
        amplification: AmplificationLimit::off(),
        ..Config::default()
    };
    let (mut net, server) = network_with_server(config);
    net.inject(victim(), server, &raw_get("large", false, None));
    net.run_for(Duration::from_secs(10));
    let (bytes, _) = sent_to(&net, addr(2), victim());
    assert!(bytes > 1024, "a whole block: {bytes} bytes");
}

/// What a client app saw: payloads of its responses and notifications.
type Seen = Rc<RefCell<Vec<(Code, Vec<u8>)>>>;

fn recording_client(seen: Seen) -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    Box::new(FnApp(move |ep: &mut Endpoint, _: Instant, ev: Event| {
        if let Event::Response { key, .. } = ev {
            let r = ep.response(key).unwrap();
            seen.borrow_mut()
                .push((r.message.code(), r.payload().to_vec()));
        }
    }))
}

/// Adds a client node at `addr(1)` that records what it receives.
fn add_recording_client(net: &mut Network) -> (usize, Seen) {
    let seen: Seen = Rc::default();
    let client = net.add(
        addr(1),
        Config::default(),
        1,
        Some(recording_client(seen.clone())),
    );
    (client, seen)
}

#[test]
fn the_client_engine_answers_the_address_check_and_gets_the_whole_body_at_full_size() {
    let (mut net, server) = network_with_server(Config::default());
    let (client, seen) = add_recording_client(&mut net);
    let get = Request {
        options: &[opt(OptionNumber::URI_PATH, b"large")],
        ..Request::new(Code::GET)
    };
    net.request(client, addr(2), &get, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(5));
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!((seen[0].0, seen[0].1.len()), (Code::CONTENT, LARGE));
    // The server pinged, the client's RST verified its address, and every block came at
    // full size: two requests, no Echo.
    let server_sent: Vec<Vec<u8>> = sent_to(&net, addr(2), addr(1)).1;
    assert!(is_ping(&server_sent[0]), "a ping first");
    let blocks: Vec<(u32, u8)> = server_sent
        .iter()
        .filter_map(|d| Message::parse(d).ok()?.block2().map(|b| (b.num, b.szx)))
        .collect();
    assert_eq!(blocks, [(0, 6), (1, 6)]);
    assert_eq!(net.nodes[server].endpoint.stats().echo_challenges, 0);
}

#[test]
fn the_client_engine_answers_echo_when_its_ping_answer_is_lost() {
    let (mut net, server) = network_with_server(Config::default());
    let (client, seen) = add_recording_client(&mut net);
    // The client's RSTs are lost: the address check fails and Echo has to do.
    net.drop_rule = Some(Box::new(|from, _, bytes| {
        *from == addr(1) && bytes.first().is_some_and(|b| b >> 4 & 3 == 3)
    }));
    let get = Request {
        options: &[opt(OptionNumber::URI_PATH, b"large")],
        ..Request::new(Code::GET)
    };
    for params in [RequestParams::default(), RequestParams::NON] {
        net.request(client, addr(2), &get, params).unwrap();
        net.run_for(Duration::from_secs(10));
    }
    let seen = seen.borrow();
    assert_eq!(seen.len(), 2, "{seen:?}");
    for (code, body) in seen.iter() {
        assert_eq!((*code, body.len()), (Code::CONTENT, LARGE));
    }
    assert_eq!(net.nodes[server].endpoint.stats().echo_challenges, 1);
    assert_eq!(net.nodes[client].endpoint.stats().echo_retries, 1);
    // The first block came cut with Echo; block 0 asked for again with the value, the
    // client was verified and every later block came at full size.
    let blocks: Vec<(u32, u8, bool)> = net
        .sent_by(addr(2))
        .iter()
        .filter_map(|s| {
            let m = Message::parse(&s.bytes).ok()?;
            let b = m.block2()?;
            Some((b.num, b.szx, m.option(OptionNumber::ECHO).is_some()))
        })
        .collect();
    assert!(blocks[0].1 < 6 && blocks[0].2, "{blocks:?}");
    assert_eq!(
        blocks[1..],
        [(0, 6, false), (1, 6, false), (0, 6, false), (1, 6, false)]
    );
}

#[test]
fn a_spoofed_observe_registration_costs_at_most_three_times_and_then_ends() {
    let (mut net, server) = network_with_server(Config::default());
    let request = raw_get("time", true, None);
    net.inject(victim(), server, &request);
    net.run_for(Duration::from_secs(1));
    // Registered, its answer sent as a CON that nobody acknowledges.
    assert_eq!(net.nodes[server].endpoint.observer_count(1), 1);
    let (_, datagrams) = sent_to(&net, addr(2), victim());
    let first = Message::parse(&datagrams[0]).unwrap();
    assert_eq!(first.message_type(), MessageType::Confirmable);
    assert!(first.option(OptionNumber::OBSERVE).is_some());
    // A notification a second for five minutes: every one is a CON to the unverified
    // address, none fits what is left of its budget, and the observation ends.
    for second in 0..300u32 {
        let now = net.now;
        let body = format!("12:{:02}:{:02}", second / 60, second % 60);
        net.nodes[server].endpoint.notify(
            now,
            1,
            &Response::with_payload(Code::CONTENT, body.as_bytes()),
        );
        net.flush(server);
        net.run_for(Duration::from_secs(1));
    }
    assert_eq!(net.nodes[server].endpoint.observer_count(1), 0, "ended");
    let (bytes, datagrams) = sent_to(&net, addr(2), victim());
    assert!(
        bytes <= 3 * request.len(),
        "{bytes} bytes in {} datagrams for {}",
        datagrams.len(),
        request.len()
    );
}

#[test]
fn a_plain_client_that_only_acknowledges_observes_without_echo() {
    let (mut net, server) = network_with_server(Config::default());
    let client = addr(7);
    let request = raw_get_with_token("time", b"ob", true, None);
    net.inject(client, server, &request);
    let mut acked = 0;
    let mut notifications = Vec::new();
    for second in 0..5u8 {
        net.run_for(Duration::from_millis(500));
        // The client acknowledges every CON it gets, as RFC 7252 asks, and knows no Echo.
        for m in sent_to(&net, addr(2), client).1.into_iter().skip(acked) {
            acked += 1;
            let m = Message::parse(&m).unwrap();
            assert!(m.option(OptionNumber::ECHO).is_none());
            notifications.push(m.payload().to_vec());
            if m.message_type() == MessageType::Confirmable {
                let [high, low] = m.message_id().to_be_bytes();
                net.inject(client, server, &[0x60, 0, high, low]);
            }
        }
        let now = net.now;
        let body = format!("12:00:0{second}");
        net.nodes[server].endpoint.notify(
            now,
            1,
            &Response::with_payload(Code::CONTENT, body.as_bytes()),
        );
        net.flush(server);
        net.run_for(Duration::from_millis(500));
    }
    for m in sent_to(&net, addr(2), client).1.into_iter().skip(acked) {
        notifications.push(Message::parse(&m).unwrap().payload().to_vec());
    }
    assert_eq!(
        notifications,
        [
            &b"12:00:00"[..],
            b"12:00:00",
            b"12:00:01",
            b"12:00:02",
            b"12:00:03",
            b"12:00:04"
        ]
    );
    assert_eq!(net.nodes[server].endpoint.observer_count(1), 1);
}

#[test]
fn the_client_engine_observes_without_an_echo_round_trip() {
    let (mut net, server) = network_with_server(Config::default());
    let (client, seen) = add_recording_client(&mut net);
    let observe = Request {
        options: &[
            opt(OptionNumber::OBSERVE, &[]),
            opt(OptionNumber::URI_PATH, b"time"),
        ],
        ..Request::new(Code::GET)
    };
    net.request(client, addr(2), &observe, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(1));
    assert_eq!(net.nodes[server].endpoint.observer_count(1), 1);
    for second in 1..=3u8 {
        let now = net.now;
        let body = format!("12:00:0{second}");
        net.nodes[server].endpoint.notify(
            now,
            1,
            &Response::with_payload(Code::CONTENT, body.as_bytes()),
        );
        net.flush(server);
        net.run_for(Duration::from_secs(1));
    }
    let payloads: Vec<Vec<u8>> = seen.borrow().iter().map(|s| s.1.clone()).collect();
    assert_eq!(
        payloads,
        [&b"12:00:00"[..], b"12:00:01", b"12:00:02", b"12:00:03"]
    );
}

#[test]
fn a_spoofed_multicast_get_draws_one_small_block() {
    let group = IpAddr::V6(Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 0xfd));
    let (mut net, server) = network_with_server(Config::default());
    net.join(server, group);
    let request = raw_get("large", false, None);
    net.send(victim(), SocketAddr::new(group, 5683), request.clone());
    net.run_for(Duration::from_secs(10));
    let (bytes, datagrams) = sent_to(&net, addr(2), victim());
    assert_eq!(datagrams.len(), 1);
    assert!(bytes <= 3 * request.len(), "{bytes} bytes for 10");
    let reply = Message::parse(&datagrams[0]).unwrap();
    let block = reply.block2().expect("Block2");
    assert_eq!(
        (reply.code(), block.num, block.more),
        (Code::CONTENT, 0, true)
    );
    assert_eq!(reply.payload().len(), 16);
}

/// A server whose POST handler counts its calls and answers with the large body.
fn posting_server(
    calls: Rc<RefCell<u32>>,
) -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    let body: Vec<u8> = (0..LARGE).map(|i| (i % 251) as u8).collect();
    Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        let Event::Request(id) = ev else { return };
        *calls.borrow_mut() += 1;
        ep.respond(now, id, &Response::with_payload(Code::CHANGED, &body))
            .unwrap();
    }))
}

#[test]
fn a_response_to_an_unsafe_method_is_cut_to_fit_not_refused() {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let server = net.add(
        addr(2),
        Config::default(),
        2,
        Some(posting_server(calls.clone())),
    );
    // Spoofed: one small block comes back, within three times the request.
    let mut buf = [0u8; 64];
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::NonConfirmable, Code::POST, 9, &[]).unwrap();
    enc.option(OptionNumber::URI_PATH, b"do").unwrap();
    enc.payload(b"x").unwrap();
    let n = enc.finish();
    net.inject(victim(), server, &buf[..n]);
    net.run_for(Duration::from_secs(1));
    let (bytes, datagrams) = sent_to(&net, addr(2), victim());
    assert!(bytes <= 3 * n, "{bytes} bytes for {n}");
    let reply = Message::parse(&datagrams[0]).unwrap();
    assert_eq!(reply.code(), Code::CHANGED);
    assert!(reply.block2().is_some_and(|b| b.more));
    // A real client gets the whole body block by block; the POST is carried out once.
    let (client, seen) = add_recording_client(&mut net);
    let post = Request {
        options: &[opt(OptionNumber::URI_PATH, b"do")],
        payload: b"x",
        ..Request::new(Code::POST)
    };
    net.request(client, addr(2), &post, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(10));
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].0, seen[0].1.len()), (Code::CHANGED, LARGE));
    assert_eq!(
        *calls.borrow(),
        2,
        "once for the spoofed POST, once for the client's"
    );
    // The answer waited for the client's RST to a ping and then went at full size: no Echo,
    // and the POST was not sent again for it.
    assert_eq!(net.nodes[server].endpoint.stats().echo_challenges, 0);
    assert_eq!(net.nodes[client].endpoint.stats().echo_retries, 0);
    let pinged = sent_to(&net, addr(2), addr(1)).1;
    assert!(is_ping(&pinged[0]), "a ping first");
}

#[test]
fn a_block1_upload_earns_its_whole_answer() {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let upper = Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        let Event::Request(id) = ev else { return };
        let body = ep.request(id).unwrap().payload().to_ascii_uppercase();
        ep.respond(now, id, &Response::with_payload(Code::CHANGED, &body))
            .unwrap();
    }));
    net.add(addr(2), Config::default(), 2, Some(upper));
    let (client, seen) = add_recording_client(&mut net);
    let body: Vec<u8> = (0..1500).map(|i| b'a' + (i % 26) as u8).collect();
    let post = Request {
        options: &[opt(OptionNumber::URI_PATH, b"large-post")],
        payload: &body,
        ..Request::new(Code::POST)
    };
    net.request(client, addr(2), &post, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(30));
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, Code::CHANGED);
    assert_eq!(seen[0].1, body.to_ascii_uppercase());
    // The upload's blocks earned the client 3 x 1 500 bytes: its answer goes whole, at the
    // full block size and without Echo.
    let blocks: Vec<(u8, bool)> = net
        .sent_by(addr(2))
        .iter()
        .filter_map(|s| {
            let m = Message::parse(&s.bytes).ok()?;
            Some((m.block2()?.szx, m.option(OptionNumber::ECHO).is_some()))
        })
        .collect();
    assert_eq!(blocks, [(6, false), (6, false)]);
    assert_eq!(net.nodes[client].endpoint.stats().echo_retries, 0);
}

#[test]
fn an_echo_in_a_successful_response_goes_with_the_next_request() {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let echoed: Rc<RefCell<Vec<Option<Vec<u8>>>>> = Rc::default();
    let log = echoed.clone();
    let app = Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        let Event::Request(id) = ev else { return };
        let echo = ep
            .request(id)
            .unwrap()
            .message
            .option(OptionNumber::ECHO)
            .map(<[u8]>::to_vec);
        log.borrow_mut().push(echo);
        let options = [opt(OptionNumber::ECHO, b"fresh-1")];
        let response = Response {
            code: Code::CONTENT,
            options: &options,
            payload: b"ok",
        };
        ep.respond(now, id, &response).unwrap();
    }));
    net.add(addr(2), Config::default(), 2, Some(app));
    let (client, _) = add_recording_client(&mut net);
    let get = Request {
        options: &[opt(OptionNumber::URI_PATH, b"x")],
        ..Request::new(Code::GET)
    };
    for _ in 0..3 {
        net.request(client, addr(2), &get, RequestParams::default())
            .unwrap();
        net.run_for(Duration::from_secs(1));
    }
    // The first request has none; each later one echoes the value of the response before.
    assert_eq!(
        *echoed.borrow(),
        [None, Some(b"fresh-1".to_vec()), Some(b"fresh-1".to_vec())]
    );
}

#[test]
fn an_error_reply_to_an_unverified_address_keeps_its_code_and_shortens_its_diagnostic() {
    // 6 bytes: a CON GET with an empty option 13 (critical, unassigned; 9 is OSCORE's,
    // which the `oscore` feature processes).
    let request = [0x40, 0x01, 0x12, 0x34, 0xD0, 0x00];
    let (datagram, _) = spoof_once(&request);
    let reply = Message::parse(&datagram).unwrap();
    assert_eq!(
        (reply.message_type(), reply.code()),
        (MessageType::Acknowledgement, Code::BAD_OPTION)
    );
    assert!(datagram.len() <= 18, "{} bytes", datagram.len());
    assert!(b"unrecognised critical option 13".starts_with(reply.payload()));
}

#[test]
fn a_separate_response_to_a_silent_victim_is_not_retransmitted_beyond_its_budget() {
    // The App answers after the piggyback window: an empty ACK, then a CON response that
    // nobody acknowledges; its retransmissions stay within the budget.
    let slow = Box::new(SlowServer::default());
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let server = net.add(addr(2), Config::default(), 2, Some(slow));
    let mut buf = [0u8; 64];
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 7, b"to").unwrap();
    enc.option(OptionNumber::URI_PATH, b"separate").unwrap();
    let n = enc.finish();
    net.inject(victim(), server, &buf[..n]);
    net.run_for(Duration::from_secs(300));
    let (bytes, datagrams) = sent_to(&net, addr(2), victim());
    assert!(
        bytes <= 3 * n,
        "{bytes} bytes in {} datagrams for {n}",
        datagrams.len()
    );
    let types: Vec<(MessageType, Code)> = datagrams
        .iter()
        .map(|d| {
            Message::parse(d)
                .map(|m| (m.message_type(), m.code()))
                .unwrap()
        })
        .collect();
    assert_eq!(
        types[..2],
        [
            (MessageType::Acknowledgement, Code::EMPTY),
            (MessageType::Confirmable, Code::CONTENT)
        ]
    );
    assert!(
        net.nodes[server]
            .endpoint
            .stats()
            .drops_of(covey_proto::DropCause::AmplificationLimit)
            > 0
    );
}

/// Answers every request 3 s late, with a 20-byte body.
#[derive(Default)]
struct SlowServer {
    pending: Vec<covey_proto::IncomingId>,
}

impl App for SlowServer {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Request(id) => {
                self.pending.push(id);
                cx.set_timer(cx.now + Duration::from_secs(3), 0);
            }
            Event::Timer(_) => {
                for id in self.pending.drain(..) {
                    let body = [b's'; 20];
                    let ok = Response::with_payload(Code::CONTENT, &body);
                    let _ = cx.endpoint.respond(cx.now, id, &ok);
                }
            }
            _ => {}
        }
    }
}
