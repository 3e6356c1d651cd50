//! Memory is bounded by configuration: a flood of distinct requests from many sources at a
//! server whose application never answers grows the server's tables to their bounds and no
//! further (the second half of the flood allocates nothing), is answered
//! with 5.03 Service Unavailable and Max-Age once the incoming table is full, is counted as
//! overload, and leaves the server able to serve a normal client once the flood is over.
//! The only test of this binary (counting is per thread anyway).

mod counting_alloc;
mod pair;

use counting_alloc::{count, CountingAlloc};
use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{Config, DropCause, Duration, Event, LocalAddr};
use pair::{addr, Pair, DATAGRAM_BUFFER, PAYLOAD};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const REQUESTS: u32 = 200_000;
const SOURCES: u32 = 5_000;
const MAX_INCOMING: usize = 64;
/// Virtual time between two flood datagrams: the flood lasts 2 s, longer than the
/// piggyback window (so the accepted CONs get their empty ACK) and far shorter than the
/// response timeout (so the incoming table stays full).
const GAP: Duration = Duration::from_micros(10);

/// What the flood may make the server hold with this configuration's bounds (1 024 dedup
/// entries, 128 peers, 64 incoming requests, the reply ring and outbox).
const GROWTH_LIMIT: i64 = 512 << 10;

fn small_config() -> Config {
    Config {
        max_incoming: MAX_INCOMING,
        max_dedup_entries: 1024,
        max_peers: 128,
        ..Config::default()
    }
}

/// What the server sent back to the flood.
#[derive(Debug, Default)]
struct Replies {
    service_unavailable: u64,
    empty_acks: u64,
    /// Request numbers whose 5.03 was checked in detail (the first few).
    checked: u32,
}

#[test]
fn flood_is_bounded_answered_with_5_03_and_counted() {
    let config = small_config();
    let overload_max_age = config.overload_max_age;
    let mut pair = Pair::new(config);
    let mut request_buf = vec![0u8; DATAGRAM_BUFFER].into_boxed_slice();
    let mut out_buf = vec![0u8; DATAGRAM_BUFFER].into_boxed_slice();
    let mut replies = Replies::default();
    let mut ignored_requests = 0u64;

    let mut flood_range = |range: std::ops::Range<u32>| {
        for k in range {
            let source = addr(100, 10_000 + (k % SOURCES) as u16);
            // Distinct per source: its n-th request has message ID n and a unique token.
            let mid = (k / SOURCES) as u16;
            let token = k.to_be_bytes();
            let confirmable = k % 4 != 3;
            let message_type = if confirmable {
                MessageType::Confirmable
            } else {
                MessageType::NonConfirmable
            };
            let size = {
                let mut enc =
                    MessageEncoder::new(&mut request_buf, message_type, Code::GET, mid, &token)
                        .expect("header");
                enc.option(OptionNumber::URI_PATH, b"flood")
                    .expect("option");
                enc.finish()
            };
            let server = &mut pair.server;
            pair.now = pair.now + GAP;
            let now = pair.now;
            if server.poll_timeout().is_some_and(|t| t <= now) {
                server.handle_timeout(now);
            }
            server.handle_datagram(now, source, LocalAddr::UNICAST, &request_buf[..size]);
            // The application looks at requests but never answers.
            while let Some(event) = server.poll_event() {
                assert!(matches!(event, Event::Request(_)), "{event:?}");
                ignored_requests += 1;
            }
            while let Some(t) = server.poll_transmit(now, &mut out_buf) {
                let reply = Message::parse(&out_buf[..t.size]).expect("server sent garbage");
                if reply.code() == Code::EMPTY {
                    assert_eq!(reply.message_type(), MessageType::Acknowledgement);
                    replies.empty_acks += 1;
                    continue;
                }
                assert_eq!(reply.code(), Code::SERVICE_UNAVAILABLE);
                assert_eq!(
                    reply.uint_option(OptionNumber::MAX_AGE),
                    Some(overload_max_age)
                );
                replies.service_unavailable += 1;
                if t.destination == source && replies.checked < 8 {
                    // Answers the request just sent: same token; for a CON, piggy-backed
                    // in the ACK of its message ID; for a NON, a NON of its own.
                    assert_eq!(reply.token_bytes(), token);
                    if confirmable {
                        assert_eq!(reply.message_type(), MessageType::Acknowledgement);
                        assert_eq!(reply.message_id(), mid);
                    } else {
                        assert_eq!(reply.message_type(), MessageType::NonConfirmable);
                    }
                    replies.checked += 1;
                }
            }
        }
    };
    // The first half fills every table the flood touches to its bound ...
    let (_, growth) = count(|| flood_range(0..REQUESTS / 2));
    // ... and the second half, with the tables full, allocates nothing.
    let (_, flood) = count(|| flood_range(REQUESTS / 2..REQUESTS));

    println!(
        "flood: {REQUESTS} requests from {SOURCES} sources: first half left {} B held \
         ({} allocations), second half {} allocations ({} B); \
         {} x 5.03, {} empty ACKs, {ignored_requests} requests left unanswered",
        growth.net_bytes,
        growth.count,
        flood.count,
        flood.bytes,
        replies.service_unavailable,
        replies.empty_acks
    );
    assert!(
        growth.net_bytes < GROWTH_LIMIT,
        "the flood grew the server by {} B",
        growth.net_bytes
    );
    assert_eq!(flood.count, 0, "the flood made the server allocate");
    // Exactly the first MAX_INCOMING requests got in; every other one was refused.
    assert_eq!(ignored_requests, MAX_INCOMING as u64);
    let refused = u64::from(REQUESTS) - MAX_INCOMING as u64;
    assert_eq!(replies.service_unavailable, refused);
    assert!(replies.checked >= 8);
    let stats = pair.server.stats();
    assert_eq!(stats.drops_of(DropCause::Overload), refused);
    assert_eq!(stats.received, u64::from(REQUESTS));
    assert_eq!(stats.duplicates, 0);
    // The accepted CONs (3 in 4) outlived the piggyback window: acknowledged empty.
    assert_eq!(replies.empty_acks, (MAX_INCOMING as u64 * 3) / 4);

    // The flood stops; once the response timeout has passed, the unanswered requests are
    // forgotten and a normal client is served again (CON piggy-backed, then NON).
    let quiet_until = pair.now + pair.server.config().response_timeout + Duration::from_secs(1);
    while let Some(t) = pair.server.poll_timeout().filter(|&t| t <= quiet_until) {
        pair.now = pair.now.max(t);
        pair.server.handle_timeout(pair.now);
        while pair.server.poll_transmit(pair.now, &mut out_buf).is_some() {}
    }
    pair.now = quiet_until;
    let overloads_before = pair.server.stats().drops_of(DropCause::Overload);
    assert_eq!(pair.exchange(true), PAYLOAD.len());
    assert_eq!(pair.exchange(false), PAYLOAD.len());
    assert_eq!(
        pair.server.stats().drops_of(DropCause::Overload),
        overloads_before
    );
}
