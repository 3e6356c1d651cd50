//! Echo against amplification (RFC 9175) with real clients: libcoap's coap-client-notls and
//! `covey get` each fetch `/large` from `covey serve` through a recording relay. The server,
//! which has not seen the relay's address before, answers the first request with 4.01 and an
//! Echo value; each client must repeat its request with that value and then receive the
//! whole body. aiocoap's client, which does not answer Echo, gets the 4.01.

mod harness;
mod support;

use std::process::Command;
use std::time::Duration;

use covey::{Code, OptionNumber};

use harness::{venv_bin, Direction, Relay, Relayed};
use support::{covey, covey_server, peer, run_limited, stderr, stdout};

const LIMIT: Duration = Duration::from_secs(30);
/// Size of the demo's `/large` (crates/covey-cli/src/resources/demo.rs).
const LARGE_SIZE: usize = 2048;

/// The Echo values of 4.01 responses, and of requests, in the relay's log.
fn echoes(log: &[Relayed]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut challenges = Vec::new();
    let mut echoed = Vec::new();
    for r in log {
        let Some(m) = r.msg() else { continue };
        let Some(value) = m.option(OptionNumber::ECHO) else {
            continue;
        };
        match r.direction {
            Direction::ToClient if m.code() == Code::UNAUTHORIZED => {
                challenges.push(value.to_vec())
            }
            Direction::ToServer if m.code().is_request() => echoed.push(value.to_vec()),
            _ => {}
        }
    }
    (challenges, echoed)
}

/// Runs `command` (a client fetching `/large` through a fresh relay to a fresh server) and
/// checks the Echo round trip on the wire and the body it printed.
fn fetches_large_through_echo(name: &str, command: impl FnOnce(&str) -> Command) {
    let (_server, port) = covey_server(&[]);
    let relay = Relay::tap(format!("127.0.0.1:{port}").parse().unwrap());
    let out = run_limited(command(&relay.uri("/large")), LIMIT);
    assert!(out.status.success(), "{name}: {out:?}");
    let log = relay.log();
    let (challenges, echoed) = echoes(&log);
    assert_eq!(
        challenges.len(),
        1,
        "{name}: one 4.01 with Echo expected:\n{}",
        relay.summary().join("\n")
    );
    assert!(
        echoed.contains(&challenges[0]),
        "{name} did not repeat the Echo value:\n{}",
        relay.summary().join("\n")
    );
    let body = stdout(&out);
    assert_eq!(body.trim_end().len(), LARGE_SIZE, "{name}: {body}");
    assert!(
        body.starts_with("0000 The quick brown fox"),
        "{name}: {body}"
    );
    // Nothing larger than three times its request went out before the Echo came back.
    let first_echo = log
        .iter()
        .position(|r| {
            r.direction == Direction::ToServer
                && r.msg()
                    .is_some_and(|m| m.option(OptionNumber::ECHO).is_some())
        })
        .expect("an echoing request");
    let first_request = log
        .iter()
        .find(|r| r.direction == Direction::ToServer)
        .unwrap();
    let before: usize = log[..first_echo]
        .iter()
        .filter(|r| r.direction == Direction::ToClient)
        .map(|r| r.bytes.len())
        .sum();
    assert!(
        before <= 3 * first_request.bytes.len(),
        "{name}: {before} bytes before verification for a {}-byte request",
        first_request.bytes.len()
    );
}

/// aiocoap's client (0.4.17) answers Echo only inside OSCORE: over plain CoAP it shows the
/// 4.01 to its user, and nothing larger than three times its request reached it.
#[test]
fn aiocoap_client_does_not_answer_echo_and_gets_4_01() {
    let (_server, port) = covey_server(&[]);
    let relay = Relay::tap(format!("127.0.0.1:{port}").parse().unwrap());
    let mut cmd = Command::new(venv_bin("aiocoap-client"));
    cmd.arg(relay.uri("/large"));
    let out = run_limited(cmd, LIMIT);
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr(&out).contains("4.01 Unauthorized"), "{out:?}");
    let log = relay.log();
    let (challenges, echoed) = echoes(&log);
    assert_eq!(
        (challenges.len(), echoed.len()),
        (1, 0),
        "{:#?}",
        relay.summary()
    );
    let request = log
        .iter()
        .find(|r| r.direction == Direction::ToServer)
        .unwrap();
    let answered: usize = log
        .iter()
        .filter(|r| r.direction == Direction::ToClient)
        .map(|r| r.bytes.len())
        .sum();
    assert!(
        answered <= 3 * request.bytes.len(),
        "{:#?}",
        relay.summary()
    );
}

#[test]
fn libcoap_client_answers_echo() {
    fetches_large_through_echo("coap-client-notls", |uri| {
        let mut cmd = peer("coap-client-notls", "libcoap3-bin");
        cmd.args(["-B", "10", "-m", "get", uri]);
        cmd
    });
}

#[test]
fn covey_get_answers_echo() {
    fetches_large_through_echo("covey get", |uri| {
        let mut cmd = covey();
        cmd.args(["get", uri]);
        cmd
    });
}
