//! Message-layer behaviour on virtual time: retransmission, deduplication, separate
//! responses, NSTART, RST, ping, critical options and format errors.

mod support;

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{
    opt, App, AppContext, Config, Duration, Endpoint, Event, Failure, Instant, Request,
    RequestParams, Response,
};
use std::cell::RefCell;
use std::rc::Rc;
use support::{addr, FnApp, Network};

/// A server app answering every request with 2.05 "hello" at once, counting calls.
fn echo_server(calls: Rc<RefCell<u32>>) -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        if let Event::Request(id) = ev {
            *calls.borrow_mut() += 1;
            let path: String = ep
                .request(id)
                .unwrap()
                .message
                .uri_path()
                .collect::<Vec<_>>()
                .join("/");
            let body = format!("hello {path}");
            let r = Response {
                code: Code::CONTENT,
                options: &[],
                payload: body.as_bytes(),
            };
            ep.respond(now, id, &r).unwrap();
        }
    }))
}

fn get(path: &'static str) -> [covey_core::CoapOption<'static>; 1] {
    [opt(OptionNumber::URI_PATH, path.as_bytes())]
}

fn fixed_timeout_config() -> Config {
    let mut c = Config::default();
    c.transmission.ack_random_factor = covey_proto::RandomFactor::ONE;
    c
}

fn responses(net: &Network, node: usize) -> Vec<&Event> {
    net.nodes[node]
        .events
        .iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, Event::Response { .. }))
        .collect()
}

fn failures(net: &Network, node: usize) -> Vec<Failure> {
    net.nodes[node]
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Failed { failure, .. } => Some(*failure),
            _ => None,
        })
        .collect()
}

#[test]
fn request_gets_a_piggybacked_response() {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let _server = net.add(
        addr(2),
        Config::default(),
        2,
        Some(echo_server(calls.clone())),
    );
    let opts = get("temp");
    let req = Request {
        method: Code::GET,
        options: &opts,
        payload: b"",
    };
    net.request(client, addr(2), &req, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(1));
    assert_eq!(*calls.borrow(), 1);
    // Exactly one CON and one ACK crossed the network.
    assert_eq!(net.log.len(), 2);
    let ack = Message::parse(&net.log[1].bytes).unwrap();
    assert_eq!(ack.message_type(), MessageType::Acknowledgement);
    assert_eq!(ack.code(), Code::CONTENT);
    assert_eq!(
        ack.message_id(),
        Message::parse(&net.log[0].bytes).unwrap().message_id()
    );
    assert_eq!(responses(&net, client).len(), 1);
    let stats = net.nodes[client].endpoint.stats();
    assert_eq!(stats.rtt_samples, 1);
    assert_eq!(stats.rtt_total, Duration::from_millis(20));
}

#[test]
fn response_payload_is_readable_from_the_event() {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seen2 = seen.clone();
    let client_app = Box::new(FnApp(move |ep: &mut Endpoint, _now: Instant, ev: Event| {
        if let Event::Response { key, last, .. } = ev {
            let r = ep.response(key).unwrap();
            seen2.borrow_mut().push((
                r.source,
                r.message.code(),
                r.message.payload().to_vec(),
                last,
            ));
        }
    }));
    let client = net.add(addr(1), Config::default(), 1, Some(client_app));
    net.add(addr(2), Config::default(), 2, Some(echo_server(calls)));
    let opts = [
        opt(OptionNumber::URI_PATH, b"a"),
        opt(OptionNumber::URI_PATH, b"b"),
    ];
    let req = Request {
        method: Code::GET,
        options: &opts,
        payload: b"",
    };
    net.request(client, addr(2), &req, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(1));
    assert_eq!(
        *seen.borrow(),
        vec![(addr(2), Code::CONTENT, b"hello a/b".to_vec(), true)]
    );
}

#[test]
fn exact_retransmission_schedule_and_failure() {
    // ARF 1.0 fixes the initial timeout at ACK_TIMEOUT = 2 s: sends at 0, 2, 6, 14, 30,
    // failure at 62 s (= 31 · 2 s), the RFC 7252 schedule P4 scaled to T = 2 s.
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    net.drop_rule = Some(Box::new(|_, _, _| true));
    let client = net.add(addr(1), fixed_timeout_config(), 1, None);
    let start = net.now;
    let req = Request::new(Code::GET);
    net.nodes[client]
        .endpoint
        .send_request(start, addr(2), &req, RequestParams::default())
        .unwrap();
    net.flush(client);
    net.run_for(Duration::from_secs(100));
    let times: Vec<f64> = net
        .sent_by(addr(1))
        .iter()
        .map(|s| (s.at - start).as_secs_f64())
        .collect();
    assert_eq!(times, [0.0, 2.0, 6.0, 14.0, 30.0]);
    let (at, _) = net.nodes[client].events[0];
    assert_eq!((at - start).as_secs_f64(), 62.0);
    assert_eq!(failures(&net, client), [Failure::Timeout]);
    let stats = net.nodes[client].endpoint.stats();
    assert_eq!(stats.retransmissions[..4], [1, 1, 1, 1]);
    // All copies are the same message (same MID).
    let mids: Vec<u16> = net
        .sent_by(addr(1))
        .iter()
        .map(|s| Message::parse(&s.bytes).unwrap().message_id())
        .collect();
    assert!(mids.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn dithered_schedule_doubles_a_fixed_draw() {
    // With ARF 1.5 the first timeout is drawn from the engine's seeded PRNG in [2, 3] s;
    // every later timeout doubles it exactly, and the same seed gives the same draw.
    let run = |seed| {
        let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
        net.drop_rule = Some(Box::new(|_, _, _| true));
        let client = net.add(addr(1), Config::default(), seed, None);
        let start = net.now;
        net.nodes[client]
            .endpoint
            .send_request(
                start,
                addr(2),
                &Request::new(Code::GET),
                RequestParams::default(),
            )
            .unwrap();
        net.flush(client);
        net.run_for(Duration::from_secs(100));
        let times: Vec<Duration> = net.sent_by(addr(1)).iter().map(|s| s.at - start).collect();
        let failed_at = net.nodes[client].events[0].0 - start;
        (times, failed_at)
    };
    let (times, failed_at) = run(42);
    let t = times[1];
    assert!(
        t >= Duration::from_secs(2) && t <= Duration::from_secs(3),
        "first timeout {t:?}"
    );
    assert_eq!(times, [Duration::ZERO, t, t * 3, t * 7, t * 15]);
    assert_eq!(failed_at, t * 31);
    assert_eq!(run(42).0, times);
    assert_ne!(run(43).0, times, "another seed draws another timeout");
}

#[test]
fn lost_ack_is_answered_from_the_cache_without_calling_the_app_again() {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    // Drop the first ACK from the server: the client retransmits the CON.
    let mut dropped = false;
    net.drop_rule = Some(Box::new(move |from, _, bytes| {
        let is_ack =
            Message::parse(bytes).is_ok_and(|m| m.message_type() == MessageType::Acknowledgement);
        if *from == addr(2) && is_ack && !dropped {
            dropped = true;
            return true;
        }
        false
    }));
    let client = net.add(addr(1), fixed_timeout_config(), 1, None);
    net.add(
        addr(2),
        Config::default(),
        2,
        Some(echo_server(calls.clone())),
    );
    let opts = get("x");
    let req = Request {
        method: Code::POST,
        options: &opts,
        payload: b"1",
    };
    net.request(client, addr(2), &req, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(10));
    assert_eq!(*calls.borrow(), 1, "POST processed once");
    let acks: Vec<&Vec<u8>> = net.sent_by(addr(2)).iter().map(|s| &s.bytes).collect();
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[0], acks[1], "the duplicate gets the very same ACK");
    assert_eq!(net.nodes[1].endpoint.stats().duplicates, 1);
    assert_eq!(responses(&net, client).len(), 1);
    assert_eq!(net.nodes[client].endpoint.stats().completed_after[1], 1);
}

#[test]
fn duplicated_con_and_non_reach_the_app_once() {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let server = net.add(
        addr(2),
        Config::default(),
        2,
        Some(echo_server(calls.clone())),
    );
    let mut buf = [0u8; 64];
    for (mtype, mid) in [
        (MessageType::Confirmable, 7),
        (MessageType::NonConfirmable, 8),
    ] {
        let mut enc = MessageEncoder::new(&mut buf, mtype, Code::GET, mid, &[mid as u8]).unwrap();
        enc.option(OptionNumber::URI_PATH, b"d").unwrap();
        let n = enc.finish();
        let datagram = buf[..n].to_vec();
        net.inject(addr(1), server, &datagram);
        net.inject(addr(1), server, &datagram);
    }
    assert_eq!(*calls.borrow(), 2, "one call per distinct message");
    let replies: Vec<Message> = net
        .sent_by(addr(2))
        .iter()
        .map(|s| Message::parse(&s.bytes).unwrap())
        .collect();
    // CON: the ACK twice; NON: one NON response.
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0].message_type(), MessageType::Acknowledgement);
    assert_eq!(net.log[0].bytes, net.log[1].bytes);
    assert_eq!(replies[2].message_type(), MessageType::NonConfirmable);
    assert_eq!(net.nodes[server].endpoint.stats().duplicates, 2);
}

#[test]
fn reused_message_id_with_a_new_token_is_a_new_request() {
    // Californium caps a peer at 65000 MIDs / 247 s because its deduplication keys on the
    // MID alone; here a reused MID carrying a different message is served afresh.
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let server = net.add(
        addr(2),
        Config::default(),
        2,
        Some(echo_server(calls.clone())),
    );
    let mut buf = [0u8; 64];
    for token in [1u8, 2, 3] {
        let n = MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 99, &[token])
            .unwrap()
            .finish();
        let datagram = buf[..n].to_vec();
        net.inject(addr(1), server, &datagram);
    }
    assert_eq!(*calls.borrow(), 3);
    assert_eq!(net.nodes[server].endpoint.stats().duplicates, 0);
}

#[test]
fn slow_application_gets_an_empty_ack_then_a_separate_response() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    // The server answers 3 s after the request (its piggyback window is 1 s).
    let server_app = Box::new(LateServer(None));
    let client = net.add(addr(1), Config::default(), 1, None);
    let server = net.add(addr(2), Config::default(), 2, Some(server_app));
    net.request(
        client,
        addr(2),
        &Request::new(Code::GET),
        RequestParams::default(),
    )
    .unwrap();
    net.run_for(Duration::from_secs(10));
    let kinds: Vec<(String, MessageType, Code)> = net
        .log
        .iter()
        .map(|s| {
            let m = Message::parse(&s.bytes).unwrap();
            (
                if s.from == addr(1) {
                    "client"
                } else {
                    "server"
                }
                .to_string(),
                m.message_type(),
                m.code(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("client".into(), MessageType::Confirmable, Code::GET),
            ("server".into(), MessageType::Acknowledgement, Code::EMPTY),
            ("server".into(), MessageType::Confirmable, Code::CONTENT),
            ("client".into(), MessageType::Acknowledgement, Code::EMPTY),
        ]
    );
    // The empty ACK went out when the piggyback window closed.
    assert_eq!(net.log[1].at - net.log[0].at, Duration::from_millis(1010));
    assert_eq!(responses(&net, client).len(), 1);
    assert_eq!(net.nodes[server].endpoint.stats().separate_responses, 1);
    // The separate response's ACK matched: nothing left in flight on either side.
    assert_eq!(
        net.nodes[server].endpoint.stats().total_retransmissions(),
        0
    );
    assert_eq!(
        net.nodes[client].endpoint.stats().total_retransmissions(),
        0
    );
}

#[test]
fn nstart_one_queues_requests_to_the_same_peer() {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    net.add(
        addr(2),
        Config::default(),
        2,
        Some(echo_server(calls.clone())),
    );
    net.add(
        addr(3),
        Config::default(),
        3,
        Some(echo_server(calls.clone())),
    );
    let now = net.now;
    for dest in [addr(2), addr(2), addr(2), addr(3)] {
        net.nodes[client]
            .endpoint
            .send_request(
                now,
                dest,
                &Request::new(Code::GET),
                RequestParams::default(),
            )
            .unwrap();
    }
    net.flush(client);
    // At time 0, one request to each peer is on the wire; the other two wait.
    let first: Vec<_> = net.log.iter().map(|s| s.to).collect();
    assert_eq!(first, [addr(2), addr(3)]);
    net.run_for(Duration::from_secs(1));
    let to_two: Vec<Duration> = net
        .sent_by(addr(1))
        .iter()
        .filter(|s| s.to == addr(2))
        .map(|s| s.at - now)
        .collect();
    // Each next request leaves when the previous response arrives (20 ms round trip).
    assert_eq!(
        to_two,
        [
            Duration::ZERO,
            Duration::from_millis(20),
            Duration::from_millis(40)
        ]
    );
    assert_eq!(responses(&net, client).len(), 4);
}

#[test]
fn nstart_queue_is_bounded() {
    let config = Config {
        max_queued_per_peer: 2,
        ..Config::default()
    };
    let mut ep = Endpoint::new(config, 1).unwrap();
    let now = Instant::ZERO;
    let get = Request::new(Code::GET);
    for _ in 0..3 {
        ep.send_request(now, addr(2), &get, RequestParams::default())
            .unwrap();
    }
    assert_eq!(
        ep.send_request(now, addr(2), &get, RequestParams::default()),
        Err(covey_proto::RequestError::Overload)
    );
}

#[test]
fn reset_fails_the_request() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    net.drop_rule = Some(Box::new(|_, _, _| true));
    let client = net.add(addr(1), Config::default(), 1, None);
    net.request(
        client,
        addr(2),
        &Request::new(Code::GET),
        RequestParams::default(),
    )
    .unwrap();
    let mid = Message::parse(&net.log[0].bytes).unwrap().message_id();
    let mut rst = [0u8; 4];
    MessageEncoder::new(&mut rst, MessageType::Reset, Code::EMPTY, mid, &[]).unwrap();
    // An RST from another address does not match.
    net.inject(addr(3), client, &rst);
    assert!(failures(&net, client).is_empty());
    net.inject(addr(2), client, &rst);
    assert_eq!(failures(&net, client), [Failure::Reset]);
    net.run_for(Duration::from_secs(100));
    assert_eq!(
        net.sent_by(addr(1)).len(),
        1,
        "no retransmission after the RST"
    );
}

#[test]
fn ping_is_answered_with_reset() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let calls = Rc::new(RefCell::new(0));
    net.add(
        addr(2),
        Config::default(),
        2,
        Some(echo_server(calls.clone())),
    );
    let now = net.now;
    let id = net.nodes[client].endpoint.ping(now, addr(2)).unwrap();
    net.flush(client);
    net.run_for(Duration::from_secs(1));
    assert_eq!(net.log[0].bytes[..2], [0x40, 0x00]);
    assert_eq!(
        net.log[1].bytes,
        [0x70, 0x00, net.log[0].bytes[2], net.log[0].bytes[3]]
    );
    assert!(matches!(net.nodes[client].events[..], [(_, Event::Pong(p))] if p == id));
    assert_eq!(*calls.borrow(), 0, "a ping never reaches the application");
}

#[test]
fn unrecognised_critical_option_gets_bad_option_and_elective_is_ignored() {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    // The whole diagnostic: what an unverified address gets of it is in amplification.rs.
    let server = net.add(
        addr(2),
        whole_diagnostics(),
        2,
        Some(echo_server(calls.clone())),
    );
    let mut buf = [0u8; 64];
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 1, &[1]).unwrap();
    enc.option(OptionNumber(2049), b"x").unwrap();
    let n = enc.finish();
    let critical = buf[..n].to_vec();
    net.inject(addr(1), server, &critical);
    let reply = Message::parse(&net.log[0].bytes).unwrap();
    assert_eq!(
        (reply.message_type(), reply.code()),
        (MessageType::Acknowledgement, Code::BAD_OPTION)
    );
    assert_eq!(reply.payload(), b"unrecognised critical option 2049");
    assert_eq!(*calls.borrow(), 0);

    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 2, &[2]).unwrap();
    enc.option(OptionNumber(2048), b"x").unwrap();
    let n = enc.finish();
    let elective = buf[..n].to_vec();
    net.inject(addr(1), server, &elective);
    assert_eq!(*calls.borrow(), 1);
    assert_eq!(
        Message::parse(&net.log[1].bytes).unwrap().code(),
        Code::CONTENT
    );

    // A known critical option with a bad length is unrecognised too (Uri-Host of 0 bytes).
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 3, &[3]).unwrap();
    enc.option(OptionNumber::URI_HOST, b"").unwrap();
    let n = enc.finish();
    let bad_len = buf[..n].to_vec();
    net.inject(addr(1), server, &bad_len);
    assert_eq!(
        Message::parse(&net.log[2].bytes).unwrap().code(),
        Code::BAD_OPTION
    );

    // A NON with an unknown critical option is rejected with RST.
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::NonConfirmable, Code::GET, 4, &[4]).unwrap();
    enc.option(OptionNumber(2049), b"x").unwrap();
    let n = enc.finish();
    let non = buf[..n].to_vec();
    net.inject(addr(1), server, &non);
    assert_eq!(net.log[3].bytes, [0x70, 0, 0, 4]);
}

/// A network with an echo server at `addr(2)`, and the count of its application's calls.
/// A server without the amplification limit, whose error replies carry their whole
/// diagnostic even to a client it has not verified.
fn whole_diagnostics() -> Config {
    Config {
        amplification: covey_proto::AmplificationLimit::off(),
        ..Config::default()
    }
}

fn echo_network(config: Config) -> (Network, usize, Rc<RefCell<u32>>) {
    let calls = Rc::new(RefCell::new(0));
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let server = net.add(addr(2), config, 2, Some(echo_server(calls.clone())));
    (net, server, calls)
}

/// A CON GET with one extra option, as bytes.
fn con_get_with(mid: u16, number: OptionNumber, value: &[u8]) -> Vec<u8> {
    let mut buf = [0u8; 128];
    let token = mid.to_be_bytes();
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, mid, &token).unwrap();
    enc.option(number, value).unwrap();
    let n = enc.finish();
    buf[..n].to_vec()
}

#[test]
fn registered_critical_options_covey_does_not_implement_get_bad_option() {
    let (mut net, server, calls) = echo_network(whole_diagnostics());
    let mut cases: Vec<(OptionNumber, &[u8])> = vec![
        (OptionNumber::EDHOC, b""),
        (OptionNumber::Q_BLOCK1, &[0x06]),
        (OptionNumber::Q_BLOCK2, &[0x06]),
    ];
    // With the `oscore` feature the option is processed (tests/oscore_server.rs).
    if cfg!(not(feature = "oscore")) {
        cases.push((OptionNumber::OSCORE, &[0x09, 0x14]));
    }
    for (mid, (number, value)) in (10..).zip(cases) {
        net.inject(addr(1), server, &con_get_with(mid, number, value));
        let reply = Message::parse(&net.log.last().unwrap().bytes).unwrap();
        assert_eq!(
            (reply.message_type(), reply.code(), reply.message_id()),
            (MessageType::Acknowledgement, Code::BAD_OPTION, mid),
            "{number}"
        );
        let expected = format!("unrecognised critical option {}", number.0);
        assert_eq!(reply.payload(), expected.as_bytes());
    }
    assert_eq!(*calls.borrow(), 0, "none reaches the application");
}

#[test]
fn proxy_requests_get_proxying_not_supported() {
    let (mut net, server, calls) = echo_network(Config::default());
    let cases: [(OptionNumber, &[u8]); 2] = [
        (OptionNumber::PROXY_URI, b"coap://192.0.2.1/x"),
        (OptionNumber::PROXY_SCHEME, b"coap"),
    ];
    for (mid, (number, value)) in (20..).zip(cases) {
        net.inject(addr(1), server, &con_get_with(mid, number, value));
        let reply = Message::parse(&net.log.last().unwrap().bytes).unwrap();
        assert_eq!(
            (reply.code(), reply.message_id()),
            (Code::PROXYING_NOT_SUPPORTED, mid),
            "{number}"
        );
        assert_eq!(reply.payload(), b"this server is not a proxy");
    }
    // A Proxy-Uri of a bad length is a malformed critical option: 4.02.
    net.inject(
        addr(1),
        server,
        &con_get_with(30, OptionNumber::PROXY_URI, b""),
    );
    let reply = Message::parse(&net.log.last().unwrap().bytes).unwrap();
    assert_eq!(reply.code(), Code::BAD_OPTION);
    assert_eq!(*calls.borrow(), 0);
}

#[test]
fn a_con_request_larger_than_a_message_gets_request_entity_too_large_with_size1() {
    let config = Config::default();
    let (max_message, max_body) = (config.max_message_size, config.max_body_size);
    let (mut net, server, calls) = echo_network(config);
    let mut big = vec![0u8; max_message + 200];
    let mut enc =
        MessageEncoder::new(&mut big, MessageType::Confirmable, Code::PUT, 0x77, &[9, 9]).unwrap();
    enc.option(OptionNumber::URI_PATH, b"store").unwrap();
    let header = enc.finish();
    big[header] = 0xff;
    let cut = big.clone();
    net.inject(addr(1), server, &cut);
    let reply = Message::parse(&net.log.last().unwrap().bytes).unwrap();
    assert_eq!(
        (reply.message_type(), reply.code(), reply.message_id()),
        (
            MessageType::Acknowledgement,
            Code::REQUEST_ENTITY_TOO_LARGE,
            0x77
        )
    );
    assert_eq!(reply.token().as_bytes(), [9, 9]);
    assert_eq!(
        reply
            .option(OptionNumber::SIZE1)
            .and_then(covey_core::uint::decode),
        Some(max_body as u32)
    );
    assert_eq!(reply.block1().map(|b| (b.num, b.more)), Some((0, false)));
    // A retransmission gets the same answer; the application never sees either.
    let replies = net.log.len();
    net.inject(addr(1), server, &cut);
    assert_eq!(net.log.len(), replies + 1);
    assert_eq!(net.log.last().unwrap().bytes, net.log[replies - 1].bytes);
    // A NON that large, or an oversized response, is dropped in silence.
    set_type(&mut big, MessageType::NonConfirmable);
    net.inject(addr(1), server, &big);
    big[1] = Code::CONTENT.0;
    set_type(&mut big, MessageType::Confirmable);
    net.inject(addr(1), server, &big);
    assert_eq!(net.log.len(), replies + 1);
    assert_eq!(*calls.borrow(), 0);
}

/// Rewrites the type bits of a datagram's first byte.
fn set_type(datagram: &mut [u8], kind: MessageType) {
    let bits = match kind {
        MessageType::Confirmable => 0,
        MessageType::NonConfirmable => 1,
        MessageType::Acknowledgement => 2,
        MessageType::Reset => 3,
    };
    datagram[0] = (datagram[0] & 0xcf) | (bits << 4);
}

#[test]
fn format_errors_get_reset_for_con_and_silence_otherwise() {
    let (mut net, server, calls) = echo_network(Config::default());
    // CON with token length 9: RST echoing the MID.
    net.inject(addr(1), server, &[0x49, 0x01, 0x12, 0x34]);
    assert_eq!(net.log.last().unwrap().bytes, [0x70, 0x00, 0x12, 0x34]);
    // CON with a reserved code class: RST as well.
    net.inject(addr(1), server, &[0x40, 0xE0, 0x00, 0x05]);
    assert_eq!(net.log.last().unwrap().bytes, [0x70, 0x00, 0x00, 0x05]);
    let before = net.log.len();
    // NON with a truncated option, ACK with a payload marker and no payload, version 2,
    // short datagram, an empty NON and an unmatched ACK: all dropped silently.
    for bad in [
        &[0x50, 0x01, 0, 1, 0xb4, 0x74][..],
        &[0x60, 0x45, 0, 2, 0xff][..],
        &[0x80, 0x01, 0, 3][..],
        &[0x40, 0x01][..],
        &[0x50, 0x00, 0, 4][..],
        &[0x60, 0x00, 0, 5][..],
    ] {
        net.inject(addr(1), server, bad);
    }
    assert_eq!(net.log.len(), before);
    assert_eq!(*calls.borrow(), 0);
    let stats = net.nodes[server].endpoint.stats();
    assert_eq!(stats.drops_of(covey_proto::DropCause::FormatError), 7);
    assert_eq!(stats.drops_of(covey_proto::DropCause::Unmatched), 1);
}

#[test]
fn unmatched_separate_response_is_rejected_with_reset() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let mut buf = [0u8; 16];
    let n = MessageEncoder::new(
        &mut buf,
        MessageType::Confirmable,
        Code::CONTENT,
        77,
        &[9, 9],
    )
    .unwrap()
    .finish();
    let stray = buf[..n].to_vec();
    net.inject(addr(2), client, &stray);
    assert_eq!(net.log[0].bytes, [0x70, 0, 0, 77]);
    assert!(net.nodes[client].events.is_empty());
}

#[test]
fn cancel_stops_retransmissions_and_frees_the_nstart_slot() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    net.drop_rule = Some(Box::new(|_, _, _| true));
    let client = net.add(addr(1), Config::default(), 1, None);
    let now = net.now;
    let get = Request::new(Code::GET);
    let first = net.nodes[client]
        .endpoint
        .send_request(now, addr(2), &get, RequestParams::default())
        .unwrap();
    net.request(client, addr(2), &get, RequestParams::default())
        .unwrap();
    assert_eq!(net.log.len(), 1);
    assert!(net.nodes[client].endpoint.cancel(now, first));
    net.flush(client);
    assert_eq!(net.log.len(), 2, "the queued request starts at once");
    assert!(!net.nodes[client].endpoint.cancel(now, first));
    net.run_for(Duration::from_secs(200));
    let mids: std::collections::BTreeSet<u16> = net
        .log
        .iter()
        .map(|s| Message::parse(&s.bytes).unwrap().message_id())
        .collect();
    assert_eq!(mids.len(), 2, "only the second request was retransmitted");
    assert_eq!(failures(&net, client), [Failure::Timeout]);
}

#[test]
fn probing_rate_limits_an_unresponsive_peer() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    net.drop_rule = Some(Box::new(|_, _, _| true));
    let mut config = fixed_timeout_config();
    config.transmission.nstart = 4;
    let client = net.add(addr(1), config, 1, None);
    let get = Request::new(Code::GET);
    net.request(client, addr(2), &get, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(70));
    assert_eq!(failures(&net, client), [Failure::Timeout]);
    // The peer is now unresponsive: PROBING_RATE (1 byte/s) spaces new messages by their size.
    let before = net.log.len();
    let now = net.now;
    for _ in 0..2 {
        net.nodes[client]
            .endpoint
            .send_request(now, addr(2), &get, RequestParams::default())
            .unwrap();
    }
    net.flush(client);
    net.run_for(Duration::from_secs(30));
    let firsts: Vec<(Duration, usize)> = net.log[before..]
        .iter()
        .scan(std::collections::HashSet::new(), |seen, s| {
            let mid = Message::parse(&s.bytes).unwrap().message_id();
            Some(seen.insert(mid).then(|| (s.at - now, s.bytes.len())))
        })
        .flatten()
        .collect();
    assert_eq!(firsts.len(), 2);
    assert_eq!(firsts[0].0, Duration::ZERO);
    assert_eq!(
        firsts[1].0,
        Duration::from_secs(firsts[0].1 as u64),
        "second waits size/1 B/s"
    );
}

/// Sends `count` CON GETs from one client port to one server at `rate` per second of virtual
/// time, moving datagrams directly; returns (responses, client mid_exhausted, server duplicates).
fn sustained_rate(client_config: Config, count: u32, rate: u64) -> (u32, u64, u64) {
    let server_config = Config {
        max_dedup_entries: 200_000,
        ..Config::default()
    };
    let mut client = Endpoint::new(
        Config {
            max_exchanges: 1024,
            ..client_config
        },
        1,
    )
    .unwrap();
    let mut server = Endpoint::new(server_config, 2).unwrap();
    let (c, s) = (addr(1), addr(2));
    let mut buf = [0u8; 1500];
    let step = Duration::from_nanos(1_000_000_000 / rate);
    let mut now = Instant::from_secs(1);
    let mut responses = 0;
    let get = Request::new(Code::GET);
    for _ in 0..count {
        now = now + step;
        // CON: the piggy-backed responses reuse the request's MID, so only the client's
        // MID allocation is under test.
        let _ = client.send_request(now, s, &get, RequestParams::default());
        if client.poll_timeout().is_some_and(|t| t <= now) {
            client.handle_timeout(now);
        }
        server.handle_timeout(now);
        loop {
            let mut moved = false;
            while let Some(t) = client.poll_transmit(now, &mut buf) {
                server.handle_datagram(now, c, covey_proto::LocalAddr::UNICAST, &buf[..t.size]);
                moved = true;
            }
            while let Some(ev) = server.poll_event() {
                if let Event::Request(id) = ev {
                    server
                        .respond(now, id, &Response::new(Code::CONTENT))
                        .unwrap();
                }
            }
            while let Some(t) = server.poll_transmit(now, &mut buf) {
                client.handle_datagram(now, s, covey_proto::LocalAddr::UNICAST, &buf[..t.size]);
                moved = true;
            }
            while let Some(ev) = client.poll_event() {
                if matches!(ev, Event::Response { .. }) {
                    responses += 1;
                }
            }
            if !moved {
                break;
            }
        }
    }
    (
        responses,
        client.stats().mid_exhausted,
        server.stats().duplicates,
    )
}

#[test]
fn message_id_reuse_interval_bounds_one_peer_and_the_receiver_does_not() {
    // RFC default: a MID may not be reused towards a peer within EXCHANGE_LIFETIME (247 s),
    // so one client port stalls after 65536 requests (265/s sustained).
    let (served, exhausted, _) = sustained_rate(Config::default(), 80_000, 10_000);
    assert!(served <= 65_536 + 4096, "served {served}");
    assert!(exhausted > 0);
    // With a reuse interval suited to the path (here 2 s), the same port sustains 10 000/s:
    // the MIDs wrap every 6.5 s, and the server, whose deduplication checks the message's
    // fingerprint and not just its MID, serves every request and sees no false duplicate.
    let config = Config {
        mid_reuse_interval: Some(Duration::from_secs(2)),
        ..Config::default()
    };
    let (served, exhausted, duplicates) = sustained_rate(config, 150_000, 10_000);
    assert_eq!((served, exhausted, duplicates), (150_000, 0, 0));
}

/// The message-ID failures among the client's pending events, in order.
fn message_id_failures(client: &mut Endpoint) -> Vec<covey_proto::RequestId> {
    std::iter::from_fn(|| client.poll_event())
        .filter_map(|ev| match ev {
            Event::Failed {
                id,
                failure: Failure::MessageIdsExhausted,
            } => Some(id),
            _ => None,
        })
        .collect()
}

/// Sends and at once cancels GETs to `remote` while each goes out, at most `limit` of them:
/// each takes a message ID. Returns how many went out, and the request that did not.
fn take_message_ids(
    client: &mut Endpoint,
    now: Instant,
    remote: std::net::SocketAddr,
    limit: usize,
) -> (usize, Option<covey_proto::RequestId>) {
    let mut buf = [0u8; 1500];
    for sent in 0..limit {
        let id = client
            .send_request(
                now,
                remote,
                &Request::new(Code::GET),
                RequestParams::default(),
            )
            .unwrap();
        if client.poll_transmit(now, &mut buf).is_none() {
            return (sent, Some(id));
        }
        client.cancel(now, id);
    }
    (limit, None)
}

#[test]
fn a_request_that_finds_no_message_id_free_fails_at_once_instead_of_waiting_unseen() {
    // With the RFC's reuse interval (EXCHANGE_LIFETIME) one peer gets at most 65 536 message
    // IDs (fewer when the first block was entered midway); the next request used to wait,
    // with no event and no end, for an ID to come free (up to 247 s), so a caller saw it
    // neither answered nor timed out.
    let server = addr(2);
    let now = Instant::from_secs(1);
    let mut buf = [0u8; 1500];
    let mut client = Endpoint::new(Config::default(), 1).unwrap();
    let (free, stuck) = take_message_ids(&mut client, now, server, 65_537);
    assert!((65_536 - 4096..=65_536).contains(&free), "{free} IDs");
    let stuck = stuck.expect("the IDs ran out");
    assert_eq!(message_id_failures(&mut client), vec![stuck]);
    assert_eq!(client.outstanding_requests(), 0);
    assert_eq!(
        client.poll_timeout(),
        None,
        "no timer left for the failed request"
    );
    assert_eq!(client.stats().mid_exhausted, 1);
    // Once the first IDs may be reused, requests go out again.
    let later = now + Config::default().mid_reuse();
    client
        .send_request(
            later,
            server,
            &Request::new(Code::GET),
            RequestParams::default(),
        )
        .unwrap();
    assert!(client.poll_transmit(later, &mut buf).is_some());
    assert!(message_id_failures(&mut client).is_empty());

    // The same again (same seed, same IDs), but A takes the last free ID while B and C
    // wait behind it for the NSTART slot: when A ends, B starts, finds no ID and fails,
    // and so does C after it.
    let mut client = Endpoint::new(Config::default(), 1).unwrap();
    assert_eq!(
        take_message_ids(&mut client, now, server, free - 1).0,
        free - 1
    );
    let mut send = || {
        client
            .send_request(
                now,
                server,
                &Request::new(Code::GET),
                RequestParams::default(),
            )
            .unwrap()
    };
    let (a, b, c) = (send(), send(), send());
    assert!(client.poll_transmit(now, &mut buf).is_some(), "A goes out");
    assert!(message_id_failures(&mut client).is_empty());
    client.cancel(now, a);
    assert_eq!(message_id_failures(&mut client), vec![b, c]);
    assert!(client.poll_transmit(now, &mut buf).is_none());
    assert_eq!(client.outstanding_requests(), 0);
}

#[test]
fn response_with_an_unrecognised_critical_option_is_rejected_and_fails_its_request() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    net.drop_rule = Some(Box::new(|_, _, _| true));
    let client = net.add(addr(1), Config::default(), 1, None);
    let mut buf = [0u8; 32];
    // OSCORE is registered but not implemented: as critical as an unknown number.
    for (kind, critical) in [
        (MessageType::Acknowledgement, OptionNumber(2049)),
        (MessageType::Confirmable, OptionNumber(2049)),
        (MessageType::NonConfirmable, OptionNumber::OSCORE),
    ] {
        let id = net
            .request(
                client,
                addr(2),
                &Request::new(Code::GET),
                RequestParams::default(),
            )
            .unwrap();
        let request = Message::parse(&net.log.last().unwrap().bytes).unwrap();
        let mid = if kind == MessageType::Acknowledgement {
            request.message_id()
        } else {
            500
        };
        let mut enc = MessageEncoder::new(
            &mut buf,
            kind,
            Code::CONTENT,
            mid,
            request.token().as_bytes(),
        )
        .unwrap();
        enc.option(critical, b"x").unwrap();
        let n = enc.finish();
        let sent = net.log.len();
        let response = buf[..n].to_vec();
        net.inject(addr(2), client, &response);
        // A separate CON is rejected with RST; an ACK or a NON by ignoring it.
        let replies: Vec<Vec<u8>> = net.log[sent..].iter().map(|d| d.bytes.clone()).collect();
        if kind == MessageType::Confirmable {
            assert_eq!(replies, [vec![0x70, 0, 0x01, 0xf4]], "{kind:?}");
        } else {
            assert!(replies.is_empty(), "{kind:?}: {replies:?}");
        }
        // The answer cannot be used, and asking again would fetch the same one.
        assert!(
            matches!(
                net.nodes[client].events.last(),
                Some((_, Event::Failed { id: f, failure: Failure::ProtocolError })) if *f == id
            ),
            "{kind:?}: {:?}",
            net.nodes[client].events
        );
        // Over: the request is not retransmitted.
        let sent = net.log.len();
        net.run_for(Duration::from_secs(10));
        assert_eq!(net.log.len(), sent, "{kind:?}");
    }
    assert!(responses(&net, client).is_empty());
    // An elective unknown option is fine.
    net.request(
        client,
        addr(2),
        &Request::new(Code::GET),
        RequestParams::default(),
    )
    .unwrap();
    let request = Message::parse(&net.log.last().unwrap().bytes).unwrap();
    let mut enc = MessageEncoder::new(
        &mut buf,
        MessageType::Acknowledgement,
        Code::CONTENT,
        request.message_id(),
        request.token().as_bytes(),
    )
    .unwrap();
    enc.option(OptionNumber(2048), b"x").unwrap();
    let n = enc.finish();
    let fine = buf[..n].to_vec();
    net.inject(addr(2), client, &fine);
    assert_eq!(responses(&net, client).len(), 1);
}

#[test]
fn a_response_whose_code_is_no_response_code_fails_its_request_at_once() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    net.drop_rule = Some(Box::new(|_, _, _| true));
    let client = net.add(addr(1), Config::default(), 1, None);
    let mut buf = [0u8; 32];
    // Classes 1, 3, 6 and 7 are reserved; 0.01 is a request code, which no ACK may carry.
    let cases = [
        (MessageType::Acknowledgement, Code::new(1, 0)),
        (MessageType::Acknowledgement, Code::new(3, 1)),
        (MessageType::Acknowledgement, Code::new(6, 1)),
        (MessageType::Acknowledgement, Code::new(7, 31)),
        (MessageType::Acknowledgement, Code::GET),
        (MessageType::Confirmable, Code::new(6, 1)),
        (MessageType::NonConfirmable, Code::new(1, 0)),
    ];
    for (kind, code) in cases {
        let id = net
            .request(
                client,
                addr(2),
                &Request::new(Code::GET),
                RequestParams::default(),
            )
            .unwrap();
        // NSTART 1: a second request waits for the first.
        let queued = net
            .request(
                client,
                addr(2),
                &Request::new(Code::GET),
                RequestParams::default(),
            )
            .unwrap();
        let request = Message::parse(&net.log.last().unwrap().bytes).unwrap();
        let mid = if kind == MessageType::Acknowledgement {
            request.message_id()
        } else {
            500
        };
        let n = MessageEncoder::new(&mut buf, kind, code, mid, request.token().as_bytes())
            .unwrap()
            .finish();
        let sent = net.log.len();
        let response = buf[..n].to_vec();
        net.inject(addr(2), client, &response);
        let replies: Vec<Vec<u8>> = net.log[sent..]
            .iter()
            .filter(|d| d.from == addr(1))
            .map(|d| d.bytes.clone())
            .filter(|b| Message::parse(b).is_ok_and(|m| m.code().is_empty()))
            .collect();
        // A CON is rejected with RST, an ACK or a NON by ignoring it.
        if kind == MessageType::Confirmable {
            assert_eq!(replies, [vec![0x70, 0, 0x01, 0xf4]], "{kind:?} {code:?}");
        } else {
            assert!(replies.is_empty(), "{kind:?} {code:?}: {replies:?}");
        }
        assert!(
            matches!(
                net.nodes[client].events.last(),
                Some((_, Event::Failed { id: f, failure: Failure::InvalidResponseCode })) if *f == id
            ),
            "{kind:?} {code:?}: {:?}",
            net.nodes[client].events
        );
        // The queued request went out at once, and the failed one is never sent again.
        assert!(net.log[sent..]
            .iter()
            .any(|d| d.from == addr(1)
                && Message::parse(&d.bytes).is_ok_and(|m| m.code() == Code::GET)));
        net.nodes[client].endpoint.cancel(net.now, queued);
        let sent = net.log.len();
        net.run_for(Duration::from_secs(10));
        assert_eq!(net.log.len(), sent, "{kind:?} {code:?}");
    }
    assert!(responses(&net, client).is_empty());
}

/// Answers its one request 3 s late.
struct LateServer(Option<covey_proto::IncomingId>);

impl App for LateServer {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Request(id) => {
                self.0 = Some(id);
                cx.set_timer(cx.now + Duration::from_secs(3), 0).unwrap();
            }
            Event::Timer(_) => {
                let id = self.0.take().unwrap();
                let late = Response::with_payload(Code::CONTENT, b"late");
                cx.endpoint.respond(cx.now, id, &late).unwrap();
            }
            _ => {}
        }
    }
}
