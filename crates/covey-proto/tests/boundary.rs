//! What the engine tells its host about each datagram: a `Transmit` names its local source
//! and what it is, `handle_datagram` says what became of the input, `Received` knows its
//! wire length, and `Stats` count datagrams and bytes both ways.

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{
    opt, Config, DropCause, Duration, Endpoint, Event, Instant, LocalAddr, Reception, Request,
    RequestParams, Response, Transmit,
};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

fn addr(n: u16, port: u16) -> SocketAddr {
    SocketAddr::new(
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, n)),
        port,
    )
}

fn get(confirmable: bool) -> (Request<'static>, RequestParams) {
    static PATH: [covey_core::CoapOption<'static>; 1] =
        [opt(OptionNumber::URI_PATH, b"temp" as &[u8])];
    (
        Request {
            options: &PATH,
            ..Request::new(Code::GET)
        },
        RequestParams {
            confirmable,
            ..RequestParams::default()
        },
    )
}

/// Every datagram `ep` wants to send now.
fn drain(ep: &mut Endpoint, now: Instant) -> Vec<(Transmit, Vec<u8>)> {
    let mut buf = vec![0u8; 1280];
    let mut out = Vec::new();
    while let Some(t) = ep.poll_transmit(now, &mut buf) {
        out.push((t, buf[..t.size].to_vec()));
    }
    out
}

#[test]
fn a_transmit_says_what_it_is_and_which_request_it_serves() {
    let mut client = Endpoint::new(Config::default(), 1).unwrap();
    let now = Instant::from_secs(1);
    let (request, params) = get(true);
    let con = client
        .send_request(now, addr(2, 5683), &request, params)
        .expect("starts");
    let sent = drain(&mut client, now);
    assert_eq!(sent.len(), 1);
    let (t, bytes) = &sent[0];
    assert_eq!(
        (t.message_type, t.code, t.request, t.retransmission),
        (MessageType::Confirmable, Code::GET, Some(con), 0)
    );
    assert_eq!(
        t.message_id,
        Message::parse(bytes).expect("valid").message_id()
    );
    // Retransmissions are numbered.
    let mut numbers = Vec::new();
    let mut at = now;
    while let Some(next) = client.poll_timeout() {
        at = next;
        client.handle_timeout(at);
        for (t, _) in drain(&mut client, at) {
            assert_eq!(t.request, Some(con));
            numbers.push(t.retransmission);
        }
        if numbers.len() == 4 {
            break;
        }
    }
    assert_eq!(numbers, [1, 2, 3, 4]);
    // A NON request is named too, through its token.
    let (request, params) = get(false);
    let non = client
        .send_request(at, addr(3, 5683), &request, params)
        .expect("starts");
    let sent = drain(&mut client, at);
    assert_eq!(sent[0].0.request, Some(non));
    assert_eq!(sent[0].0.message_type, MessageType::NonConfirmable);
}

#[test]
fn a_request_leaves_from_the_socket_its_params_name_and_so_do_its_retransmissions() {
    let mut client = Endpoint::new(Config::default(), 3).unwrap();
    let now = Instant::from_secs(1);
    let secured = addr(1, 5684);
    let (request, params) = get(true);
    let pinned = RequestParams {
        source: Some(secured),
        ..params
    };
    client
        .send_request(now, addr(2, 5684), &request, pinned)
        .expect("starts");
    // Without a source: no socket named, the host picks.
    client
        .send_request(now, addr(3, 5683), &request, params)
        .expect("starts");
    let sent = drain(&mut client, now);
    let from = |to: SocketAddr, sent: &[(Transmit, Vec<u8>)]| {
        sent.iter()
            .filter(|(t, _)| t.destination == to)
            .map(|(t, _)| t.source.socket)
            .collect::<Vec<_>>()
    };
    assert_eq!(from(addr(2, 5684), &sent), [Some(secured)]);
    assert_eq!(from(addr(3, 5683), &sent), [None]);
    // The pinned request's first retransmission (the other one's may come first).
    let mut again = Vec::new();
    for _ in 0..4 {
        let at = client.poll_timeout().expect("retransmission timer");
        client.handle_timeout(at);
        again = from(addr(2, 5684), &drain(&mut client, at));
        if !again.is_empty() {
            break;
        }
    }
    assert_eq!(again, [Some(secured)]);
}

#[test]
fn replies_leave_from_the_socket_the_peer_reached_and_name_the_group() {
    let mut server = Endpoint::new(Config::default(), 2).unwrap();
    let socket_a = addr(1, 5683);
    let socket_b = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 5683);
    let now = Instant::from_secs(1);
    let mut clients = [
        Endpoint::new(Config::default(), 3).unwrap(),
        Endpoint::new(Config::default(), 4).unwrap(),
    ];
    let (request, params) = get(true);
    for (i, client) in clients.iter_mut().enumerate() {
        client
            .send_request(now, addr(1, 5683), &request, params)
            .expect("starts");
        let (_, bytes) = drain(client, now).remove(0);
        let socket = [socket_a, socket_b][i];
        let local = LocalAddr::UNICAST.on_socket(socket);
        assert_eq!(
            server.handle_datagram(now, addr(10 + i as u16, 40_000), local, &bytes),
            Reception::Accepted
        );
    }
    // The second request is answered late: a separate response, still from its socket.
    let ids: Vec<_> = std::iter::from_fn(|| server.poll_event())
        .map(|e| match e {
            Event::Request(id) => id,
            other => panic!("{other:?}"),
        })
        .collect();
    server
        .respond(now, ids[0], &Response::with_payload(Code::CONTENT, b"21"))
        .expect("answered");
    let sent = drain(&mut server, now);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0.source.socket, Some(socket_a));
    assert_eq!(sent[0].0.message_type, MessageType::Acknowledgement);
    assert_eq!(
        sent[0].0.request, None,
        "a response is not one of our requests"
    );
    let later = now + Duration::from_secs(3);
    server.handle_timeout(later);
    let empty_ack = drain(&mut server, later);
    assert_eq!(empty_ack[0].0.code, Code::EMPTY);
    assert_eq!(empty_ack[0].0.source.socket, Some(socket_b));
    server
        .respond(later, ids[1], &Response::with_payload(Code::CONTENT, b"22"))
        .expect("answered");
    let separate = drain(&mut server, later);
    assert_eq!(separate[0].0.message_type, MessageType::Confirmable);
    assert_eq!(separate[0].0.source.socket, Some(socket_b));

    // A request to a group is answered after the leisure, naming the group.
    let group = IpAddr::V6(Ipv6Addr::new(0xff05, 0, 0, 0, 0, 0, 0, 0xfd));
    let mut mc_client = Endpoint::new(Config::default(), 5).unwrap();
    let (request, params) = get(false);
    mc_client
        .send_request(later, SocketAddr::new(group, 5683), &request, params)
        .expect("starts");
    let (_, bytes) = drain(&mut mc_client, later).remove(0);
    let local = LocalAddr::multicast(group).on_socket(socket_a);
    server.handle_datagram(later, addr(20, 40_000), local, &bytes);
    let Some(Event::Request(id)) = server.poll_event() else {
        panic!("no request")
    };
    server
        .respond(later, id, &Response::with_payload(Code::CONTENT, b"23"))
        .expect("answered");
    let mut responses = Vec::new();
    while responses.is_empty() {
        let at = server.poll_timeout().expect("leisure timer");
        server.handle_timeout(at);
        responses = drain(&mut server, at);
    }
    assert_eq!(responses[0].0.source.multicast_group, Some(group));
    assert_eq!(responses[0].0.source.socket, Some(socket_a));
}

#[test]
fn handle_datagram_says_what_became_of_each_datagram() {
    let mut server = Endpoint::new(Config::default(), 2).unwrap();
    let now = Instant::from_secs(1);
    let mut buf = [0u8; 64];
    let size = {
        let mut enc = MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, 7, &[1])
            .expect("header");
        enc.option(OptionNumber::URI_PATH, b"x").expect("option");
        enc.finish()
    };
    let peer = addr(9, 40_000);
    let u = LocalAddr::UNICAST;
    assert_eq!(
        server.handle_datagram(now, peer, u, &buf[..size]),
        Reception::Accepted
    );
    let Some(Event::Request(id)) = server.poll_event() else {
        panic!("no request")
    };
    assert_eq!(
        server.request(id).expect("held").wire_len,
        size,
        "Received knows its wire length"
    );
    assert_eq!(
        server.handle_datagram(now, peer, u, &buf[..size]),
        Reception::Duplicate
    );
    assert_eq!(
        server.handle_datagram(now, peer, u, &[0x40, 0x01]),
        Reception::Rejected(DropCause::FormatError)
    );
    // An ACK for nothing this endpoint sent.
    assert_eq!(
        server.handle_datagram(now, peer, u, &[0x60, 0x00, 0x12, 0x34]),
        Reception::Rejected(DropCause::Unmatched)
    );
    let stats = server.stats();
    assert_eq!(stats.received, 4);
    assert_eq!(stats.bytes_received, (2 * size + 2 + 4) as u64);
}

#[test]
fn a_loopback_source_that_came_in_on_another_interface_is_dropped_unanswered() {
    let mut server = Endpoint::new(Config::default(), 3).unwrap();
    let now = Instant::from_secs(1);
    let mut buf = [0u8; 64];
    let size = {
        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::DELETE, 8, &[2])
                .expect("header");
        enc.option(OptionNumber::URI_PATH, b"x").expect("option");
        enc.finish()
    };
    let network = LocalAddr::UNICAST.arrived_on_loopback(false);
    for spoofed in ["127.0.0.1:42222", "[::ffff:127.0.0.1]:42222", "[::1]:42222"] {
        let source: SocketAddr = spoofed.parse().unwrap();
        assert_eq!(
            server.handle_datagram(now, source, network, &buf[..size]),
            Reception::Rejected(DropCause::SpoofedLoopback),
            "{spoofed}"
        );
    }
    assert!(server.poll_event().is_none());
    assert!(drain(&mut server, now).is_empty(), "nothing answered");
    assert_eq!(server.stats().drops_of(DropCause::SpoofedLoopback), 3);
    // The same from the loopback interface, or from a host that cannot tell, is a request;
    // the receiving side knows how it came in.
    let local = "127.0.0.1:42222".parse().unwrap();
    for (how, from) in [(Some(true), local), (None, addr(9, 40_000))] {
        let arrived = LocalAddr {
            on_loopback: how,
            ..LocalAddr::UNICAST
        };
        assert_eq!(
            server.handle_datagram(now, from, arrived, &buf[..size]),
            Reception::Accepted
        );
        let Some(Event::Request(id)) = server.poll_event() else {
            panic!("no request")
        };
        assert_eq!(server.request(id).expect("held").on_loopback, how);
    }
    // A network address on the network interface is a request like any other.
    let remote = LocalAddr::UNICAST.arrived_on_loopback(false);
    assert_eq!(
        server.handle_datagram(now, addr(10, 40_000), remote, &buf[..size]),
        Reception::Accepted
    );
}

#[test]
fn stats_count_bytes_out_and_a_full_outbox() {
    let config = Config {
        max_buffers: 4,
        ..Config::default()
    };
    let mut client = Endpoint::new(config, 1).unwrap();
    let now = Instant::from_secs(1);
    let (request, params) = get(true);
    // CON requests to many peers, never polled out: the outbox queue (2 x max_buffers
    // entries) fills, and what does not fit is dropped and counted (and retransmitted).
    for n in 0..20 {
        let _ = client.send_request(now, addr(100 + n, 5683), &request, params);
    }
    let sent = drain(&mut client, now);
    let stats = client.stats();
    assert_eq!(stats.transmissions, sent.len() as u64);
    assert_eq!(
        stats.bytes_sent,
        sent.iter().map(|(t, _)| t.size as u64).sum::<u64>()
    );
    assert_eq!(sent.len(), 8, "the queue holds 2 x max_buffers");
    assert_eq!(stats.drops_of(DropCause::OutboxFull), 12);
}
