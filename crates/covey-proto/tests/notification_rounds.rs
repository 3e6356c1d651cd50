//! Notification rounds to many observers, on the in-memory network: every observer gets the
//! newest state once, a round holds one shared representation rather than a datagram per
//! observer (counted by the global allocator), an observer still due when the state changes
//! again gets only the newest, and a round takes turns with the responses queued meanwhile.

mod counting_alloc;
mod observers;
mod pair;

use counting_alloc::{count, CountingAlloc};
use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{Config, Duration, Endpoint, Event, Instant, LocalAddr, Response};
use observers::{notification_of, register, source, RESOURCE};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// A server as `covey serve` sizes it for `n` observers, with `n` observers registered.
fn server_with_observers(n: usize) -> (Endpoint, Instant) {
    let config = Config {
        max_observers: n,
        max_buffers: 2 * n + 1024,
        ..Config::default()
    };
    server_with(config, n)
}

/// A server with `config` and `n` observers registered.
fn server_with(config: Config, n: usize) -> (Endpoint, Instant) {
    let mut server = Endpoint::new(config, 3).unwrap();
    let mut now = Instant::from_secs(10);
    let (mut buf, mut out) = (vec![0u8; 1280], vec![0u8; 1280]);
    let response = Response::with_payload(Code::CONTENT, b"12:00:00");
    for k in 0..n {
        now = now + Duration::from_micros(50);
        register(&mut server, now, k, &response, &mut buf, &mut out);
    }
    assert_eq!(server.observer_count(RESOURCE), n);
    (server, now)
}

/// What one observer has been sent: how many notifications, the last Observe value and
/// whether the last payload was the newest state.
#[derive(Clone, Copy, Default)]
struct Received {
    count: usize,
    observe: u32,
    newest: bool,
}

/// Hands every datagram the server sends to its observer's record, checking it is a NON
/// notification to the observer's own socket; returns how many were sent.
fn deliver(
    server: &mut Endpoint,
    now: Instant,
    out: &mut [u8],
    newest: &[u8],
    seen: &mut [Received],
) -> usize {
    let mut sent = 0;
    while let Some(t) = server.poll_transmit(now, out) {
        assert_eq!(t.message_type, MessageType::NonConfirmable);
        let (k, observe, payload) = notification_of(&out[..t.size]);
        assert_eq!(t.destination, source(k), "observer {k}'s own socket");
        let r = &mut seen[k];
        if r.count > 0 {
            assert!(
                covey_proto::observe::is_newer(observe, now, r.observe, now),
                "observer {k}'s Observe values increase"
            );
        }
        *r = Received {
            count: r.count + 1,
            observe,
            newest: payload == newest,
        };
        sent += 1;
    }
    sent
}

#[test]
fn a_round_to_10_000_observers_reaches_each_once_in_constant_memory_per_round() {
    const N: usize = 10_000;
    let (mut server, mut now) = server_with_observers(N);
    let mut out = vec![0u8; 1280];
    let mut seen = vec![Received::default(); N];
    let mut heap = Vec::new();
    for round in 0..3u8 {
        now = now + Duration::from_secs(1);
        let state = [b'0' + round; 8];
        let response = Response::with_payload(Code::CONTENT, &state);
        let (sent, c) = count(|| {
            assert_eq!(server.notify(now, RESOURCE, &response), N);
            deliver(&mut server, now, &mut out, &state, &mut seen)
        });
        assert_eq!(sent, N, "round {round}: one notification per observer");
        assert!(
            seen.iter()
                .all(|r| r.count == round as usize + 1 && r.newest),
            "round {round}: every observer got the new state once"
        );
        heap.push(c.net_bytes);
        if round > 0 {
            assert_eq!(c.count, 0, "round {round}: a warm round allocates nothing");
        }
    }
    println!(
        "rounds to {N} observers held {} B, {} B and {} B more heap",
        heap[0], heap[1], heap[2]
    );
    // The first round indexes each observer's last message ID, so an RST to it ends the
    // observation (a 5-byte bucket); a round itself keeps nothing per observer.
    assert!(
        heap[0] / N as i64 <= 16,
        "first round: {} B per observer",
        heap[0] / N as i64
    );
    for (round, &bytes) in heap.iter().enumerate().skip(1) {
        assert!(
            bytes.abs() <= 4096,
            "round {round} held {bytes} B: not constant in the number of observers"
        );
    }
}

#[test]
fn an_observer_still_due_gets_only_the_newest_state() {
    const N: usize = 100;
    const FIRST: usize = 30;
    let (mut server, now) = server_with_observers(N);
    let mut out = vec![0u8; 1280];
    let mut seen = vec![Received::default(); N];
    assert_eq!(
        server.notify(
            now,
            RESOURCE,
            &Response::with_payload(Code::CONTENT, b"old")
        ),
        N
    );
    let mut old = 0;
    for _ in 0..FIRST {
        let t = server.poll_transmit(now, &mut out).expect("a notification");
        let (k, observe, payload) = notification_of(&out[..t.size]);
        assert_eq!(payload, b"old");
        seen[k] = Received {
            count: 1,
            observe,
            newest: false,
        };
        old += 1;
    }
    assert_eq!(
        server.notify(
            now,
            RESOURCE,
            &Response::with_payload(Code::CONTENT, b"new")
        ),
        N
    );
    let sent = deliver(&mut server, now, &mut out, b"new", &mut seen);
    assert_eq!(
        sent, N,
        "everyone gets the new state, nobody the old one twice"
    );
    assert_eq!(old + sent, N + FIRST);
    assert!(seen.iter().all(|r| r.newest));
    assert_eq!(seen.iter().filter(|r| r.count == 2).count(), FIRST);
}

#[test]
fn a_round_and_responses_take_turns() {
    const N: usize = 1_000;
    const GETS: usize = 20;
    let (mut server, now) = server_with_observers(N);
    let mut out = vec![0u8; 1280];
    let response = Response::with_payload(Code::CONTENT, b"tick");
    assert_eq!(server.notify(now, RESOURCE, &response), N);
    for _ in 0..5 {
        server.poll_transmit(now, &mut out).expect("a notification");
    }
    // Plain GETs from another client arrive while the round is under way.
    let client = pair::addr(7, 50_000);
    for g in 0..GETS {
        let size = MessageEncoder::new(
            &mut out,
            MessageType::NonConfirmable,
            Code::GET,
            g as u16,
            &[g as u8],
        )
        .expect("header")
        .finish();
        server.handle_datagram(now, client, LocalAddr::UNICAST, &out[..size]);
        let Some(Event::Request(id)) = server.poll_event() else {
            panic!("the GET reaches the application");
        };
        server
            .respond(now, id, &Response::with_payload(Code::CONTENT, b"answer"))
            .expect("answered");
    }
    let mut positions = Vec::new();
    let mut sent = 0;
    while let Some(t) = server.poll_transmit(now, &mut out) {
        sent += 1;
        if t.destination == client {
            assert_eq!(Message::parse(&out[..t.size]).unwrap().payload(), b"answer");
            positions.push(sent);
        }
    }
    assert_eq!(positions.len(), GETS, "every response is sent");
    assert_eq!(
        positions[0], 1,
        "the first response goes before the rest of the round"
    );
    let gaps: Vec<usize> = positions.windows(2).map(|w| w[1] - w[0] - 1).collect();
    assert!(
        gaps.iter().all(|&g| g == 8),
        "8 notifications between responses, neither side starved: {gaps:?}"
    );
    assert_eq!(sent, N - 5 + GETS, "the rest of the round still goes out");
}

#[test]
fn observers_that_leave_mid_round_are_not_notified() {
    let (mut server, now) = server_with_observers(10);
    let mut out = vec![0u8; 1280];
    let response = Response::with_payload(Code::CONTENT, b"tick");
    assert_eq!(server.notify(now, RESOURCE, &response), 10);
    let t = server.poll_transmit(now, &mut out).expect("a notification");
    let (first, _, _) = notification_of(&out[..t.size]);
    // The first observer rejects its notification with an RST.
    let rst = MessageEncoder::new(&mut out, MessageType::Reset, Code::EMPTY, t.message_id, &[])
        .expect("header")
        .finish();
    server.handle_datagram(now, source(first), LocalAddr::UNICAST, &out[..rst]);
    assert_eq!(
        server.observer_count(RESOURCE),
        9,
        "the RST ends the observation"
    );
    // Another, still due, deregisters with a GET without Observe (RFC 7641 §3.6).
    let leaving = (first + 1) % 10;
    let token = (leaving as u64).to_be_bytes();
    let get = MessageEncoder::new(&mut out, MessageType::NonConfirmable, Code::GET, 77, &token)
        .expect("header")
        .finish();
    server.handle_datagram(now, source(leaving), LocalAddr::UNICAST, &out[..get]);
    while let Some(event) = server.poll_event() {
        if let Event::Request(id) = event {
            let registered = server.respond_observable(now, id, RESOURCE, &response);
            assert_eq!(registered, Ok(false));
        }
    }
    assert_eq!(server.observer_count(RESOURCE), 8);
    let mut notified = Vec::new();
    while let Some(t) = server.poll_transmit(now, &mut out) {
        let m = Message::parse(&out[..t.size]).unwrap();
        if m.options().any(|o| o.number == OptionNumber::OBSERVE) {
            notified.push(notification_of(&out[..t.size]).0);
        } else {
            assert_eq!(t.destination, source(leaving), "the plain response");
        }
    }
    notified.sort();
    let expected: Vec<usize> = (0..10).filter(|&k| k != first && k != leaving).collect();
    assert_eq!(
        notified, expected,
        "the rest of the round, to those still observing"
    );
    let mut seen = vec![Received::default(); 10];
    assert_eq!(server.notify(now, RESOURCE, &response), 8);
    assert_eq!(deliver(&mut server, now, &mut out, b"tick", &mut seen), 8);
}

#[test]
fn an_rst_to_the_last_notification_ends_only_that_observation() {
    const N: usize = 1_000;
    let (mut server, mut now) = server_with_observers(N);
    let mut out = vec![0u8; 1280];
    // Three rounds, so the message-ID index has grown and dropped earlier IDs.
    let mut mids = vec![Vec::new(); N];
    for _ in 0..3 {
        now = now + Duration::from_secs(1);
        let response = Response::with_payload(Code::CONTENT, b"tick");
        assert_eq!(server.notify(now, RESOURCE, &response), N);
        while let Some(t) = server.poll_transmit(now, &mut out) {
            mids[notification_of(&out[..t.size]).0].push(t.message_id);
        }
    }
    let mut rst = |server: &mut Endpoint, k: usize, mid: u16| {
        let size = MessageEncoder::new(&mut out, MessageType::Reset, Code::EMPTY, mid, &[])
            .expect("header")
            .finish();
        server.handle_datagram(now, source(k), LocalAddr::UNICAST, &out[..size]);
    };
    // An RST to an earlier notification, or from another socket, ends nothing.
    for (k, sent) in mids.iter().enumerate() {
        rst(&mut server, k, sent[0]);
        rst(&mut server, (k + 1) % N, sent[2]);
    }
    assert_eq!(server.observer_count(RESOURCE), N);
    for (k, sent) in mids.iter().enumerate() {
        rst(&mut server, k, sent[2]);
        assert_eq!(
            server.observer_count(RESOURCE),
            N - k - 1,
            "observer {k} ended"
        );
    }
}

#[test]
fn periodic_con_notifications_beyond_the_transmission_slots_go_non_meanwhile() {
    const N: usize = 100;
    // Every notification is due to be CON, but only 8 CON transmissions fit at once.
    let config = Config {
        max_observers: N,
        max_exchanges: 4,
        max_incoming: 4,
        observe_con_every: 1,
        ..Config::default()
    };
    let mut server = Endpoint::new(config, 3).unwrap();
    let now = Instant::from_secs(10);
    let (mut buf, mut out) = (vec![0u8; 1280], vec![0u8; 1280]);
    let response = Response::with_payload(Code::CONTENT, b"tick");
    for k in 0..N {
        register(&mut server, now, k, &response, &mut buf, &mut out);
    }
    assert_eq!(
        server.notify(now, RESOURCE, &response),
        N,
        "everyone notified"
    );
    let (mut con, mut non) = (0, 0);
    let mut seen = vec![0; N];
    while let Some(t) = server.poll_transmit(now, &mut out) {
        seen[notification_of(&out[..t.size]).0] += 1;
        match t.message_type {
            MessageType::Confirmable => con += 1,
            MessageType::NonConfirmable => non += 1,
            other => panic!("a notification sent as {other:?}"),
        }
    }
    assert_eq!((con, non), (8, N - 8), "CON while slots last, NON beyond");
    assert!(
        seen.iter().all(|&n| n == 1),
        "each observer got the state once"
    );
}

#[test]
fn a_notification_too_large_for_the_datagram_is_dropped_and_counted() {
    let (mut server, now) = server_with_observers(3);
    let mut out = vec![0u8; 1280];
    // The representation fits a datagram alone, not with an 8-byte token and Observe added.
    let big = vec![b'x'; 1268];
    let response = Response::with_payload(Code::CONTENT, &big);
    server.notify(now, RESOURCE, &response);
    assert!(
        server.poll_transmit(now, &mut out).is_none(),
        "nothing sent"
    );
    assert_eq!(server.stats().drops_of(covey_proto::DropCause::TooLarge), 3);
    // The round is over: the next state reaches everyone.
    let mut seen = vec![Received::default(); 3];
    let small = Response::with_payload(Code::CONTENT, b"tick");
    assert_eq!(server.notify(now, RESOURCE, &small), 3);
    assert_eq!(deliver(&mut server, now, &mut out, b"tick", &mut seen), 3);
}

/// Acknowledges CON notification `mid` from observer `k`'s socket.
fn ack(server: &mut Endpoint, now: Instant, k: usize, mid: u16) {
    let mut buf = [0u8; 4];
    let size = MessageEncoder::new(
        &mut buf,
        MessageType::Acknowledgement,
        Code::EMPTY,
        mid,
        &[],
    )
    .expect("header")
    .finish();
    server.handle_datagram(now, source(k), LocalAddr::UNICAST, &buf[..size]);
}

#[test]
fn a_con_notification_is_written_from_the_round_and_replaced_by_newer_state() {
    const N: usize = 5;
    let config = Config {
        max_observers: N,
        observe_con_every: 1,
        ..Config::default()
    };
    let (mut server, mut now) = server_with(config, N);
    let mut out = vec![0u8; 1280];
    let first = Response::with_payload(Code::CONTENT, b"first");
    assert_eq!(server.notify(now, RESOURCE, &first), N);
    let mut sent: Vec<Option<Vec<u8>>> = vec![None; N];
    while let Some(t) = server.poll_transmit(now, &mut out) {
        assert_eq!(t.message_type, MessageType::Confirmable);
        assert_eq!(t.retransmission, 0);
        let (k, _, payload) = notification_of(&out[..t.size]);
        assert_eq!(payload, b"first");
        assert!(
            sent[k].replace(out[..t.size].to_vec()).is_none(),
            "one copy each"
        );
    }
    // Unacknowledged, each is retransmitted byte for byte (RFC 7252 §4.2).
    now = server.poll_timeout().expect("retransmission timers");
    now = now + Duration::from_secs(3);
    server.handle_timeout(now);
    let mut resent = 0;
    while let Some(t) = server.poll_transmit(now, &mut out) {
        assert_eq!(t.retransmission, 1);
        let (k, _, _) = notification_of(&out[..t.size]);
        assert_eq!(
            Some(&out[..t.size]),
            sent[k].as_deref(),
            "observer {k}'s copy again"
        );
        resent += 1;
    }
    assert_eq!(resent, N);
    // A newer state replaces each CON in flight: a new message ID and Observe value, the
    // retransmission count kept (RFC 7641 §4.5.2), and the retransmissions carry it too.
    let second = Response::with_payload(Code::CONTENT, b"second");
    assert_eq!(server.notify(now, RESOURCE, &second), N);
    let mut replaced = [0u16; N];
    while let Some(t) = server.poll_transmit(now, &mut out) {
        let (k, observe, payload) = notification_of(&out[..t.size]);
        let old = Message::parse(sent[k].as_deref().unwrap()).unwrap();
        let (_, old_observe, _) = notification_of(sent[k].as_deref().unwrap());
        assert_eq!(
            (t.message_type, t.retransmission, payload),
            (MessageType::Confirmable, 1, &b"second"[..])
        );
        assert_ne!(t.message_id, old.message_id());
        assert!(covey_proto::observe::is_newer(
            observe,
            now,
            old_observe,
            now
        ));
        replaced[k] = t.message_id;
    }
    now = server.poll_timeout().expect("retransmission timers") + Duration::from_secs(6);
    server.handle_timeout(now);
    let mut acked = 0;
    while let Some(t) = server.poll_transmit(now, &mut out) {
        let (k, _, payload) = notification_of(&out[..t.size]);
        assert_eq!(
            (t.message_id, t.retransmission, payload),
            (replaced[k], 2, &b"second"[..])
        );
        ack(&mut server, now, k, t.message_id);
        acked += 1;
    }
    assert_eq!(acked, N);
    assert_eq!(
        server.observer_count(RESOURCE),
        N,
        "acknowledged: all still observe"
    );
    assert_eq!(server.poll_timeout(), None, "nothing left to retransmit");
    // The next round, CON again, allocates nothing: the round's representation and the
    // transmissions' entries are reused.
    let third = Response::with_payload(Code::CONTENT, b"third");
    let (acked, c) = count(|| {
        now = now + Duration::from_secs(1);
        server.notify(now, RESOURCE, &third);
        let mut acked = 0;
        while let Some(t) = server.poll_transmit(now, &mut out) {
            let (k, _, _) = notification_of(&out[..t.size]);
            ack(&mut server, now, k, t.message_id);
            acked += 1;
        }
        acked
    });
    assert_eq!(acked, N);
    assert_eq!(
        (c.count, c.net_bytes),
        (0, 0),
        "a warm CON round allocates nothing"
    );
}

#[test]
fn periodic_con_notifications_to_10_000_observers_hold_no_copy_of_the_representation() {
    const N: usize = 10_000;
    // As `covey serve` sizes its tables: 1 280 transmissions (256 exchanges, 1 024 incoming).
    let config = Config {
        max_observers: N,
        max_buffers: 2 * N + 1024,
        max_incoming: 1024,
        mid_reuse_interval: Some(Duration::from_secs(1)),
        ..Config::default()
    };
    let transmissions = config.max_exchanges + config.max_incoming;
    let (mut server, mut now) = server_with(config, N);
    let mut out = vec![0u8; 1280];
    let mut acks = Vec::with_capacity(transmissions);
    let mut con_of = vec![0usize; N];
    let (mut con_rounds, mut non_heap, mut con_heap) = (0, 0i64, 0i64);
    // Each observer's 20th notification is due CON, and all registered at once: from the
    // 19th round on the CONs go as the transmission table allows, the rest NON meanwhile;
    // 20 notifications later comes the second wave.
    for round in 0..47u8 {
        now = now + Duration::from_secs(1);
        let state = [b'0' + round; 8];
        let response = Response::with_payload(Code::CONTENT, &state);
        let (sent, c) = count(|| {
            server.handle_timeout(now);
            assert_eq!(server.notify(now, RESOURCE, &response), N);
            let mut sent = 0;
            while let Some(t) = server.poll_transmit(now, &mut out) {
                let (k, _, payload) = notification_of(&out[..t.size]);
                assert_eq!(payload, state);
                if t.message_type == MessageType::Confirmable {
                    acks.push((k, t.message_id));
                }
                sent += 1;
            }
            sent
        });
        assert_eq!(sent, N, "round {round}: every observer gets the state once");
        let cons = acks.len();
        assert!(cons <= transmissions);
        let later = now + Duration::from_millis(20);
        for (k, mid) in acks.drain(..) {
            con_of[k] += 1;
            ack(&mut server, later, k, mid);
        }
        match cons {
            0 => non_heap += c.net_bytes,
            _ => {
                con_rounds += 1;
                con_heap += c.net_bytes;
            }
        }
    }
    assert!(
        con_of.iter().all(|&c| c == 2),
        "each observer's periodic CON went twice"
    );
    assert_eq!(con_rounds, 2 * N.div_ceil(transmissions));
    assert_eq!(server.observer_count(RESOURCE), N);
    // What the CON rounds left: the tables that track transmissions (entry, message-ID
    // index), grown to the 1 280 in flight at once; no copy of the representation per CON,
    // which with its buffer, queue entry and a map entry came to about 400 B.
    let per_con = con_heap / transmissions as i64;
    println!(
        "NON rounds held {non_heap} B, CON rounds {con_heap} B: {per_con} B per CON in flight"
    );
    assert!(per_con <= 160, "{per_con} B per CON notification in flight");
}
