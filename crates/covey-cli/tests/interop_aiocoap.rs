//! Interop with aiocoap (from PyPI, in the virtual environment `scripts/test.sh` creates under
//! `target/venv`): aiocoap's client against `covey serve --plugtest`, and Covey's client
//! against a small aiocoap server (`tests/peers/aiocoap_server.py`). Traffic to Covey's
//! server goes through a recording relay, so the tests also check the messages on the wire.

mod harness;
mod support;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use covey::{Code, ContentFormat, OptionNumber};
use covey_core::{Message, MessageType};

use harness::{
    is_newer, next_notification, plain_client, send, traced_client, venv_bin, Direction, Plugtest,
    Relay, Relayed,
};
use support::{run_limited, stderr, stdout, udp_port_of, Background};

const LIMIT: Duration = Duration::from_secs(20);

/// Runs `aiocoap-client` with `args`.
fn aiocoap_client(args: &[&str]) -> Output {
    let mut cmd = Command::new(venv_bin("aiocoap-client"));
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

/// Runs `aiocoap-client` and expects success.
fn aiocoap_ok(args: &[&str]) -> String {
    let out = aiocoap_client(args);
    assert!(out.status.success(), "aiocoap-client {args:?}: {out:?}");
    stdout(&out)
}

/// A peer script in `tests/peers`.
fn peer_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// The messages that went `direction` through the relay (those it could parse).
fn messages(log: &[Relayed], direction: Direction) -> Vec<Vec<u8>> {
    log.iter()
        .filter(|r| r.direction == direction && r.msg().is_some())
        .map(|r| r.bytes.clone())
        .collect()
}

/// [`messages`] without the server's address check: its ping (an Empty CON) and the RST
/// that answers it.
fn exchanged(log: &[Relayed], direction: Direction) -> Vec<Vec<u8>> {
    messages(log, direction)
        .into_iter()
        .filter(|b| {
            let m = parse(b);
            !(m.code() == Code::EMPTY
                && matches!(
                    m.message_type(),
                    MessageType::Confirmable | MessageType::Reset
                ))
        })
        .collect()
}

fn parse(bytes: &[u8]) -> Message<'_> {
    Message::parse(bytes).expect("CoAP")
}

// ---------------------------------------------------------------------------------------
// aiocoap's client against covey serve --plugtest
// ---------------------------------------------------------------------------------------

// aiocoap's client (0.4.17) answers Echo only inside OSCORE, but it answers the default
// server's CoAP ping with an RST and acknowledges its CONs, which verify its address: a
// response too large for its budget comes whole after the ping (interop_echo.rs checks the
// budget when the RST is lost; interop_defaults.rs observes at default settings).

/// GET, PUT, POST and DELETE from aiocoap-client in CON and in NON mode, with the message
/// types checked on the wire.
#[test]
#[ignore = "needs aiocoap in target/venv"]
fn aiocoap_client_methods_con_and_non() {
    let server = Plugtest::start(&[]);
    for non in [false, true] {
        let relay = Relay::tap(server.addr());
        let mode: &[&str] = if non { &["--non"] } else { &[] };
        let run_out = |args: &[&str]| aiocoap_client(&[mode, args].concat());
        let run = |args: &[&str]| aiocoap_ok(&[mode, args].concat());
        let out = run(&[&relay.uri("/test")]);
        let kind = if non {
            "Type: 1 (NON)"
        } else {
            "Type: 0 (CON)"
        };
        assert!(out.contains(kind) && out.contains("Code: 1 (GET)"), "{out}");

        run(&[
            "-m",
            "PUT",
            "--payload",
            "put by aiocoap",
            &relay.uri("/test"),
        ]);
        assert!(run(&[&relay.uri("/test")]).contains("put by aiocoap"));
        assert_eq!(
            run(&[
                "-m",
                "POST",
                "--payload",
                "shout",
                &relay.uri("/large-post")
            ])
            .trim(),
            "SHOUT"
        );
        let out = run_out(&["-m", "POST", "--payload", "new", &relay.uri("/test")]);
        assert!(out.status.success(), "{out:?}");
        assert!(
            stderr(&out).contains("/location1/location2/location3"),
            "aiocoap reports the Location-Path: {}",
            stderr(&out)
        );
        run(&["-m", "DELETE", &relay.uri("/test")]);
        let missing = run_out(&[&relay.uri("/no-such-resource")]);
        assert!(!missing.status.success());
        assert!(stderr(&missing).contains("4.04"), "{}", stderr(&missing));

        // On the wire: every request had the asked-for type, and so had every response
        // (piggy-backed in an ACK for CON requests); the server's ping checking the new
        // address, and aiocoap's RST to it, are left aside.
        let log = relay.log();
        let requests = exchanged(&log, Direction::ToServer);
        let responses = exchanged(&log, Direction::ToClient);
        let (want_request, want_response) = if non {
            (MessageType::NonConfirmable, MessageType::NonConfirmable)
        } else {
            (MessageType::Confirmable, MessageType::Acknowledgement)
        };
        assert!(requests.len() >= 7, "{:#?}", relay.summary());
        for r in &requests {
            assert_eq!(
                parse(r).message_type(),
                want_request,
                "{:#?}",
                relay.summary()
            );
        }
        for r in &responses {
            assert_eq!(
                parse(r).message_type(),
                want_response,
                "{:#?}",
                relay.summary()
            );
        }
    }
}

/// aiocoap-client gets /separate: an empty ACK first, then the CON response it acknowledges,
/// whole: the server checked its address with a ping, which aiocoap answered.
#[test]
#[ignore = "needs aiocoap in target/venv"]
fn aiocoap_client_separate_response() {
    let server = Plugtest::start(&[]);
    let relay = Relay::tap(server.addr());
    let start = Instant::now();
    let out = aiocoap_ok(&[&relay.uri("/separate")]);
    assert!(start.elapsed() >= Duration::from_millis(1400));
    assert!(out.contains("Separate response"), "{out}");
    let log = relay.log();
    let request = messages(&log, Direction::ToServer)[0].clone();
    let mid = parse(&request).message_id();
    let to_client = exchanged(&log, Direction::ToClient);
    let kinds: Vec<(MessageType, Code)> = to_client
        .iter()
        .map(|b| (parse(b).message_type(), parse(b).code()))
        .collect();
    assert_eq!(
        kinds,
        [
            (MessageType::Acknowledgement, Code::EMPTY),
            (MessageType::Confirmable, Code::CONTENT)
        ],
        "{:#?}",
        relay.summary()
    );
    assert!(parse(&to_client[1]).block2().is_none(), "whole");
    assert_eq!(parse(&to_client[0]).message_id(), mid);
    let response_mid = parse(&to_client[1]).message_id();
    assert!(
        messages(&log, Direction::ToServer).iter().any(|b| {
            let m = parse(b);
            m.message_type() == MessageType::Acknowledgement
                && m.code() == Code::EMPTY
                && m.message_id() == response_mid
        }),
        "aiocoap acknowledges the separate response: {:#?}",
        relay.summary()
    );
}

/// aiocoap-client discovers with RFC 6690 filters (rt, if with a prefix, href with a prefix).
#[test]
#[ignore = "needs aiocoap in target/venv"]
fn aiocoap_client_discovery_with_filters() {
    let server = Plugtest::start(&[]);
    let discover = |query: &str| aiocoap_ok(&[&server.uri(&format!("/.well-known/core{query}"))]);
    assert_eq!(
        discover("?rt=Type2").trim(),
        r#"</link1>;rt="Type1 Type2";if="If1",</link2>;rt="Type2 Type3";if="If2""#
    );
    assert_eq!(
        discover("?if=foo").trim(),
        r#"</link3>;rt="Type1 Type3";if="foo""#
    );
    let links = discover("?href=/link*");
    let targets: Vec<&str> = links
        .trim()
        .split(',')
        .map(|l| l.split(';').next().unwrap_or(""))
        .collect();
    assert_eq!(targets, ["</link1>", "</link2>", "</link3>"]);
}

/// aiocoap-client downloads /large block-wise (Block2), the blocks checked on the wire: it
/// does not answer Echo, but it answers the server's ping, which verifies its address, so
/// the blocks come at full size, and it asks for each in turn until the last.
#[test]
#[ignore = "needs aiocoap in target/venv"]
fn aiocoap_client_block2_download() {
    let server = Plugtest::start(&[]);
    let relay = Relay::tap(server.addr());
    let out = aiocoap_ok(&[&relay.uri("/large")]);
    assert_eq!(out.len(), 1280, "{out}");
    assert!(out.starts_with("0000 The quick brown fox"));
    let log = relay.log();
    let blocks: Vec<(u32, bool, u8)> = messages(&log, Direction::ToClient)
        .iter()
        .filter_map(|b| parse(b).block2().map(|b| (b.num, b.more, b.szx)))
        .collect();
    let szx = blocks.first().expect("blocks").2;
    assert_eq!(szx, 6, "1 024-byte blocks: {:#?}", relay.summary());
    let count = 1280usize.div_ceil(16 << szx) as u32;
    let expected: Vec<(u32, bool, u8)> = (0..count).map(|n| (n, n + 1 < count, szx)).collect();
    assert_eq!(blocks, expected, "{:#?}", relay.summary());
}

/// aiocoap-client uploads more than 1 KiB to /large-update with Block1; the body arrives whole.
#[test]
#[ignore = "needs aiocoap in target/venv"]
fn aiocoap_client_block1_upload() {
    let server = Plugtest::start(&[]);
    let relay = Relay::tap(server.addr());
    let body: String = (0..2000).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let dir = std::env::temp_dir().join(format!("covey-aiocoap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("block1.txt");
    std::fs::write(&file, &body).expect("write the upload");
    let payload = format!("@{}", file.display());
    aiocoap_ok(&[
        "-m",
        "PUT",
        "--payload",
        &payload,
        &relay.uri("/large-update"),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let log = relay.log();
    let uploads: Vec<u32> = messages(&log, Direction::ToServer)
        .iter()
        .filter_map(|b| parse(b).block1().map(|b| b.num))
        .collect();
    assert!(
        uploads.len() >= 2,
        "sent block-wise: {:#?}",
        relay.summary()
    );
    let codes: Vec<Code> = messages(&log, Direction::ToClient)
        .iter()
        .map(|b| parse(b).code())
        .collect();
    assert!(codes.contains(&Code::CONTINUE), "{codes:?}");
    assert_eq!(codes.last(), Some(&Code::CHANGED));
    assert_eq!(aiocoap_ok(&[&server.uri("/large-update")]), body);
}

/// aiocoap observes /obs, takes two notifications and cancels: it rejects the next
/// notification with RST, and Covey's server then stops notifying it.
#[test]
#[ignore = "needs aiocoap in target/venv"]
fn aiocoap_observes_and_cancels() {
    let server = Plugtest::without_echo(&["--obs-period", "0.3"]);
    let relay = Relay::tap(server.addr());
    let mut cmd = Command::new(venv_bin("python"));
    cmd.arg(peer_script("aiocoap_observe.py"))
        .arg(relay.uri("/obs"))
        .arg("2");
    let out = run_limited(cmd, LIMIT);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(
        lines[0].starts_with("registered: 2.05 Content 20"),
        "{lines:?}"
    );
    assert!(lines[1..3]
        .iter()
        .all(|l| l.starts_with("notification: 2.05 Content 20") && l.ends_with('Z')));
    assert_eq!(lines[3], "cancelled");
    // Give a server that kept notifying the chance to show it.
    std::thread::sleep(Duration::from_millis(700));
    let log = relay.log();
    let token = parse(&messages(&log, Direction::ToServer)[0])
        .token_bytes()
        .to_vec();
    let first_reset = log
        .iter()
        .position(|r| {
            r.direction == Direction::ToServer
                && r.msg()
                    .is_some_and(|m| m.message_type() == MessageType::Reset)
        })
        .unwrap_or_else(|| {
            panic!(
                "aiocoap never rejected a notification: {:#?}",
                relay.summary()
            )
        });
    let after_reset = log[first_reset..]
        .iter()
        .filter(|r| r.direction == Direction::ToClient)
        .filter(|r| r.msg().is_some_and(|m| m.token_bytes() == token))
        .count();
    // At most one notification may have crossed the RST on the wire.
    assert!(after_reset <= 1, "{:#?}", relay.summary());
}

// ---------------------------------------------------------------------------------------
// Covey's client against an aiocoap server
// ---------------------------------------------------------------------------------------

/// The aiocoap peer server on an ephemeral port, killed when dropped.
struct AiocoapServer {
    _process: Background,
    port: u16,
}

impl AiocoapServer {
    async fn start() -> AiocoapServer {
        // On port 0: /proc says which port it holds once it has bound.
        let mut cmd = Command::new(venv_bin("python"));
        cmd.arg(peer_script("aiocoap_server.py")).args(["0", "0.3"]);
        let mut process = Background::start(cmd);
        let port = udp_port_of(&mut process);
        AiocoapServer {
            _process: process,
            port,
        }
    }

    fn uri(&self, path: &str) -> String {
        format!("coap://127.0.0.1:{}{path}", self.port)
    }
}

/// What the aiocoap peer serves at /large.
fn aiocoap_large() -> Vec<u8> {
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 3000 {
        text.push_str(&format!("{n:04} aiocoap block-wise line\n"));
        n += 1;
    }
    text.truncate(3000);
    text.into_bytes()
}

/// Covey's client GETs and PUTs on aiocoap, small and block-wise (Block1 up, Block2 down).
#[tokio::test]
#[ignore = "needs aiocoap in target/venv"]
async fn covey_client_get_and_put_against_aiocoap() {
    let server = AiocoapServer::start().await;
    let client = plain_client();
    let r = send(client.request(Code::GET, server.uri("/hello"))).await;
    assert_eq!(
        (r.code, r.payload_text()),
        (Code::CONTENT, "Hello from aiocoap".into())
    );
    assert_eq!(r.content_format(), Some(ContentFormat::TEXT_PLAIN));
    let put = client
        .request(Code::PUT, server.uri("/store"))
        .content_format(ContentFormat::TEXT_PLAIN)
        .payload("stored by covey");
    assert_eq!(send(put).await.code, Code::CHANGED);
    let r = send(client.request(Code::GET, server.uri("/store"))).await;
    assert_eq!(r.payload_text(), "stored by covey");
    // More than one block each way.
    let big: Vec<u8> = (0..2500).map(|i| b"0123456789"[i % 10]).collect();
    let (traced, wire) = traced_client();
    let put = traced
        .request(Code::PUT, server.uri("/store"))
        .payload(big.clone());
    assert_eq!(send(put).await.code, Code::CHANGED);
    assert!(
        wire.sent()
            .iter()
            .filter(|d| d.msg().block1().is_some())
            .count()
            >= 3,
        "{:#?}",
        wire.summary()
    );
    let r = send(client.request(Code::GET, server.uri("/store"))).await;
    assert_eq!(r.payload, big);
}

/// Covey's client downloads aiocoap's 3000-byte /large block by block (Block2).
#[tokio::test]
#[ignore = "needs aiocoap in target/venv"]
async fn covey_client_block2_download_from_aiocoap() {
    let server = AiocoapServer::start().await;
    let (client, wire) = traced_client();
    let r = send(client.request(Code::GET, server.uri("/large"))).await;
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(r.payload, aiocoap_large());
    let blocks: Vec<(u32, bool)> = wire
        .received()
        .iter()
        .filter_map(|d| d.msg().block2().map(|b| (b.num, b.more)))
        .collect();
    assert_eq!(
        blocks,
        [(0, true), (1, true), (2, false)],
        "{:#?}",
        wire.summary()
    );
    assert!(wire
        .sent()
        .iter()
        .skip(1)
        .all(|d| !d.msg().code().is_request() || d.msg().block2().is_some()));
}

/// Covey's client observes aiocoap's /counter: notifications with growing values and Observe
/// numbers, then a polite deregistration (GET with Observe 1) answered without Observe.
#[tokio::test]
#[ignore = "needs aiocoap in target/venv"]
async fn covey_client_observes_aiocoap() {
    let server = AiocoapServer::start().await;
    let (client, wire) = traced_client();
    let mut stream = client
        .request(Code::GET, server.uri("/counter"))
        .observe()
        .await
        .expect("observe");
    let first = next_notification(&mut stream).await.expect("registered");
    assert_eq!(first.code, Code::CONTENT);
    let mut seq = first.observe().expect("aiocoap accepted the registration");
    let mut value: u64 = first.payload_text().parse().expect("a number");
    for _ in 0..2 {
        let n = next_notification(&mut stream)
            .await
            .expect("a notification");
        let next_seq = n.observe().expect("Observe");
        let next_value: u64 = n.payload_text().parse().expect("a number");
        assert!(is_newer(seq, next_seq), "{seq} then {next_seq}");
        assert!(next_value > value, "{value} then {next_value}");
        (seq, value) = (next_seq, next_value);
    }
    let last = stream
        .cancel()
        .await
        .expect("aiocoap answers the deregistration");
    assert_eq!(last.code, Code::CONTENT);
    assert_eq!(last.options.get(OptionNumber::OBSERVE), None);
    let token = wire.first_request().msg().token_bytes().to_vec();
    let mark = wire.mark();
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(
        wire.since(mark)
            .iter()
            .all(|d| d.sent || !d.has_token(&token)),
        "aiocoap stopped notifying: {:#?}",
        wire.summary()
    );
}
