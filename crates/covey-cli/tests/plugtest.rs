//! The ETSI CoAP plugtest test descriptions (TD_COAP_CORE, _LINK, _BLOCK, _OBS) run by
//! Covey's own client, in process, against `covey serve --plugtest` in a child process on an
//! ephemeral loopback port. Each test checks the messages on the wire (recorded by the
//! client's trace or by a relay) as well as what the client API delivers. A fresh client is
//! not verified (RFC 9175): where a test checks the very first exchange message by message,
//! the server runs without the amplification limit, as the test descriptions predate Echo.

mod harness;
mod support;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use covey::{Code, Config, ContentFormat, OptionNumber, Response};
use covey_core::link_format::links;
use covey_core::{Block, Message, MessageType};

use harness::{
    is_newer, next_notification, plain_client, send, traced_client, traced_client_with, Datagram,
    Direction, Plugtest, Relay, Wire,
};

const CON: MessageType = MessageType::Confirmable;
const NON: MessageType = MessageType::NonConfirmable;
const ACK: MessageType = MessageType::Acknowledgement;
const RST: MessageType = MessageType::Reset;

/// How long the tests watch for datagrams that must not come.
const QUIET: Duration = Duration::from_millis(600);

/// The response datagram that answered `request` (same token), the first one received.
fn answer(wire: &Wire, request: &Datagram) -> Datagram {
    let token = request.msg().token_bytes().to_vec();
    wire.received()
        .into_iter()
        .find(|d| d.msg().code().is_response() && d.msg().token_bytes() == token)
        .unwrap_or_else(|| panic!("no response to the request: {:#?}", wire.summary()))
}

/// Checks a piggy-backed exchange: the client's CON `method` and the server's ACK with the
/// same message ID and token carrying `code`; returns (request, response).
fn piggybacked(wire: &Wire, method: Code, code: Code) -> (Datagram, Datagram) {
    let req = wire.first_request();
    let resp = answer(wire, &req);
    let (q, r) = (req.msg(), resp.msg());
    assert_eq!(
        (q.message_type(), q.code()),
        (CON, method),
        "{:#?}",
        wire.summary()
    );
    assert_eq!(r.message_type(), ACK, "piggy-backed: {:#?}", wire.summary());
    assert_eq!(
        r.message_id(),
        q.message_id(),
        "the ACK echoes the message ID"
    );
    assert_eq!(
        r.token_bytes(),
        q.token_bytes(),
        "the response echoes the token"
    );
    assert_eq!(r.code(), code);
    (req, resp)
}

/// Checks a NON exchange: the client's NON `method`, the server's NON response with the
/// same token carrying `code`, and no ACK either way; returns (request, response).
fn non_exchange(wire: &Wire, method: Code, code: Code) -> (Datagram, Datagram) {
    let req = wire.first_request();
    let resp = answer(wire, &req);
    let (q, r) = (req.msg(), resp.msg());
    assert_eq!(
        (q.message_type(), q.code()),
        (NON, method),
        "{:#?}",
        wire.summary()
    );
    assert_eq!(r.message_type(), NON, "{:#?}", wire.summary());
    assert_eq!(r.token_bytes(), q.token_bytes());
    assert_eq!(r.code(), code);
    assert!(
        wire.all().iter().all(|d| d.msg().message_type() != ACK),
        "nothing is acknowledged in NON mode: {:#?}",
        wire.summary()
    );
    (req, resp)
}

fn text(r: &Response) -> String {
    r.payload_text()
}

fn block_option(num: u32, szx: u8) -> Vec<u8> {
    let mut buf = [0u8; 4];
    Block::new(num, false, szx)
        .expect("a valid block")
        .encode(&mut buf)
        .to_vec()
}

// ---------------------------------------------------------------------------------------
// TD_COAP_CORE: basic methods, message types, tokens, options
// ---------------------------------------------------------------------------------------

/// TD_COAP_CORE_01: GET in CON mode — verifies a piggy-backed 2.05 (same MID and token) with
/// a Content-Format and a payload describing the request.
#[tokio::test]
async fn td_coap_core_01_get_con() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(client.request(Code::GET, server.uri("/test"))).await;
    let (req, resp) = piggybacked(&wire, Code::GET, Code::CONTENT);
    assert_eq!(req.msg().uri_path().collect::<Vec<_>>(), ["test"]);
    assert_eq!(resp.msg().content_format(), Some(ContentFormat::TEXT_PLAIN));
    assert!(
        text(&r).contains("Type: 0 (CON)\nCode: 1 (GET)"),
        "{}",
        text(&r)
    );
}

/// TD_COAP_CORE_02: DELETE in CON mode — verifies a piggy-backed 2.02 Deleted.
#[tokio::test]
async fn td_coap_core_02_delete_con() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(client.request(Code::DELETE, server.uri("/test"))).await;
    assert_eq!(r.code, Code::DELETED);
    piggybacked(&wire, Code::DELETE, Code::DELETED);
}

/// TD_COAP_CORE_03: PUT in CON mode — verifies a piggy-backed 2.04 Changed and that the
/// resource then holds the payload.
#[tokio::test]
async fn td_coap_core_03_put_con() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let put = client
        .request(Code::PUT, server.uri("/test"))
        .content_format(ContentFormat::TEXT_PLAIN)
        .payload("core-03 payload");
    assert_eq!(send(put).await.code, Code::CHANGED);
    let (req, _) = piggybacked(&wire, Code::PUT, Code::CHANGED);
    assert_eq!(
        req.msg().content_format(),
        Some(ContentFormat::TEXT_PLAIN),
        "the request carries its Content-Format"
    );
    let r = send(client.request(Code::GET, server.uri("/test"))).await;
    assert!(text(&r).contains("core-03 payload"), "{}", text(&r));
}

/// TD_COAP_CORE_04: POST in CON mode — verifies a piggy-backed 2.01 Created with
/// Location-Path options.
#[tokio::test]
async fn td_coap_core_04_post_con() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let post = client
        .request(Code::POST, server.uri("/test"))
        .content_format(ContentFormat::TEXT_PLAIN)
        .payload("core-04");
    let r = send(post).await;
    assert_eq!(r.code, Code::CREATED);
    assert!(r.options.contains(OptionNumber::LOCATION_PATH));
    piggybacked(&wire, Code::POST, Code::CREATED);
}

/// TD_COAP_CORE_05: GET in NON mode — verifies a NON 2.05 with the request's token, a
/// Content-Format and a payload, and no acknowledgements.
#[tokio::test]
async fn td_coap_core_05_get_non() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(client.request(Code::GET, server.uri("/test")).non()).await;
    let (_, resp) = non_exchange(&wire, Code::GET, Code::CONTENT);
    assert_eq!(resp.msg().content_format(), Some(ContentFormat::TEXT_PLAIN));
    assert!(
        text(&r).contains("Type: 1 (NON)\nCode: 1 (GET)"),
        "{}",
        text(&r)
    );
}

/// TD_COAP_CORE_06: DELETE in NON mode — verifies a NON 2.02 Deleted with the token.
#[tokio::test]
async fn td_coap_core_06_delete_non() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(client.request(Code::DELETE, server.uri("/test")).non()).await;
    assert_eq!(r.code, Code::DELETED);
    non_exchange(&wire, Code::DELETE, Code::DELETED);
}

/// TD_COAP_CORE_07: PUT in NON mode — verifies a NON 2.04 Changed and the stored payload.
#[tokio::test]
async fn td_coap_core_07_put_non() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let put = client
        .request(Code::PUT, server.uri("/test"))
        .non()
        .content_format(ContentFormat::TEXT_PLAIN)
        .payload("core-07 payload");
    assert_eq!(send(put).await.code, Code::CHANGED);
    non_exchange(&wire, Code::PUT, Code::CHANGED);
    let r = send(client.request(Code::GET, server.uri("/test")).non()).await;
    assert!(text(&r).contains("core-07 payload"), "{}", text(&r));
}

/// TD_COAP_CORE_08: POST in NON mode — verifies a NON 2.01 Created with Location-Path.
#[tokio::test]
async fn td_coap_core_08_post_non() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let post = client
        .request(Code::POST, server.uri("/test"))
        .non()
        .content_format(ContentFormat::TEXT_PLAIN)
        .payload("core-08");
    let r = send(post).await;
    assert_eq!(r.code, Code::CREATED);
    assert!(r.options.contains(OptionNumber::LOCATION_PATH));
    non_exchange(&wire, Code::POST, Code::CREATED);
}

/// TD_COAP_CORE_09: GET with a separate response (CON, no piggy-back) — verifies an empty ACK
/// with the request's MID, then a CON 2.05 with the request's token and a new MID, which the
/// client acknowledges.
#[tokio::test]
async fn td_coap_core_09_separate_response_con() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(client.request(Code::GET, server.uri("/separate"))).await;
    assert_eq!(r.code, Code::CONTENT);
    assert!(text(&r).contains("Separate response"), "{}", text(&r));
    let req = wire.first_request();
    let (mid, token) = (req.msg().message_id(), req.msg().token_bytes().to_vec());
    let received = wire.received();
    let empty_ack = received
        .iter()
        .position(|d| d.is_empty(ACK, mid))
        .unwrap_or_else(|| panic!("no empty ACK: {:#?}", wire.summary()));
    let resp = answer(&wire, &req);
    let response_at = received
        .iter()
        .position(|d| d.bytes == resp.bytes)
        .expect("response");
    assert!(empty_ack < response_at, "the empty ACK comes first");
    let m = resp.msg();
    assert_eq!((m.message_type(), m.code()), (CON, Code::CONTENT));
    assert_eq!(m.token_bytes(), token.as_slice());
    assert_ne!(m.message_id(), mid, "a separate response is a new message");
    let resp_mid = m.message_id();
    wire.wait_for("the client's ACK of the separate response", |d| {
        d.sent && d.is_empty(ACK, resp_mid)
    })
    .await;
}

/// TD_COAP_CORE_10: a request with a Token — verifies the response carries the same token.
#[tokio::test]
async fn td_coap_core_10_token() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let token = [0x5a, 0x3c, 0x91, 0x07, 0xee];
    send(client.request(Code::GET, server.uri("/test")).token(token)).await;
    let (req, resp) = piggybacked(&wire, Code::GET, Code::CONTENT);
    assert_eq!(req.msg().token_bytes(), token);
    assert_eq!(resp.msg().token_bytes(), token);
    assert!(!resp.msg().payload().is_empty());
}

/// TD_COAP_CORE_11: a request without a Token (length 0) — verifies a piggy-backed 2.05 that
/// has no token either.
#[tokio::test]
async fn td_coap_core_11_no_token() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    send(
        client
            .request(Code::GET, server.uri("/test"))
            .token(Vec::new()),
    )
    .await;
    let (req, resp) = piggybacked(&wire, Code::GET, Code::CONTENT);
    assert!(req.msg().token_bytes().is_empty());
    assert!(resp.msg().token_bytes().is_empty());
    assert!(!resp.msg().payload().is_empty());
}

/// TD_COAP_CORE_12: several Uri-Path options — verifies the request carries seg1, seg2, seg3
/// as three options and the server answers 2.05 with the resource's content.
#[tokio::test]
async fn td_coap_core_12_uri_path_segments() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(client.request(Code::GET, server.uri("/seg1/seg2/seg3"))).await;
    let (req, resp) = piggybacked(&wire, Code::GET, Code::CONTENT);
    assert_eq!(
        req.msg().options_of(OptionNumber::URI_PATH).count(),
        3,
        "one Uri-Path option per segment"
    );
    assert_eq!(
        req.msg().uri_path().collect::<Vec<_>>(),
        ["seg1", "seg2", "seg3"]
    );
    assert_eq!(resp.msg().content_format(), Some(ContentFormat::TEXT_PLAIN));
    assert_eq!(text(&r), "Long path resource");
}

/// TD_COAP_CORE_13: several Uri-Query options — verifies the request carries one option per
/// argument and the server answers 2.05 having seen all of them.
#[tokio::test]
async fn td_coap_core_13_uri_query() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let uri = server.uri("/query?first=1&second=2&third=3");
    let r = send(client.request(Code::GET, uri)).await;
    let (req, _) = piggybacked(&wire, Code::GET, Code::CONTENT);
    assert_eq!(
        req.msg().uri_query().collect::<Vec<_>>(),
        ["first=1", "second=2", "third=3"]
    );
    assert_eq!(text(&r), "Queries: first=1&second=2&third=3");
}

/// A client config with a short ACK_TIMEOUT, so retransmissions come quickly.
fn quick_client_config() -> Config {
    let mut config = Config::default();
    config.transmission.ack_timeout = Duration::from_millis(200);
    config
}

/// TD_COAP_CORE_14: lossy context, CON with piggy-backed response — the first request and the
/// first ACK are lost; verifies the client retransmits with the same MID and the server
/// answers the retransmission with the same piggy-backed 2.05.
#[tokio::test]
async fn td_coap_core_14_lossy_piggybacked() {
    let server = Plugtest::start(&[]);
    let (mut lost_requests, mut lost_acks) = (0, 0);
    let relay = Relay::start(server.addr(), move |direction, m| match direction {
        Direction::ToServer if m.code().is_request() && lost_requests == 0 => {
            lost_requests += 1;
            true
        }
        Direction::ToClient if m.message_type() == ACK && lost_acks == 0 => {
            lost_acks += 1;
            true
        }
        _ => false,
    });
    let (client, wire) = traced_client_with(quick_client_config());
    let r = send(client.request(Code::GET, relay.uri("/test"))).await;
    assert_eq!(r.code, Code::CONTENT);
    let mid = wire.first_request().msg().message_id();
    let copies = wire
        .sent()
        .iter()
        .filter(|d| d.msg().message_id() == mid && d.msg().code() == Code::GET)
        .count();
    assert!(
        copies >= 3,
        "sent, lost, retransmitted: {:#?}",
        relay.summary()
    );
    let log = relay.log();
    let acks: Vec<_> = log
        .iter()
        .filter(|r| r.direction == Direction::ToClient)
        .filter_map(|r| {
            r.msg()
                .map(|m| (m.message_type(), m.message_id(), m.code()))
        })
        .collect();
    assert!(acks.len() >= 2, "{:#?}", relay.summary());
    assert!(
        acks.iter().all(|a| *a == (ACK, mid, Code::CONTENT)),
        "{acks:?}"
    );
    assert!(log[0].dropped && log[0].direction == Direction::ToServer);
}

/// TD_COAP_CORE_15: lossy context, CON with a delayed (separate) response — the request, the
/// empty ACK and the first separate response are lost; verifies the retransmissions on both
/// sides and that the client gets one 2.05 and acknowledges it.
#[tokio::test]
async fn td_coap_core_15_lossy_separate() {
    let server = Plugtest::start(&["--ack-timeout", "0.2"]);
    let (mut lost_request, mut lost_ack, mut lost_response) = (false, false, false);
    let relay = Relay::start(server.addr(), move |direction, m| {
        let lose = |flag: &mut bool| !std::mem::replace(flag, true);
        match direction {
            Direction::ToServer if m.code().is_request() => lose(&mut lost_request),
            Direction::ToClient if m.code().is_empty() && m.message_type() == ACK => {
                lose(&mut lost_ack)
            }
            Direction::ToClient if m.message_type() == CON => lose(&mut lost_response),
            _ => false,
        }
    });
    let (client, wire) = traced_client_with(quick_client_config());
    let r = send(client.request(Code::GET, relay.uri("/separate"))).await;
    assert_eq!(r.code, Code::CONTENT);
    let req = wire.first_request();
    let (mid, token) = (req.msg().message_id(), req.msg().token_bytes().to_vec());
    // The server's separate response went out twice, with the same MID.
    let responses: Vec<u16> = relay
        .log()
        .iter()
        .filter(|r| r.direction == Direction::ToClient)
        .filter_map(|r| {
            r.msg()
                .map(|m| (m.message_type(), m.message_id(), m.token_bytes() == token))
        })
        .filter(|(t, _, same)| *t == CON && *same)
        .map(|(_, mid, _)| mid)
        .collect();
    assert!(responses.len() >= 2, "{:#?}", relay.summary());
    assert!(responses.iter().all(|m| *m == responses[0]));
    assert_ne!(responses[0], mid);
    let resp_mid = responses[0];
    wire.wait_for("the client's ACK of the separate response", |d| {
        d.sent && d.is_empty(ACK, resp_mid)
    })
    .await;
    // The server acknowledged the request with an empty ACK (lost once); the client may
    // have got the separate response before a copy of it.
    let empty_acks = relay
        .log()
        .iter()
        .filter(|r| r.direction == Direction::ToClient)
        .filter_map(|r| {
            r.msg()
                .map(|m| m.code().is_empty() && m.message_id() == mid)
        })
        .filter(|is_ack| *is_ack)
        .count();
    assert!(empty_acks >= 1, "{:#?}", relay.summary());
}

/// TD_COAP_CORE_16: GET with a separate response in CON mode — verifies the late response is
/// a CON with a new MID, the client's empty ACK carries that MID, and the acknowledged
/// response is not retransmitted.
#[tokio::test]
async fn td_coap_core_16_separate_response_acknowledged() {
    let server = Plugtest::start(&["--ack-timeout", "0.2"]);
    let (client, wire) = traced_client();
    let start = Instant::now();
    let r = send(client.request(Code::GET, server.uri("/separate"))).await;
    assert!(
        start.elapsed() >= Duration::from_millis(1400),
        "served late"
    );
    assert_eq!(r.code, Code::CONTENT);
    let req = wire.first_request();
    let resp = answer(&wire, &req);
    let resp_mid = resp.msg().message_id();
    assert_eq!(resp.msg().message_type(), CON);
    assert_ne!(resp_mid, req.msg().message_id());
    wire.wait_for("the client's ACK", |d| d.sent && d.is_empty(ACK, resp_mid))
        .await;
    // Several server ACK_TIMEOUTs later still no retransmission of the response.
    tokio::time::sleep(QUIET).await;
    let copies = wire
        .received()
        .iter()
        .filter(|d| d.msg().message_id() == resp_mid)
        .count();
    assert_eq!(copies, 1, "{:#?}", wire.summary());
}

/// TD_COAP_CORE_17: GET with a separate response in NON mode — verifies the late response is
/// a NON 2.05 with the request's token, and nothing is acknowledged.
#[tokio::test]
async fn td_coap_core_17_separate_response_non() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let start = Instant::now();
    let r = send(client.request(Code::GET, server.uri("/separate")).non()).await;
    assert!(
        start.elapsed() >= Duration::from_millis(1400),
        "served late"
    );
    assert!(text(&r).contains("Type: 1 (NON)"), "{}", text(&r));
    let (_, resp) = non_exchange(&wire, Code::GET, Code::CONTENT);
    assert_eq!(resp.msg().content_format(), Some(ContentFormat::TEXT_PLAIN));
}

/// TD_COAP_CORE_18: POST with responses containing several Location-Path options — verifies
/// 2.01 with location1/location2/location3 and that the location can be fetched.
#[tokio::test]
async fn td_coap_core_18_location_path() {
    let server = Plugtest::start(&[]);
    let (client, _) = traced_client();
    let post = client
        .request(Code::POST, server.uri("/test"))
        .content_format(ContentFormat::TEXT_PLAIN)
        .payload("core-18");
    let r = send(post).await;
    assert_eq!(r.code, Code::CREATED);
    let location: Vec<String> = r
        .options
        .get_all(OptionNumber::LOCATION_PATH)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    assert_eq!(location, ["location1", "location2", "location3"]);
    let r = send(client.request(Code::GET, server.uri(&format!("/{}", location.join("/"))))).await;
    assert_eq!(r.code, Code::CONTENT);
}

/// TD_COAP_CORE_19: POST with responses containing several Location-Query options —
/// verifies 2.01 with Location-Query first=1 and second=2.
#[tokio::test]
async fn td_coap_core_19_location_query() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(
        client
            .request(Code::POST, server.uri("/location-query"))
            .content_format(ContentFormat::TEXT_PLAIN)
            .payload("core-19"),
    )
    .await;
    assert_eq!(r.code, Code::CREATED);
    let (_, resp) = piggybacked(&wire, Code::POST, Code::CREATED);
    let queries: Vec<&[u8]> = resp
        .msg()
        .options_of(OptionNumber::LOCATION_QUERY)
        .collect();
    assert_eq!(queries, [b"first=1".as_slice(), b"second=2".as_slice()]);
}

/// TD_COAP_CORE_20: GET with the Accept option — verifies /multi-format answers text/plain
/// and application/xml as asked (and 4.06 for a format it lacks).
#[tokio::test]
async fn td_coap_core_20_accept() {
    let server = Plugtest::start(&[]);
    let client = plain_client();
    let uri = server.uri("/multi-format");
    let r = send(
        client
            .request(Code::GET, &uri)
            .accept(ContentFormat::TEXT_PLAIN),
    )
    .await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.content_format(), Some(ContentFormat::TEXT_PLAIN));
    assert!(text(&r).starts_with("Status"), "{}", text(&r));
    let r = send(client.request(Code::GET, &uri).accept(ContentFormat::XML)).await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.content_format(), Some(ContentFormat::XML));
    assert!(text(&r).starts_with('<'), "{}", text(&r));
    let r = send(client.request(Code::GET, &uri).accept(ContentFormat::CBOR)).await;
    assert_eq!(r.code, Code::NOT_ACCEPTABLE);
}

/// TD_COAP_CORE_21: GET with the ETag option — verifies 2.05 with an ETag, 2.03 Valid without
/// payload for the current ETag, and 2.05 with a new ETag after another client changed it.
#[tokio::test]
async fn td_coap_core_21_etag_validation() {
    let server = Plugtest::start(&[]);
    let client = plain_client();
    let uri = server.uri("/validate");
    let first = send(client.request(Code::GET, &uri)).await;
    assert_eq!(first.code, Code::CONTENT);
    let etag = first
        .options
        .get(OptionNumber::ETAG)
        .expect("an ETag")
        .to_vec();
    let valid = send(client.request(Code::GET, &uri).etag(etag.clone())).await;
    assert_eq!(valid.code, Code::VALID);
    assert_eq!(valid.options.get(OptionNumber::ETAG), Some(etag.as_slice()));
    assert!(valid.payload.is_empty());
    // Another client updates the resource.
    let put = plain_client()
        .request(Code::PUT, &uri)
        .content_format(ContentFormat::TEXT_PLAIN)
        .payload("changed by another client");
    assert_eq!(send(put).await.code, Code::CHANGED);
    let fresh = send(client.request(Code::GET, &uri).etag(etag.clone())).await;
    assert_eq!(fresh.code, Code::CONTENT);
    assert_eq!(text(&fresh), "changed by another client");
    let new_etag = fresh.options.get(OptionNumber::ETAG).expect("an ETag");
    assert_ne!(new_etag, etag.as_slice());
}

/// TD_COAP_CORE_22: PUT with If-Match — verifies 2.04 when the ETag is current, a new ETag
/// afterwards, and 4.12 Precondition Failed for the stale one.
#[tokio::test]
async fn td_coap_core_22_if_match() {
    let server = Plugtest::start(&[]);
    let client = plain_client();
    let uri = server.uri("/validate");
    let first = send(client.request(Code::GET, &uri)).await;
    let etag = first
        .options
        .get(OptionNumber::ETAG)
        .expect("an ETag")
        .to_vec();
    let put = |etag: Vec<u8>, body: &str| {
        client
            .request(Code::PUT, &uri)
            .if_match(etag)
            .content_format(ContentFormat::TEXT_PLAIN)
            .payload(body.to_string())
    };
    let r = send(put(etag.clone(), "first update")).await;
    assert_eq!(r.code, Code::CHANGED);
    let r = send(client.request(Code::GET, &uri)).await;
    assert_eq!(text(&r), "first update");
    let new_etag = r.options.get(OptionNumber::ETAG).expect("an ETag").to_vec();
    assert_ne!(new_etag, etag);
    let r = send(put(etag, "stale update")).await;
    assert_eq!(r.code, Code::PRECONDITION_FAILED);
    let r = send(client.request(Code::GET, &uri)).await;
    assert_eq!(text(&r), "first update", "the failed PUT changed nothing");
}

/// TD_COAP_CORE_23: PUT with If-None-Match — verifies 2.01 Created when /create1 does not
/// exist and 4.12 Precondition Failed once it does.
#[tokio::test]
async fn td_coap_core_23_if_none_match() {
    let server = Plugtest::start(&[]);
    let client = plain_client();
    let uri = server.uri("/create1");
    let create = || {
        client
            .request(Code::PUT, &uri)
            .if_none_match()
            .content_format(ContentFormat::TEXT_PLAIN)
            .payload("created once")
    };
    assert_eq!(send(create()).await.code, Code::CREATED);
    assert_eq!(send(create()).await.code, Code::PRECONDITION_FAILED);
    let r = send(client.request(Code::GET, &uri)).await;
    assert_eq!((r.code, text(&r)), (Code::CONTENT, "created once".into()));
}

// ---------------------------------------------------------------------------------------
// TD_COAP_LINK: resource discovery
// ---------------------------------------------------------------------------------------

/// GETs `/.well-known/core` with `query` and returns the targets, checking 2.05 and ct=40.
async fn discover(server: &Plugtest, query: &str) -> Vec<String> {
    let r =
        send(plain_client().request(Code::GET, server.uri(&format!("/.well-known/core{query}"))))
            .await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.content_format(), Some(ContentFormat::LINK_FORMAT));
    parse_links(&text(&r))
        .into_iter()
        .map(|(target, _)| target)
        .collect()
}

/// (target, attribute names) of every link in a link-format document.
fn parse_links(doc: &str) -> Vec<(String, Vec<String>)> {
    links(doc)
        .map(|l| {
            let l = l.expect("valid link format");
            let names = l.attributes().map(|a| a.name.to_string()).collect();
            (l.target().to_string(), names)
        })
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// TD_COAP_LINK_01: access to /.well-known/core — verifies 2.05 in link format listing the
/// plugtest resources.
#[tokio::test]
async fn td_coap_link_01_well_known_core() {
    let server = Plugtest::start(&[]);
    let all = discover(&server, "").await;
    for expected in [
        "/test",
        "/seg1/seg2/seg3",
        "/query",
        "/separate",
        "/large",
        "/large-update",
        "/large-create",
        "/large-post",
        "/obs",
        "/obs-non",
        "/location-query",
        "/multi-format",
        "/validate",
        "/create1",
        "/link1",
        "/link2",
        "/link3",
        "/path",
        "/path/sub1",
    ] {
        assert!(
            all.iter().any(|t| t == expected),
            "{expected} missing: {all:?}"
        );
    }
}

/// TD_COAP_LINK_02: filtered discovery by rt — verifies ?rt=Type1 returns exactly /link1 and
/// /link3.
#[tokio::test]
async fn td_coap_link_02_filter_rt() {
    let server = Plugtest::start(&[]);
    assert_eq!(
        sorted(discover(&server, "?rt=Type1").await),
        ["/link1", "/link3"]
    );
}

/// TD_COAP_LINK_03: an empty prefix value — verifies ?rt=* returns every resource with an rt
/// attribute (and only those).
#[tokio::test]
async fn td_coap_link_03_filter_empty_prefix() {
    let server = Plugtest::start(&[]);
    let r = send(plain_client().request(Code::GET, server.uri("/.well-known/core?rt=*"))).await;
    let found = parse_links(&text(&r));
    assert!(
        found
            .iter()
            .all(|(_, attrs)| attrs.iter().any(|a| a == "rt")),
        "{found:?}"
    );
    let targets: Vec<&str> = found.iter().map(|(t, _)| t.as_str()).collect();
    for expected in ["/link1", "/link2", "/link3", "/large", "/obs"] {
        assert!(
            targets.contains(&expected),
            "{expected} missing: {targets:?}"
        );
    }
    assert!(!targets.contains(&"/test"), "{targets:?}");
}

/// TD_COAP_LINK_04: several rt values per link — verifies ?rt=Type2 matches /link1 and
/// /link2, whose rt lists Type2 among others.
#[tokio::test]
async fn td_coap_link_04_filter_multiple_rt() {
    let server = Plugtest::start(&[]);
    assert_eq!(
        sorted(discover(&server, "?rt=Type2").await),
        ["/link1", "/link2"]
    );
}

/// TD_COAP_LINK_05: if attribute with a prefix value — verifies ?if=If* returns /link1 and
/// /link2 but not /link3 (if=foo).
#[tokio::test]
async fn td_coap_link_05_filter_if_prefix() {
    let server = Plugtest::start(&[]);
    assert_eq!(
        sorted(discover(&server, "?if=If*").await),
        ["/link1", "/link2"]
    );
}

/// TD_COAP_LINK_06: sz attribute with a prefix value — verifies ?sz=* returns the resources
/// that state a size (/large, /large-update).
#[tokio::test]
async fn td_coap_link_06_filter_sz() {
    let server = Plugtest::start(&[]);
    let r = send(plain_client().request(Code::GET, server.uri("/.well-known/core?sz=*"))).await;
    let found = parse_links(&text(&r));
    assert!(
        found
            .iter()
            .all(|(_, attrs)| attrs.iter().any(|a| a == "sz")),
        "{found:?}"
    );
    let targets = sorted(found.into_iter().map(|(t, _)| t).collect());
    assert_eq!(targets, ["/large", "/large-update"]);
}

/// TD_COAP_LINK_07: href with a complete value — verifies ?href=/link1 returns only /link1.
#[tokio::test]
async fn td_coap_link_07_filter_href() {
    let server = Plugtest::start(&[]);
    assert_eq!(discover(&server, "?href=/link1").await, ["/link1"]);
}

/// TD_COAP_LINK_08: href with a prefix value — verifies ?href=/link* returns /link1../link3.
#[tokio::test]
async fn td_coap_link_08_filter_href_prefix() {
    let server = Plugtest::start(&[]);
    assert_eq!(
        sorted(discover(&server, "?href=/link*").await),
        ["/link1", "/link2", "/link3"]
    );
}

/// TD_COAP_LINK_09: hierarchical link descriptions — verifies ?ct=40 finds /path, whose GET
/// lists its sub-resources in link format, each of which answers 2.05.
#[tokio::test]
async fn td_coap_link_09_hierarchy() {
    let server = Plugtest::start(&[]);
    assert_eq!(discover(&server, "?ct=40").await, ["/path"]);
    let client = plain_client();
    let r = send(client.request(Code::GET, server.uri("/path"))).await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.content_format(), Some(ContentFormat::LINK_FORMAT));
    let subs: Vec<String> = parse_links(&text(&r)).into_iter().map(|(t, _)| t).collect();
    assert_eq!(subs, ["/path/sub1", "/path/sub2", "/path/sub3"]);
    for sub in subs {
        let r = send(client.request(Code::GET, server.uri(&sub))).await;
        assert_eq!(r.code, Code::CONTENT, "{sub}");
    }
}

// ---------------------------------------------------------------------------------------
// TD_COAP_BLOCK: block-wise transfers (RFC 7959)
// ---------------------------------------------------------------------------------------

/// Size of the plugtest's `/large`.
const LARGE: usize = 1280;

/// Checks a Block2 download on the wire: the client asked for blocks 0, 1, ... of `szx`
/// (block 0 only if `early`), the server sent each with M set but on the last; returns the
/// number of blocks. A server that has not verified the client's address first cuts block
/// 0 smaller and puts Echo in it (RFC 9175 §2.4): the client must then ask for block 0 of
/// `szx` again with that value, and the download is checked from there.
fn check_block2_download(wire: &Wire, szx: u8, early: bool, total: usize) -> usize {
    let mut requests: Vec<Datagram> = wire
        .sent()
        .into_iter()
        .filter(|d| d.msg().code().is_request())
        .collect();
    let mut responses: Vec<Datagram> = wire
        .received()
        .into_iter()
        .filter(|d| d.msg().code().is_response())
        .collect();
    let cut_with_echo = responses.first().and_then(|d| {
        let m = d.msg();
        let echo = m.option(OptionNumber::ECHO)?.to_vec();
        m.block2().filter(|b| b.szx < szx).map(|_| echo)
    });
    if let Some(echo) = cut_with_echo {
        let again = requests.get(1).expect("the request again").msg();
        assert_eq!(again.option(OptionNumber::ECHO), Some(&echo[..]));
        assert_eq!(again.block2().map(|b| (b.num, b.szx)), Some((0, szx)));
        requests.remove(0);
        responses.remove(0);
    }
    let requests: Vec<Option<Block>> = requests.iter().map(|d| d.msg().block2()).collect();
    let responses: Vec<(Block, usize)> = responses
        .iter()
        .map(|d| {
            (
                d.msg().block2().expect("a Block2 option"),
                d.msg().payload().len(),
            )
        })
        .collect();
    let size = 16usize << szx;
    let blocks = total.div_ceil(size);
    assert_eq!(responses.len(), blocks, "{:#?}", wire.summary());
    for (i, (b, len)) in responses.iter().enumerate() {
        assert_eq!((b.num, b.szx), (i as u32, szx), "{:#?}", wire.summary());
        assert_eq!(b.more, i + 1 < blocks);
        assert_eq!(*len, if b.more { size } else { total - i * size });
    }
    for (i, r) in requests.iter().enumerate() {
        match r {
            Some(b) => assert_eq!((b.num, b.szx), (i as u32, szx)),
            None => assert!(i == 0 && !early, "{:#?}", wire.summary()),
        }
    }
    blocks
}

/// TD_COAP_BLOCK_01: GET of a large resource with early negotiation — verifies the client's
/// Block2 (SZX 2, 64 bytes) is honoured for every block and the body reassembles.
#[tokio::test]
async fn td_coap_block_01_get_early_negotiation() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(
        client
            .request(Code::GET, server.uri("/large"))
            .option(OptionNumber::BLOCK2, block_option(0, 2)),
    )
    .await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.payload.len(), LARGE);
    assert!(text(&r).starts_with("0000 The quick brown fox"));
    assert_eq!(check_block2_download(&wire, 2, true, LARGE), 20);
}

/// TD_COAP_BLOCK_02: GET of a large resource with late negotiation — verifies the server
/// starts block-wise on its own (Block2 0/M/1024 with Size2) and the client fetches the rest.
#[tokio::test]
async fn td_coap_block_02_get_late_negotiation() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(client.request(Code::GET, server.uri("/large"))).await;
    assert_eq!(r.payload.len(), LARGE);
    assert_eq!(check_block2_download(&wire, 6, false, LARGE), 2);
    let first = wire
        .received()
        .into_iter()
        .find(|d| d.msg().code().is_response())
        .expect("a response");
    assert_eq!(
        first.msg().uint_option(OptionNumber::SIZE2),
        Some(LARGE as u32)
    );
}

/// A recognisable body of `len` bytes.
fn upload_body(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz"[i % 26])
        .collect()
}

/// Checks a Block1 upload on the wire: 2.31 Continue for every block but the last, each
/// echoing the block, then `code` echoing the last block.
fn check_block1_upload(wire: &Wire, total: usize, code: Code) {
    let uploads: Vec<Block> = wire
        .sent()
        .iter()
        .filter_map(|d| d.msg().block1())
        .collect();
    let blocks = total.div_ceil(1024);
    assert_eq!(uploads.len(), blocks, "{:#?}", wire.summary());
    let answers: Vec<(Code, Option<Block>)> = wire
        .received()
        .iter()
        .filter(|d| d.msg().code().is_response())
        .map(|d| (d.msg().code(), d.msg().block1()))
        .take(blocks)
        .collect();
    for (i, (b, (c, echo))) in uploads.iter().zip(&answers).enumerate() {
        assert_eq!((b.num, b.more), (i as u32, i + 1 < blocks));
        let expected = if b.more { Code::CONTINUE } else { code };
        assert_eq!(*c, expected, "{:#?}", wire.summary());
        assert_eq!(echo.map(|e| e.num), Some(b.num), "the answer echoes Block1");
    }
}

/// TD_COAP_BLOCK_03: PUT of a large body with Block1 — verifies 2.31 Continue per block, 2.04
/// Changed at the end, and that /large-update then holds the whole body.
#[tokio::test]
async fn td_coap_block_03_put_block1() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let body = upload_body(2000);
    let r = send(
        client
            .request(Code::PUT, server.uri("/large-update"))
            .content_format(ContentFormat::TEXT_PLAIN)
            .payload(body.clone()),
    )
    .await;
    assert_eq!(r.code, Code::CHANGED);
    check_block1_upload(&wire, body.len(), Code::CHANGED);
    let r = send(plain_client().request(Code::GET, server.uri("/large-update"))).await;
    assert_eq!(r.payload, body);
}

/// TD_COAP_BLOCK_04: POST of a large body with Block1 — verifies 2.31 Continue per block and
/// 2.01 Created with a Location-Path where the body can be fetched.
#[tokio::test]
async fn td_coap_block_04_post_block1_create() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let body = upload_body(1500);
    let r = send(
        client
            .request(Code::POST, server.uri("/large-create"))
            .content_format(ContentFormat::TEXT_PLAIN)
            .payload(body.clone()),
    )
    .await;
    assert_eq!(r.code, Code::CREATED);
    check_block1_upload(&wire, body.len(), Code::CREATED);
    let location: Vec<String> = r
        .options
        .get_all(OptionNumber::LOCATION_PATH)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    assert_eq!(location.first().map(String::as_str), Some("large-create"));
    let r =
        send(plain_client().request(Code::GET, server.uri(&format!("/{}", location.join("/")))))
            .await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.payload, body);
}

/// TD_COAP_BLOCK_05: POST with Block1 request and Block2 response (/large-post) — verifies the
/// upload is acknowledged block by block and the large answer is fetched with Block2.
#[tokio::test]
async fn td_coap_block_05_post_block1_block2() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let body = upload_body(1500);
    let r = send(
        client
            .request(Code::POST, server.uri("/large-post"))
            .content_format(ContentFormat::TEXT_PLAIN)
            .payload(body.clone()),
    )
    .await;
    assert_eq!(r.code, Code::CHANGED);
    assert_eq!(r.payload, body.to_ascii_uppercase());
    let received = wire.received();
    let answers: Vec<(Code, Option<Block>, Option<Block>)> = received
        .iter()
        .filter(|d| d.msg().code().is_response())
        .map(|d| (d.msg().code(), d.msg().block1(), d.msg().block2()))
        .collect();
    assert_eq!(answers.len(), 3, "{:#?}", wire.summary());
    assert_eq!(answers[0].0, Code::CONTINUE);
    let (code, b1, b2) = answers[1];
    assert_eq!(code, Code::CHANGED);
    assert_eq!(b1.map(|b| (b.num, b.more)), Some((1, false)));
    assert_eq!(b2.map(|b| (b.num, b.more)), Some((0, true)));
    assert_eq!(answers[2].2.map(|b| (b.num, b.more)), Some((1, false)));
    let last_request = wire
        .sent()
        .into_iter()
        .rfind(|d| d.msg().code().is_request());
    let last = last_request.expect("requests");
    assert_eq!(last.msg().code(), Code::POST);
    assert_eq!(last.msg().block2().map(|b| b.num), Some(1));
}

/// TD_COAP_BLOCK_06: GET of a large resource in 16-byte blocks (SZX 0) — verifies the server
/// serves the smallest block size for all 80 blocks.
#[tokio::test]
async fn td_coap_block_06_get_16_byte_blocks() {
    let server = Plugtest::start(&[]);
    let (client, wire) = traced_client();
    let r = send(
        client
            .request(Code::GET, server.uri("/large"))
            .option(OptionNumber::BLOCK2, block_option(0, 0)),
    )
    .await;
    assert_eq!(r.payload.len(), LARGE);
    assert_eq!(check_block2_download(&wire, 0, true, LARGE), 80);
}

// ---------------------------------------------------------------------------------------
// TD_COAP_OBS: Observe (RFC 7641)
// ---------------------------------------------------------------------------------------

/// Changes `/obs` to `body` from another client (a notification follows at once).
async fn update_obs(server: &Plugtest, path: &str, format: ContentFormat, body: &str) {
    let put = plain_client()
        .request(Code::PUT, server.uri(path))
        .content_format(format)
        .payload(body.to_string());
    assert_eq!(send(put).await.code, Code::CHANGED);
}

/// Fails if anything carrying `token` arrives within [`QUIET`].
async fn assert_no_more_notifications(wire: &Wire, token: &[u8]) {
    let mark = wire.mark();
    tokio::time::sleep(QUIET).await;
    let late: Vec<_> = wire
        .since(mark)
        .into_iter()
        .filter(|d| !d.sent && d.has_token(token))
        .collect();
    assert!(
        late.is_empty(),
        "notified after deregistration: {:#?}",
        wire.summary()
    );
}

/// Checks a registration response: 2.05 with Observe, Content-Format and Max-Age.
fn check_registration(r: &Response) {
    assert_eq!(r.code, Code::CONTENT);
    assert!(
        r.observe().is_some(),
        "the registration's answer carries Observe"
    );
    assert_eq!(r.content_format(), Some(ContentFormat::TEXT_PLAIN));
    assert!(
        r.options.uint(OptionNumber::MAX_AGE).is_some(),
        "and Max-Age"
    );
}

/// TD_COAP_OBS_01: observation with CON notifications (/obs) — verifies the registration
/// answer carries Observe, later notifications are CON with the token and increasing Observe
/// values, and the client acknowledges each.
#[tokio::test]
async fn td_coap_obs_01_con_notifications() {
    let server = Plugtest::start(&["--obs-period", "0.3"]);
    let (client, wire) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/obs"))
        .observe()
        .await
        .expect("observe");
    let first = next_notification(&mut stream).await.expect("registered");
    check_registration(&first);
    let token = wire.first_request().msg().token_bytes().to_vec();
    let mut last = first.observe().expect("Observe");
    for _ in 0..2 {
        let n = next_notification(&mut stream)
            .await
            .expect("a notification");
        assert_eq!(n.code, Code::CONTENT);
        let seq = n.observe().expect("Observe");
        assert!(is_newer(last, seq), "{last} then {seq}");
        last = seq;
    }
    let notifications: Vec<Datagram> = wire
        .received()
        .into_iter()
        .filter(|d| d.has_token(&token) && d.msg().message_type() != ACK)
        .collect();
    assert!(notifications.len() >= 2);
    for n in notifications {
        assert_eq!(n.msg().message_type(), CON, "{:#?}", wire.summary());
        let mid = n.msg().message_id();
        wire.wait_for("the client's ACK of a notification", |d| {
            d.sent && d.is_empty(ACK, mid)
        })
        .await;
    }
    stream.cancel().await;
}

/// TD_COAP_OBS_02: observation with NON notifications (/obs-non) — verifies notifications
/// are NON with the token and increasing Observe values, and nothing is acknowledged.
#[tokio::test]
async fn td_coap_obs_02_non_notifications() {
    // The test description wants a piggy-backed answer: to a client it has not verified, the
    // server would send the registration's answer as a CON instead.
    let server = Plugtest::without_echo(&["--obs-period", "0.3"]);
    let (client, wire) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/obs-non"))
        .observe()
        .await
        .expect("observe");
    let first = next_notification(&mut stream).await.expect("registered");
    check_registration(&first);
    let token = wire.first_request().msg().token_bytes().to_vec();
    let mut last = first.observe().expect("Observe");
    for _ in 0..2 {
        let n = next_notification(&mut stream)
            .await
            .expect("a notification");
        let seq = n.observe().expect("Observe");
        assert!(is_newer(last, seq), "{last} then {seq}");
        last = seq;
    }
    let notifications: Vec<Datagram> = wire
        .received()
        .into_iter()
        .filter(|d| d.has_token(&token) && d.msg().message_type() != ACK)
        .collect();
    assert!(notifications.len() >= 2);
    assert!(notifications.iter().all(|n| n.msg().message_type() == NON));
    assert!(
        wire.sent().iter().all(|d| d.msg().message_type() != ACK),
        "NON notifications are not acknowledged: {:#?}",
        wire.summary()
    );
    stream.cancel().await;
}

/// TD_COAP_OBS_03: stopping an observation — verifies the client's GET with Observe 1 and the
/// same token is answered 2.05 without Observe and no notification follows.
#[tokio::test]
async fn td_coap_obs_03_stop_observation() {
    let server = Plugtest::start(&["--obs-period", "60"]);
    let (client, wire) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/obs"))
        .observe()
        .await
        .expect("observe");
    check_registration(&next_notification(&mut stream).await.expect("registered"));
    let token = wire.first_request().msg().token_bytes().to_vec();
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "one").await;
    let n = next_notification(&mut stream)
        .await
        .expect("a notification");
    assert_eq!(text(&n), "one");
    let last = stream.cancel().await.expect("the deregistration's answer");
    assert_eq!(last.code, Code::CONTENT);
    assert_eq!(last.observe(), None, "no longer observing");
    let dereg = wire
        .sent()
        .into_iter()
        .find(|d| d.has_token(&token) && d.msg().observe() == Some(1))
        .unwrap_or_else(|| panic!("no GET with Observe 1: {:#?}", wire.summary()));
    assert_eq!(dereg.msg().code(), Code::GET);
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "two").await;
    assert_no_more_notifications(&wire, &token).await;
}

/// TD_COAP_OBS_04: client detection of deregistration (Max-Age) — the server restarts and
/// forgets the observer; verifies notifications carry Max-Age, none arrives once it has
/// passed, and the client's re-registration is notified again.
#[tokio::test]
async fn td_coap_obs_04_max_age_reregistration() {
    let period = ["--obs-period", "0.4"];
    let server = Plugtest::start(&period);
    let port = server.port;
    let (client, _) = traced_client();
    let uri = server.uri("/obs");
    let mut stream = client
        .request(Code::GET, &uri)
        .observe()
        .await
        .expect("observe");
    check_registration(&next_notification(&mut stream).await.expect("registered"));
    let n = next_notification(&mut stream)
        .await
        .expect("a notification");
    let max_age = Duration::from_secs(u64::from(
        n.options.uint(OptionNumber::MAX_AGE).expect("Max-Age"),
    ));
    assert!(max_age >= Duration::from_secs(1));
    // The server reboots: its observers are gone.
    drop(server);
    let _restarted = Plugtest::start_on(port, &period);
    let stale = tokio::time::timeout(max_age + Duration::from_millis(300), stream.next()).await;
    assert!(
        stale.is_err(),
        "no notification after the restart: {stale:?}"
    );
    // Max-Age passed without news: the client registers again.
    drop(stream);
    let mut again = client
        .request(Code::GET, &uri)
        .observe()
        .await
        .expect("observe");
    check_registration(
        &next_notification(&mut again)
            .await
            .expect("registered again"),
    );
    let n = next_notification(&mut again).await.expect("notified again");
    assert_eq!(n.code, Code::CONTENT);
    again.cancel().await;
}

/// TD_COAP_OBS_05: server detection of deregistration (client off) — a client registers and
/// then answers nothing; verifies the server retransmits the CON notification with the same
/// MID, gives up, and sends nothing more to that client.
#[tokio::test]
async fn td_coap_obs_05_client_off() {
    let server = Plugtest::without_echo(&["--obs-period", "60", "--ack-timeout", "0.05"]);
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
    socket.connect(server.addr()).expect("connect");
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    // CON GET /obs, Observe 0, token "off", MID 0x0101.
    let register = [
        0x43, 0x01, 0x01, 0x01, b'o', b'f', b'f', 0x60, 0x53, b'o', b'b', b's',
    ];
    socket.send(&register).expect("send");
    let mut buf = [0u8; 1500];
    let n = socket.recv(&mut buf).expect("the registration's answer");
    let m = Message::parse(&buf[..n]).expect("CoAP");
    assert_eq!(
        (m.message_type(), m.code(), m.message_id()),
        (ACK, Code::CONTENT, 0x0101)
    );
    assert!(m.observe().is_some());
    // The client is off from here on: nothing is acknowledged.
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "are you there").await;
    let mut mids = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut quiet_since = Instant::now();
    while Instant::now() < deadline && quiet_since.elapsed() < Duration::from_millis(1500) {
        if let Ok(n) = socket.recv(&mut buf) {
            let m = Message::parse(&buf[..n]).expect("CoAP");
            assert_eq!(
                (m.message_type(), m.token_bytes()),
                (CON, b"off".as_slice())
            );
            mids.push(m.message_id());
            quiet_since = Instant::now();
        }
    }
    assert_eq!(
        mids.len(),
        5,
        "sent once and retransmitted MAX_RETRANSMIT (4) times: {mids:?}"
    );
    assert!(mids.iter().all(|m| *m == mids[0]), "{mids:?}");
    // The observer was removed: a new state reaches nobody.
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "gone").await;
    socket.set_read_timeout(Some(QUIET)).expect("timeout");
    assert!(
        socket.recv(&mut buf).is_err(),
        "no notification to a removed observer"
    );
}

/// TD_COAP_OBS_06: server detection of deregistration (explicit RST) — the client forgets the
/// observation; verifies it rejects the next notification with RST (same MID) and the server
/// sends no more.
#[tokio::test]
async fn td_coap_obs_06_reset_deregisters() {
    let server = Plugtest::without_echo(&["--obs-period", "60"]);
    let (client, wire) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/obs"))
        .observe()
        .await
        .expect("observe");
    check_registration(&next_notification(&mut stream).await.expect("registered"));
    let token = wire.first_request().msg().token_bytes().to_vec();
    // Forget the observation without telling the server. The drop queues a cancel for the
    // client's driver, which takes commands in order: once a later request through the same
    // client is answered, the observation is forgotten.
    drop(stream);
    assert_eq!(
        send(client.request(Code::GET, server.uri("/test")))
            .await
            .code,
        Code::CONTENT
    );
    let mark = wire.mark();
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "unwanted").await;
    let notification = wire
        .wait_for("the unwanted notification", |d| {
            !d.sent && d.has_token(&token) && d.msg().message_type() == CON
        })
        .await;
    assert!(wire
        .since(mark)
        .iter()
        .any(|d| d.bytes == notification.bytes));
    let mid = notification.msg().message_id();
    wire.wait_for("the client's RST", |d| d.sent && d.is_empty(RST, mid))
        .await;
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "still unwanted").await;
    let seen = wire
        .received()
        .iter()
        .filter(|d| d.has_token(&token))
        .count();
    assert_no_more_notifications(&wire, &token).await;
    assert_eq!(seen, 2, "the registration's answer and one notification");
}

/// TD_COAP_OBS_07: the server cleans its observers on DELETE — verifies observers get a 4.04
/// notification without Observe and their observation ends.
#[tokio::test]
async fn td_coap_obs_07_delete_ends_observation() {
    let server = Plugtest::start(&["--obs-period", "60"]);
    let (client, wire) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/obs"))
        .observe()
        .await
        .expect("observe");
    check_registration(&next_notification(&mut stream).await.expect("registered"));
    let token = wire.first_request().msg().token_bytes().to_vec();
    let r = send(plain_client().request(Code::DELETE, server.uri("/obs"))).await;
    assert_eq!(r.code, Code::DELETED);
    let gone = next_notification(&mut stream)
        .await
        .expect("the 4.04 notification");
    assert_eq!(gone.code, Code::NOT_FOUND);
    assert_eq!(gone.observe(), None);
    assert!(
        next_notification(&mut stream).await.is_none(),
        "the observation ended"
    );
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "back again").await;
    assert_no_more_notifications(&wire, &token).await;
}

/// TD_COAP_OBS_08: the server cleans its observers when the content format changes —
/// verifies a PUT in application/xml ends the text/plain observation with 4.06.
#[tokio::test]
async fn td_coap_obs_08_format_change_ends_observation() {
    let server = Plugtest::start(&["--obs-period", "60"]);
    let (client, _) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/obs"))
        .observe()
        .await
        .expect("observe");
    check_registration(&next_notification(&mut stream).await.expect("registered"));
    update_obs(&server, "/obs", ContentFormat::XML, "<status>xml</status>").await;
    let ended = next_notification(&mut stream)
        .await
        .expect("the 4.06 notification");
    assert_eq!(ended.code, Code::NOT_ACCEPTABLE);
    assert!(
        next_notification(&mut stream).await.is_none(),
        "the observation ended"
    );
    let r = send(plain_client().request(Code::GET, server.uri("/obs"))).await;
    assert_eq!(r.content_format(), Some(ContentFormat::XML));
}

/// TD_COAP_OBS_09: update of the observed resource — verifies a PUT by another client
/// reaches the observer at once as a notification with the new payload and a newer Observe.
#[tokio::test]
async fn td_coap_obs_09_update_notifies() {
    let server = Plugtest::start(&["--obs-period", "60"]);
    let (client, _) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/obs"))
        .observe()
        .await
        .expect("observe");
    let first = next_notification(&mut stream).await.expect("registered");
    check_registration(&first);
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "new value").await;
    let n = next_notification(&mut stream)
        .await
        .expect("a notification");
    assert_eq!((n.code, text(&n)), (Code::CONTENT, "new value".into()));
    assert_eq!(n.content_format(), Some(ContentFormat::TEXT_PLAIN));
    assert!(is_newer(
        first.observe().expect("Observe"),
        n.observe().expect("Observe")
    ));
    stream.cancel().await;
}

/// TD_COAP_OBS_10: deregistration by a GET without Observe — verifies a plain GET with the
/// observation's token is answered 2.05 without Observe and ends the notifications.
#[tokio::test]
async fn td_coap_obs_10_get_without_observe_deregisters() {
    let server = Plugtest::start(&["--obs-period", "60"]);
    let (client, wire) = traced_client();
    let token = vec![0x0b, 0x51, 0x0a];
    let uri = server.uri("/obs");
    let mut stream = client
        .request(Code::GET, &uri)
        .token(token.clone())
        .observe()
        .await
        .expect("observe");
    check_registration(&next_notification(&mut stream).await.expect("registered"));
    // The client forgets the observation and then asks again without Observe (the client's
    // driver takes the cancel the drop queues before this request).
    drop(stream);
    let r = send(client.request(Code::GET, &uri).token(token.clone())).await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.observe(), None);
    update_obs(&server, "/obs", ContentFormat::TEXT_PLAIN, "nobody listens").await;
    assert_no_more_notifications(&wire, &token).await;
    assert!(
        wire.sent().iter().all(|d| d.msg().message_type() != RST),
        "deregistered by the GET, not by a reset: {:#?}",
        wire.summary()
    );
}
