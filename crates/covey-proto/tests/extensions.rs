//! Observe, Block-wise and multicast on virtual time through the in-memory network.

mod support;

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{
    opt, Config, Duration, Endpoint, Event, Failure, Instant, Request, RequestError, RequestParams,
    Response,
};
use std::cell::RefCell;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::rc::Rc;
use support::{addr, FnApp, Network};

/// What a client app saw: (time, source, payload, last).
type Seen = Rc<RefCell<Vec<(Instant, SocketAddr, Vec<u8>, bool)>>>;

fn recording_client(
    seen: Seen,
    finished: Rc<RefCell<u32>>,
) -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    Box::new(FnApp(
        move |ep: &mut Endpoint, now: Instant, ev: Event| match ev {
            Event::Response { key, last, .. } => {
                let r = ep.response(key).unwrap();
                seen.borrow_mut()
                    .push((now, r.source, r.payload().to_vec(), last));
            }
            Event::Finished(_) | Event::Failed { .. } => *finished.borrow_mut() += 1,
            _ => {}
        },
    ))
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

// ---------------------------------------------------------------- block-wise

fn large_server(
    body: Vec<u8>,
    uploads: Rc<RefCell<Vec<Vec<u8>>>>,
) -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        if let Event::Request(id) = ev {
            let req = ep.request(id).unwrap();
            let code = req.message.code();
            if code == Code::PUT {
                uploads.borrow_mut().push(req.payload().to_vec());
                ep.respond(now, id, &Response::new(Code::CHANGED)).unwrap();
            } else {
                let etag = [0xE7, 0x01];
                let options = [opt(OptionNumber::ETAG, &etag)];
                ep.respond(
                    now,
                    id,
                    &Response {
                        code: Code::CONTENT,
                        options: &options,
                        payload: &body,
                    },
                )
                .unwrap();
            }
        }
    }))
}

#[test]
fn block2_download_of_100_kb_completes_intact_under_10_percent_loss() {
    let body = pattern(100_000);
    let mut net = Network::new(Duration::from_millis(20), 0.10, 7);
    let seen: Seen = Rc::default();
    let finished = Rc::new(RefCell::new(0));
    let client = net.add(
        addr(1),
        Config::default(),
        1,
        Some(recording_client(seen.clone(), finished.clone())),
    );
    net.add(
        addr(2),
        Config::default(),
        2,
        Some(large_server(body.clone(), Rc::default())),
    );
    let opts = [opt(OptionNumber::URI_PATH, b"large")];
    net.request(
        client,
        addr(2),
        &Request {
            method: Code::GET,
            options: &opts,
            payload: b"",
        },
        RequestParams::default(),
    )
    .unwrap();
    net.run_for(Duration::from_secs(3600));
    let seen = seen.borrow();
    assert_eq!(
        seen.len(),
        1,
        "one response event for the whole body; failures: {}",
        finished.borrow()
    );
    assert!(seen[0].2 == body, "body intact ({} bytes)", seen[0].2.len());
    let stats = net.nodes[client].endpoint.stats();
    assert!(stats.total_retransmissions() > 0, "the loss was real");
    // 98 blocks of 1024 bytes were requested one after another.
    let requests = net
        .sent_by(addr(1))
        .iter()
        .filter(|s| Message::parse(&s.bytes).unwrap().code() == Code::GET)
        .count();
    assert!(requests >= 98);
}

#[test]
fn block1_upload_of_100_kb_completes_intact_under_10_percent_loss() {
    let body = pattern(100_000);
    let uploads = Rc::new(RefCell::new(Vec::new()));
    let mut net = Network::new(Duration::from_millis(20), 0.10, 11);
    let seen: Seen = Rc::default();
    let finished = Rc::new(RefCell::new(0));
    let client = net.add(
        addr(1),
        Config::default(),
        1,
        Some(recording_client(seen.clone(), finished.clone())),
    );
    net.add(
        addr(2),
        Config::default(),
        2,
        Some(large_server(Vec::new(), uploads.clone())),
    );
    let opts = [opt(OptionNumber::URI_PATH, b"upload")];
    net.request(
        client,
        addr(2),
        &Request {
            method: Code::PUT,
            options: &opts,
            payload: &body,
        },
        RequestParams::default(),
    )
    .unwrap();
    net.run_for(Duration::from_secs(3600));
    assert_eq!(
        uploads.borrow().len(),
        1,
        "the application saw one request with the whole body"
    );
    assert!(uploads.borrow()[0] == body);
    assert_eq!(seen.borrow().len(), 1);
    let final_response = net
        .sent_by(addr(2))
        .iter()
        .map(|s| Message::parse(&s.bytes).unwrap())
        .filter(|m| m.code() == Code::CHANGED)
        .map(|m| m.block1().unwrap())
        .next()
        .unwrap();
    assert!(!final_response.more);
    assert!(net.nodes[client].endpoint.stats().total_retransmissions() > 0);
}

#[test]
fn block1_server_preferring_smaller_blocks_rescales_the_upload() {
    // B7: the server acknowledges block 0 with SZX 4; the client continues at 1024/256 = 4.
    let body = pattern(3000);
    let uploads = Rc::new(RefCell::new(Vec::new()));
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let server_config = Config {
        block_szx: 4,
        ..Config::default()
    };
    net.add(
        addr(2),
        server_config,
        2,
        Some(large_server(Vec::new(), uploads.clone())),
    );
    net.request(
        client,
        addr(2),
        &Request {
            method: Code::PUT,
            options: &[],
            payload: &body,
        },
        RequestParams::default(),
    )
    .unwrap();
    net.run_for(Duration::from_secs(60));
    let blocks: Vec<(u32, u8)> = net
        .sent_by(addr(1))
        .iter()
        .filter_map(|s| Message::parse(&s.bytes).unwrap().block1())
        .map(|b| (b.num, b.szx))
        .collect();
    assert_eq!(blocks[0], (0, 6));
    assert_eq!(blocks[1], (4, 4));
    assert_eq!(blocks.len(), 1 + (3000usize - 1024).div_ceil(256));
    assert!(uploads.borrow()[0] == body);
}

#[test]
fn block1_uploads_start_at_every_valid_block_size_and_szx_7_is_refused() {
    // The first block of an upload is never dropped: every SZX the configuration may hold
    // starts the transfer with its body, and the reserved 7 is refused up front.
    let body = pattern(1500);
    for szx in 0..=6u8 {
        let uploads = Rc::new(RefCell::new(Vec::new()));
        let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
        let config = Config {
            block_szx: szx,
            ..Config::default()
        };
        let client = net.add(addr(1), config, 1, None);
        net.add(
            addr(2),
            Config::default(),
            2,
            Some(large_server(Vec::new(), uploads.clone())),
        );
        net.request(
            client,
            addr(2),
            &Request {
                method: Code::PUT,
                options: &[],
                payload: &body,
            },
            RequestParams::default(),
        )
        .unwrap();
        net.run_for(Duration::from_secs(60));
        let sent = net.sent_by(addr(1));
        let first = Message::parse(&sent[0].bytes).unwrap();
        let block = first.block1().expect("the first request carries Block1");
        assert_eq!((block.num, block.more, block.szx), (0, true, szx));
        assert_eq!(first.payload().len(), 16 << szx, "SZX {szx}");
        assert!(uploads.borrow()[0] == body, "SZX {szx}");
    }
    let reserved = Config {
        block_szx: 7,
        ..Config::default()
    };
    let refused = Endpoint::new(reserved, 1).unwrap_err();
    assert_eq!(refused.to_string(), "block_szx is 7, but must be 0 to 6");
}

#[test]
fn etag_change_in_the_middle_of_a_download_is_an_error() {
    // The server keeps no copy of the body, so each block is a fresh representation.
    let no_cache = Config {
        block_cache_lifetime: Duration::ZERO,
        ..Config::default()
    };
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let counter = Rc::new(RefCell::new(0u8));
    let server = Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        if let Event::Request(id) = ev {
            *counter.borrow_mut() += 1;
            let etag = [*counter.borrow()];
            let options = [opt(OptionNumber::ETAG, &etag)];
            ep.respond(
                now,
                id,
                &Response {
                    code: Code::CONTENT,
                    options: &options,
                    payload: &[1; 3000],
                },
            )
            .unwrap();
        }
    }));
    net.add(addr(2), no_cache, 2, Some(server));
    net.request(
        client,
        addr(2),
        &Request::new(Code::GET),
        RequestParams::default(),
    )
    .unwrap();
    net.run_for(Duration::from_secs(10));
    assert!(matches!(
        net.nodes[client].events[..],
        [(
            _,
            Event::Failed {
                failure: Failure::ProtocolError,
                ..
            }
        )]
    ));
}

#[test]
fn block1_out_of_order_gets_4_08_and_oversize_gets_4_13_with_size1() {
    let config = Config {
        max_body_size: 2048,
        ..Config::default()
    };
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let server = net.add(
        addr(2),
        config,
        2,
        Some(large_server(Vec::new(), Rc::default())),
    );
    let mut buf = [0u8; 1200];
    let mut send =
        |net: &mut Network, mid: u16, block: [u8; 1], size1: Option<u16>, payload: &[u8]| {
            let mut enc = MessageEncoder::new(
                &mut buf,
                MessageType::Confirmable,
                Code::PUT,
                mid,
                &[mid as u8],
            )
            .unwrap();
            enc.option(OptionNumber::BLOCK1, &block).unwrap();
            if let Some(s) = size1 {
                enc.option(OptionNumber::SIZE1, &s.to_be_bytes()).unwrap();
            }
            enc.payload(payload).unwrap();
            let n = enc.finish();
            let d = buf[..n].to_vec();
            net.inject(addr(1), server, &d);
            let reply = Message::parse(&net.log.last().unwrap().bytes).unwrap();
            (reply.code(), reply.uint_option(OptionNumber::SIZE1))
        };
    // Block 1 (NUM 1, M 1, SZX 6 = 0x1E) without block 0.
    assert_eq!(
        send(&mut net, 1, [0x1E], None, &[0; 1024]).0,
        Code::REQUEST_ENTITY_INCOMPLETE
    );
    // Announced size over the limit.
    assert_eq!(
        send(&mut net, 2, [0x0E], Some(5000), &[0; 1024]),
        (Code::REQUEST_ENTITY_TOO_LARGE, Some(2048))
    );
    // Growing over the limit without announcing it.
    assert_eq!(
        send(&mut net, 3, [0x0E], None, &[0; 1024]).0,
        Code::CONTINUE
    );
    assert_eq!(
        send(&mut net, 4, [0x1E], None, &[0; 1024]).0,
        Code::CONTINUE
    );
    assert_eq!(
        send(&mut net, 5, [0x2E], None, &[0; 1024]),
        (Code::REQUEST_ENTITY_TOO_LARGE, Some(2048))
    );
}

// ---------------------------------------------------------------- observe

const TEMP: u64 = 42;

/// A server whose /temp is observable; the test notifies through the endpoint.
fn observable_server() -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    Box::new(FnApp(|ep: &mut Endpoint, now: Instant, ev: Event| {
        if let Event::Request(id) = ev {
            ep.respond_observable(now, id, TEMP, &Response::with_payload(Code::CONTENT, b"20"))
                .unwrap();
        }
    }))
}

/// Registers node `client` as an observer of /temp on addr(2) and lets the registration
/// complete.
fn observe(net: &mut Network, client: usize) -> covey_proto::RequestId {
    let opts = observe_request();
    let request = Request {
        method: Code::GET,
        options: &opts,
        payload: b"",
    };
    let id = net
        .request(client, addr(2), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(1));
    id
}

fn observe_request() -> [covey_core::CoapOption<'static>; 2] {
    [
        opt(OptionNumber::OBSERVE, &[]),
        opt(OptionNumber::URI_PATH, b"temp"),
    ]
}

#[test]
fn observe_delivers_notifications_until_cancelled() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let seen: Seen = Rc::default();
    let finished = Rc::new(RefCell::new(0));
    let client = net.add(
        addr(1),
        Config::default(),
        1,
        Some(recording_client(seen.clone(), finished)),
    );
    let server = net.add(
        addr(2),
        Config {
            observe_con_every: 3,
            ..Config::default()
        },
        2,
        Some(observable_server()),
    );
    let id = observe(&mut net, client);
    assert_eq!(net.nodes[server].endpoint.observer_count(TEMP), 1);
    for value in ["21", "22", "23", "24"] {
        let now = net.now;
        net.nodes[server].endpoint.notify(
            now,
            TEMP,
            &Response::with_payload(Code::CONTENT, value.as_bytes()),
        );
        net.flush(server);
        net.run_for(Duration::from_secs(5));
    }
    let payloads: Vec<String> = seen
        .borrow()
        .iter()
        .map(|s| String::from_utf8(s.2.clone()).unwrap())
        .collect();
    assert_eq!(payloads, ["20", "21", "22", "23", "24"]);
    assert!(
        seen.borrow().iter().all(|s| !s.3),
        "an observation is never 'last' while it runs"
    );
    // The registration's answer went as a CON of its own (the client's address was not
    // verified; its ACK verified it); every third notification was confirmable; the client
    // acknowledged them.
    let types: Vec<MessageType> = net
        .sent_by(addr(2))
        .iter()
        .map(|s| Message::parse(&s.bytes).unwrap())
        .filter(|m| m.code() == Code::CONTENT)
        .map(|m| m.message_type())
        .collect();
    use MessageType::*;
    assert_eq!(
        types,
        [
            Confirmable,
            NonConfirmable,
            NonConfirmable,
            Confirmable,
            NonConfirmable
        ]
    );
    // Cancelling politely deregisters on the server.
    let now = net.now;
    net.nodes[client]
        .endpoint
        .cancel_observation(now, id)
        .unwrap();
    net.flush(client);
    net.run_for(Duration::from_secs(1));
    assert_eq!(net.nodes[server].endpoint.observer_count(TEMP), 0);
}

#[test]
fn forgetting_an_observation_makes_the_next_notification_reset_it() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let server = net.add(addr(2), Config::default(), 2, Some(observable_server()));
    let id = observe(&mut net, client);
    let now = net.now;
    assert!(net.nodes[client].endpoint.cancel(now, id));
    net.nodes[server]
        .endpoint
        .notify(now, TEMP, &Response::with_payload(Code::CONTENT, b"x"));
    net.flush(server);
    net.run_for(Duration::from_secs(1));
    let last = Message::parse(&net.sent_by(addr(1)).last().unwrap().bytes).unwrap();
    assert_eq!(last.message_type(), MessageType::Reset);
    assert_eq!(
        net.nodes[server].endpoint.observer_count(TEMP),
        0,
        "RST to a NON notification removes the observer"
    );
}

#[test]
fn unacknowledged_con_notification_removes_the_observer() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let server = net.add(
        addr(2),
        Config {
            observe_con_every: 1,
            ..Config::default()
        },
        2,
        Some(observable_server()),
    );
    observe(&mut net, client);
    // The client goes silent.
    net.drop_rule = Some(Box::new(|from, _, _| *from == addr(1)));
    let now = net.now;
    net.nodes[server]
        .endpoint
        .notify(now, TEMP, &Response::with_payload(Code::CONTENT, b"x"));
    net.flush(server);
    net.run_for(Duration::from_secs(30));
    assert_eq!(
        net.nodes[server].endpoint.observer_count(TEMP),
        1,
        "still retransmitting"
    );
    net.run_for(Duration::from_secs(100));
    assert_eq!(net.nodes[server].endpoint.observer_count(TEMP), 0);
}

#[test]
fn error_notification_and_plain_get_end_the_observation() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let server = net.add(addr(2), Config::default(), 2, Some(observable_server()));
    observe(&mut net, client);
    let now = net.now;
    net.nodes[server]
        .endpoint
        .notify(now, TEMP, &Response::new(Code::NOT_FOUND));
    net.flush(server);
    net.run_for(Duration::from_secs(1));
    assert_eq!(net.nodes[server].endpoint.observer_count(TEMP), 0);
    let last = net.nodes[client].events.last().unwrap().1;
    assert!(
        matches!(last, Event::Response { last: true, .. }),
        "a 4.04 notification ends it for the client"
    );
}

#[test]
fn observers_are_told_apart_by_address_and_token() {
    // Raw datagrams answer no Echo challenge: address verification is off here (its own
    // tests are in amplification.rs).
    let config = Config {
        amplification: covey_proto::AmplificationLimit::off(),
        ..Config::default()
    };
    let mut server = Endpoint::new(config, 7).unwrap();
    let now = Instant::from_secs(1);
    let mut out = vec![0u8; 1280];
    // A NON GET of /temp with token 7, with or without Observe 0, from `from`; returns
    // whether the server's answer registered it.
    let mut get = |server: &mut Endpoint, from: SocketAddr, mid: u16, observe: bool| {
        let mut buf = [0u8; 64];
        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::NonConfirmable, Code::GET, mid, &[7])
                .unwrap();
        if observe {
            enc.option(OptionNumber::OBSERVE, &[]).unwrap();
        }
        enc.option(OptionNumber::URI_PATH, b"temp").unwrap();
        let size = enc.finish();
        server.handle_datagram(now, from, covey_proto::LocalAddr::UNICAST, &buf[..size]);
        let mut registered = None;
        while let Some(event) = server.poll_event() {
            if let Event::Request(id) = event {
                let response = Response::with_payload(Code::CONTENT, b"20");
                registered = Some(server.respond_observable(now, id, TEMP, &response).unwrap());
            }
        }
        while server.poll_transmit(now, &mut out).is_some() {}
        registered.expect("the request reached the application")
    };
    let (a, b) = (addr(1), addr(3));
    assert!(get(&mut server, a, 1, true));
    assert!(get(&mut server, b, 1, true), "same token, other client");
    assert_eq!(server.observer_count(TEMP), 2);
    assert!(get(&mut server, a, 2, true), "a renewal");
    assert_eq!(
        server.observer_count(TEMP),
        2,
        "a renewal is not a second observer"
    );
    assert!(!get(&mut server, a, 3, false), "a plain GET deregisters");
    assert_eq!(server.observer_count(TEMP), 1, "only the client that asked");
    assert!(!get(&mut server, a, 4, false));
    assert_eq!(server.observer_count(TEMP), 1);
    assert!(!get(&mut server, b, 2, false));
    assert_eq!(server.observer_count(TEMP), 0);
}

#[test]
fn client_drops_reordered_and_duplicated_notifications() {
    // Notifications are injected by hand to control their order exactly.
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let seen: Seen = Rc::default();
    let client = net.add(
        addr(1),
        Config::default(),
        1,
        Some(recording_client(seen.clone(), Rc::default())),
    );
    let opts = observe_request();
    net.request(
        client,
        addr(2),
        &Request {
            method: Code::GET,
            options: &opts,
            payload: b"",
        },
        RequestParams::NON,
    )
    .unwrap();
    let token = Message::parse(&net.log[0].bytes).unwrap().token();
    let notification = |mid: u16, seq: u32, payload: &str| {
        let mut buf = [0u8; 64];
        let mut enc = MessageEncoder::new(
            &mut buf,
            MessageType::NonConfirmable,
            Code::CONTENT,
            mid,
            token.as_bytes(),
        )
        .unwrap();
        enc.uint_option(OptionNumber::OBSERVE, seq).unwrap();
        enc.payload(payload.as_bytes()).unwrap();
        let n = enc.finish();
        buf[..n].to_vec()
    };
    for (mid, seq, p) in [
        (1, 10, "a"),
        (2, 12, "c"),
        (3, 11, "b-late"),
        (2, 12, "c"),
        (4, 12, "c-again"),
        (5, 14, "e"),
    ] {
        let d = notification(mid, seq, p);
        net.inject(addr(2), client, &d);
        net.run_for(Duration::from_millis(100));
    }
    // 13 was lost: fine. 11 arrived after 12: stale. MID 2 twice: duplicate. Seq 12 again
    // with a new MID: not newer.
    let payloads: Vec<String> = seen
        .borrow()
        .iter()
        .map(|s| String::from_utf8(s.2.clone()).unwrap())
        .collect();
    assert_eq!(payloads, ["a", "c", "e"]);
    let stats = net.nodes[client].endpoint.stats();
    assert_eq!(stats.duplicates, 1);
    assert_eq!(stats.drops_of(covey_proto::DropCause::StaleNotification), 2);
    // After 128 s any notification is fresh again (the time rule).
    net.run_for(Duration::from_secs(130));
    let d = notification(9, 3, "after-a-while");
    net.inject(addr(2), client, &d);
    assert_eq!(seen.borrow().last().unwrap().2, b"after-a-while");
}

// ---------------------------------------------------------------- multicast

fn group() -> IpAddr {
    IpAddr::V6(Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 0xfd))
}

#[test]
fn multicast_request_collects_five_responses_spread_over_the_leisure() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 3);
    let seen: Seen = Rc::default();
    let finished = Rc::new(RefCell::new(0));
    let client = net.add(
        addr(1),
        Config::default(),
        1,
        Some(recording_client(seen.clone(), finished.clone())),
    );
    let calls = Rc::new(RefCell::new(0));
    for n in 0..5u16 {
        let calls = calls.clone();
        let app = Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
            if let Event::Request(id) = ev {
                assert!(ep.request(id).unwrap().is_multicast());
                *calls.borrow_mut() += 1;
                let body = format!("server {n}");
                ep.respond(
                    now,
                    id,
                    &Response::with_payload(Code::CONTENT, body.as_bytes()),
                )
                .unwrap();
            }
        }));
        let node = net.add(addr(10 + n), Config::default(), 100 + n as u64, Some(app));
        net.join(node, group());
    }
    let start = net.now;
    let destination = SocketAddr::new(group(), 5683);
    let get = Request::new(Code::GET);
    assert_eq!(
        net.nodes[client]
            .endpoint
            .send_request(start, destination, &get, RequestParams::default()),
        Err(RequestError::ConfirmableMulticast)
    );
    net.nodes[client]
        .endpoint
        .send_request(start, destination, &get, RequestParams::NON)
        .unwrap();
    net.flush(client);
    net.run_for(Duration::from_secs(10));
    let seen = seen.borrow();
    assert_eq!(seen.len(), 5);
    let sources: std::collections::BTreeSet<SocketAddr> = seen.iter().map(|s| s.1).collect();
    assert_eq!(sources.len(), 5, "one response from each server");
    let offsets: Vec<f64> = seen.iter().map(|s| (s.0 - start).as_secs_f64()).collect();
    let leisure = 5.0;
    assert!(
        offsets.iter().all(|&t| t <= leisure + 0.03),
        "inside the leisure window: {offsets:?}"
    );
    let spread = offsets.iter().cloned().fold(0.0, f64::max)
        - offsets.iter().cloned().fold(f64::MAX, f64::min);
    assert!(
        spread > 1.0,
        "responses spread over the leisure: {offsets:?}"
    );
    assert_eq!(*finished.borrow(), 1, "the window closed once");
}

#[test]
fn servers_suppress_errors_to_multicast_requests() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 3);
    let client = net.add(addr(1), Config::default(), 1, None);
    let app = Box::new(FnApp(|ep: &mut Endpoint, now: Instant, ev: Event| {
        if let Event::Request(id) = ev {
            ep.respond(now, id, &Response::new(Code::NOT_FOUND))
                .unwrap();
        }
    }));
    let server = net.add(
        addr(10),
        Config {
            leisure: Some(Duration::from_secs(1)),
            ..Config::default()
        },
        5,
        Some(app),
    );
    net.join(server, group());
    let now = net.now;
    net.nodes[client]
        .endpoint
        .send_request(
            now,
            SocketAddr::new(group(), 5683),
            &Request::new(Code::GET),
            RequestParams::NON,
        )
        .unwrap();
    net.flush(client);
    // An unknown critical option by multicast: no 4.02, no RST either.
    let mut buf = [0u8; 32];
    let mut enc =
        MessageEncoder::new(&mut buf, MessageType::NonConfirmable, Code::GET, 50, &[5]).unwrap();
    enc.option(OptionNumber(2049), b"x").unwrap();
    let n = enc.finish();
    let now = net.now;
    net.nodes[server].endpoint.handle_datagram(
        now,
        addr(1),
        covey_proto::LocalAddr::multicast(group()),
        &buf[..n],
    );
    net.flush(server);
    net.run_for(Duration::from_secs(10));
    assert!(net.sent_by(addr(10)).is_empty());
    assert_eq!(
        net.nodes[server]
            .endpoint
            .stats()
            .drops_of(covey_proto::DropCause::MulticastSuppressed),
        2
    );
}

#[test]
fn large_post_with_a_large_response_runs_the_handler_once() {
    // RFC 7959 §3.3: Block1 upload, then the response's remaining blocks are fetched with
    // Block2 requests that the server answers from the body it kept, not by posting again.
    let body = pattern(3000);
    let calls = Rc::new(RefCell::new(Vec::new()));
    let calls2 = calls.clone();
    let server = Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        if let Event::Request(id) = ev {
            let req = ep.request(id).unwrap();
            calls2.borrow_mut().push(req.payload().len());
            let reply: Vec<u8> = req.payload().iter().rev().copied().collect();
            ep.respond(now, id, &Response::with_payload(Code::CHANGED, &reply))
                .unwrap();
        }
    }));
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let seen: Seen = Rc::default();
    let client = net.add(
        addr(1),
        Config::default(),
        1,
        Some(recording_client(seen.clone(), Rc::default())),
    );
    net.add(addr(2), Config::default(), 2, Some(server));
    let opts = [opt(OptionNumber::URI_PATH, b"large-post")];
    net.request(
        client,
        addr(2),
        &Request {
            method: Code::POST,
            options: &opts,
            payload: &body,
        },
        RequestParams::default(),
    )
    .unwrap();
    net.run_for(Duration::from_secs(30));
    assert_eq!(
        *calls.borrow(),
        [3000],
        "the handler ran once, with the whole body"
    );
    let expected: Vec<u8> = body.iter().rev().copied().collect();
    assert_eq!(seen.borrow().len(), 1);
    assert!(
        seen.borrow()[0].2 == expected,
        "the whole response body arrived"
    );
}

#[test]
fn large_error_responses_are_sent_block_wise_too() {
    let diagnostic = pattern(2500);
    let d2 = diagnostic.clone();
    let server = Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        if let Event::Request(id) = ev {
            ep.respond(now, id, &Response::with_payload(Code::GATEWAY_TIMEOUT, &d2))
                .unwrap();
        }
    }));
    let mut net = Network::new(Duration::from_millis(5), 0.0, 1);
    let codes = Rc::new(RefCell::new(Vec::new()));
    let codes2 = codes.clone();
    let client_app = Box::new(FnApp(move |ep: &mut Endpoint, _now: Instant, ev: Event| {
        if let Event::Response { key, last, .. } = ev {
            let r = ep.response(key).unwrap();
            codes2
                .borrow_mut()
                .push((r.message.code(), r.payload().to_vec(), last));
        }
    }));
    let client = net.add(addr(1), Config::default(), 1, Some(client_app));
    net.add(addr(2), Config::default(), 2, Some(server));
    net.request(
        client,
        addr(2),
        &Request::new(Code::GET),
        RequestParams::default(),
    )
    .unwrap();
    net.run_for(Duration::from_secs(10));
    assert_eq!(
        *codes.borrow(),
        vec![(Code::GATEWAY_TIMEOUT, diagnostic, true)]
    );
}

#[test]
fn requests_tell_which_local_socket_they_arrived_on() {
    let mut ep = Endpoint::new(Config::default(), 1).unwrap();
    let local: SocketAddr = "[2001:db8::99]:5683".parse().unwrap();
    let mut buf = [0u8; 16];
    let n = MessageEncoder::new(&mut buf, MessageType::NonConfirmable, Code::GET, 1, &[1])
        .unwrap()
        .finish();
    ep.handle_datagram(
        Instant::ZERO,
        addr(1),
        covey_proto::LocalAddr::UNICAST.on_socket(local),
        &buf[..n],
    );
    let Some(Event::Request(id)) = ep.poll_event() else {
        panic!("a request")
    };
    let r = ep.request(id).unwrap();
    assert_eq!(
        (r.local, r.group, r.is_multicast()),
        (Some(local), None, false)
    );
}

#[test]
fn reset_of_a_replaced_con_notification_still_ends_the_observation() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let client = net.add(addr(1), Config::default(), 1, None);
    let server_config = Config {
        observe_con_every: 1,
        ..Config::default()
    };
    let server = net.add(addr(2), server_config, 2, Some(observable_server()));
    observe(&mut net, client);
    // Notifications are lost; the second replaces the first while it is unconfirmed.
    net.drop_rule = Some(Box::new(|from, _, _| *from == addr(2)));
    let before = net.log.len();
    for value in ["a", "b"] {
        let now = net.now;
        net.nodes[server].endpoint.notify(
            now,
            TEMP,
            &Response::with_payload(Code::CONTENT, value.as_bytes()),
        );
        net.flush(server);
        net.run_for(Duration::from_millis(100));
    }
    let mids: Vec<u16> = net.log[before..]
        .iter()
        .map(|s| Message::parse(&s.bytes).unwrap().message_id())
        .collect();
    assert_eq!(mids.len(), 2);
    assert_ne!(mids[0], mids[1]);
    let mut rst = [0u8; 4];
    MessageEncoder::new(&mut rst, MessageType::Reset, Code::EMPTY, mids[0], &[]).unwrap();
    net.inject(addr(1), server, &rst);
    assert_eq!(net.nodes[server].endpoint.observer_count(TEMP), 0);
}
