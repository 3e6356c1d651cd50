//! The clients people use against `covey serve --plugtest` at its default settings (the
//! amplification limit on, no flags): libcoap's coap-client-notls, aiocoap 0.4.17 and a
//! minimal RFC 7252/7641 client written here that knows no Echo. Each GETs a small resource,
//! `/large` whole, `/separate` and `/.well-known/core`, and observes `/time` for at least
//! three notifications. Every exchange goes through a fresh recording relay, so the server
//! meets each one from an address it has not verified. `-- --nocapture` prints the round
//! trips each client needed for `/large`.

mod harness;
mod plain_client;
mod support;

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::time::Duration;

use covey::OptionNumber;
use harness::{venv_bin, Direction, Relay};
use plain_client::PlainClient;
use support::{covey_server, peer, run_limited, stdout};

const LIMIT: Duration = Duration::from_secs(40);
/// Size of the plugtest's `/large` (crates/covey-demo/src/plugtest/mod.rs).
const LARGE_SIZE: usize = 1280;

/// A `covey serve --plugtest` with no other flag.
fn server() -> (support::Background, SocketAddr) {
    let (server, port) = covey_server(&["--plugtest"]);
    (server, SocketAddr::from(([127, 0, 0, 1], port)))
}

/// Requests the client sent through `relay` (retransmissions not counted).
fn round_trips(relay: &Relay) -> usize {
    let mut mids: Vec<u16> = relay
        .log()
        .iter()
        .filter(|r| r.direction == Direction::ToServer)
        .filter_map(|r| {
            r.msg()
                .filter(|m| m.code().is_request())
                .map(|m| m.message_id())
        })
        .collect();
    mids.dedup();
    mids.len()
}

/// Responses carrying Observe that reached the client through `relay`, by message ID.
fn notifications(relay: &Relay) -> usize {
    let mut mids: Vec<u16> = relay
        .log()
        .iter()
        .filter(|r| r.direction == Direction::ToClient)
        .filter_map(|r| {
            r.msg()
                .filter(|m| m.code().is_response() && m.option(OptionNumber::OBSERVE).is_some())
                .map(|m| m.message_id())
        })
        .collect();
    mids.sort_unstable();
    mids.dedup();
    mids.len()
}

/// Checks that `out` succeeded and printed something containing `needle`.
fn printed(name: &str, out: &Output, needle: &str, relay: &Relay) -> String {
    let text = stdout(out);
    assert!(
        out.status.success() && text.contains(needle),
        "{name}: {out:?}\n{}",
        relay.summary().join("\n")
    );
    text
}

/// The five exchanges through fresh relays with `run(uri) -> Output` for one-shot GETs
/// (`large` gets a longer limit) and `observe(uri) -> Output` for `/time`.
fn exchanges(name: &str, get: impl Fn(&str) -> Command, observe: impl Fn(&str) -> Command) {
    let (_server, addr) = server();
    let relay = Relay::tap(addr);
    printed(
        name,
        &run_limited(get(&relay.uri("/sensors/temp")), LIMIT),
        ".",
        &relay,
    );
    let relay = Relay::tap(addr);
    let out = run_limited(get(&relay.uri("/large")), LIMIT);
    let body = printed(name, &out, "0000 The quick brown fox", &relay);
    assert_eq!(body.trim_end().len(), LARGE_SIZE, "{name}: {body}");
    eprintln!(
        "{name}: /large ({LARGE_SIZE} bytes) in {} round trips",
        round_trips(&relay)
    );
    let relay = Relay::tap(addr);
    let text = printed(
        name,
        &run_limited(get(&relay.uri("/separate")), LIMIT),
        "",
        &relay,
    );
    assert!(
        !text.trim().is_empty(),
        "{name}: /separate printed nothing\n{}",
        relay.summary().join("\n")
    );
    let relay = Relay::tap(addr);
    printed(
        name,
        &run_limited(get(&relay.uri("/.well-known/core")), LIMIT),
        "</large>",
        &relay,
    );
    let relay = Relay::tap(addr);
    let out = run_limited(observe(&relay.uri("/time")), LIMIT);
    let seen = notifications(&relay);
    assert!(
        seen >= 4,
        "{name}: the registration's answer and three notifications expected, {seen} seen: \
         {out:?}\n{}",
        relay.summary().join("\n")
    );
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn libcoap_client_works_at_default_settings() {
    exchanges(
        "coap-client-notls",
        |uri| {
            let mut cmd = peer("coap-client-notls", "libcoap3-bin");
            cmd.args(["-B", "30", "-m", "get", uri]);
            cmd
        },
        |uri| {
            let mut cmd = peer("coap-client-notls", "libcoap3-bin");
            cmd.args(["-B", "30", "-s", "5", "-m", "get", uri]);
            cmd
        },
    );
}

#[test]
#[ignore = "needs aiocoap in target/venv"]
fn aiocoap_client_works_at_default_settings() {
    exchanges(
        "aiocoap",
        |uri| {
            let mut cmd = Command::new(venv_bin("aiocoap-client"));
            cmd.arg(uri);
            cmd
        },
        |uri| {
            let mut cmd = Command::new(venv_bin("python"));
            let script = concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/peers/aiocoap_observe.py"
            );
            cmd.args([script, uri, "3"]);
            cmd
        },
    );
}

#[test]
fn a_plain_rfc7252_client_without_echo_works_at_default_settings() {
    let (_server, addr) = server();
    let limit = LIMIT;
    let relay = Relay::tap(addr);
    let small = PlainClient::new(relay.addr).get("sensors/temp", limit);
    assert_eq!(small.code, 0x45, "2.05: {small:?}");
    assert!(!small.body.is_empty());

    let relay = Relay::tap(addr);
    let large = PlainClient::new(relay.addr).get("large", limit);
    assert_eq!(large.code, 0x45, "{}", relay.summary().join("\n"));
    assert_eq!(large.body.len(), LARGE_SIZE);
    assert!(large.body.starts_with(b"0000 The quick brown fox"));
    eprintln!(
        "plain RFC 7252 client: /large ({LARGE_SIZE} bytes) in {} round trips",
        large.round_trips
    );
    // Its RST to the server's ping verified it: full-size blocks, not 80 16-byte ones.
    assert_eq!(large.round_trips, 2, "{}", relay.summary().join("\n"));

    let relay = Relay::tap(addr);
    let separate = PlainClient::new(relay.addr).get("separate", limit);
    assert_eq!(separate.code, 0x45, "{}", relay.summary().join("\n"));
    assert!(separate.separate, "an empty ACK first, then the response");
    assert!(!separate.body.is_empty());

    let relay = Relay::tap(addr);
    let core = PlainClient::new(relay.addr).get(".well-known/core", limit);
    assert_eq!(core.code, 0x45);
    assert!(String::from_utf8_lossy(&core.body).contains("</large>"));

    let relay = Relay::tap(addr);
    let seen = PlainClient::new(relay.addr).observe("time", 3, Duration::from_secs(10));
    assert!(
        seen.len() >= 4,
        "the registration's answer and three notifications: {seen:?}\n{}",
        relay.summary().join("\n")
    );
    assert!(seen.iter().all(|p| p.ends_with(b"Z")), "{seen:?}");
}
