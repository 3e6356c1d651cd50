//! What the client commands tell a user: `--help` states the real default timeout (RFC 7252's
//! MAX_TRANSMIT_WAIT) and only the flags a client takes; a request that goes unanswered
//! reports each retransmission (forced with `--progress` here, as standard error is a pipe)
//! and ends saying how long it waited and how often it sent; an unknown content format lists
//! the names that are valid.

mod support;

use std::net::UdpSocket;
use std::time::Duration;

use support::{covey, run_limited, stderr, stdout};

const LIMIT: Duration = Duration::from_secs(30);

fn run(args: &[&str]) -> std::process::Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

#[test]
fn help_states_the_real_default_timeout_and_only_client_flags() {
    for command in ["get", "discover"] {
        let out = run(&[command, "--help"]);
        let help = stdout(&out);
        assert!(help.contains("[default: 93]"), "{help}");
        assert!(!help.contains("[default: 90]"), "{help}");
        assert!(help.contains("--psk-file"), "{help}");
        assert!(!help.contains("--require-client-cert"), "{help}");
        assert!(!help.contains("--ca "), "{help}");
    }
    let help = stdout(&run(&["entity", "list", "--help"]));
    assert!(
        help.contains("[default: 93]") && help.contains("--psk-key"),
        "{help}"
    );
    let help = stdout(&run(&["serve", "--help"]));
    assert!(
        help.contains("--require-client-cert") && help.contains("--ca"),
        "{help}"
    );
}

#[test]
fn an_unanswered_request_reports_retransmissions_and_how_long_it_waited() {
    // Holds the port and never answers.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("coap://127.0.0.1:{}/x", silent.local_addr().unwrap().port());
    // -B 5: the first retransmission goes after 2 to 3 s, the second not before 6 s.
    let out = run(&["get", "--progress", "-B", "5", &uri]);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("covey: no reply yet: retransmission 1 of 4 sent, next in "),
        "{err}"
    );
    assert!(lines[0].ends_with(" s"), "{err}");
    assert!(lines[1].contains(" in time (waited "), "{err}");
    assert!(
        lines[1].starts_with("covey: no response from 127.0.0.1:"),
        "{err}"
    );
    assert!(
        lines[1].ends_with(" s; the request was sent 2 times)"),
        "{err}"
    );

    // Without --progress, a pipe gets the final line only.
    let out = run(&["get", "-B", "1", &uri]);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the request was sent once"), "{err}");
}

#[test]
fn an_unknown_content_format_lists_the_valid_names() {
    for args in [
        &["get", "-A", "jsn", "coap://127.0.0.1:9/x"][..],
        &["put", "-t", "jsn", "-e", "1", "coap://127.0.0.1:9/x"][..],
        &[
            "entity",
            "query",
            "-A",
            "jsn",
            "coap://127.0.0.1:9",
            "room1",
        ][..],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = stderr(&out);
        assert!(err.contains("unknown content format \"jsn\""), "{err}");
        assert!(
            err.contains("text, link, xml, octet, exi, json, cbor, senml+json"),
            "{err}"
        );
    }
}
