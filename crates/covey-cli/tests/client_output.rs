//! Where the client's output goes: the payload alone on standard output, status lines on
//! standard error and only once; discovery always asks /.well-known/core; -O values are
//! checked before anything is sent.

mod support;

use std::process::{Command, Output};
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr, stdout};

const LIMIT: Duration = Duration::from_secs(20);

fn run(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

/// Runs `covey ARGS` on a pseudo-terminal (util-linux `script`), returning everything it
/// showed there and its exit code.
fn on_terminal(args: &[&str]) -> (String, Option<i32>) {
    let line = std::iter::once(env!("CARGO_BIN_EXE_covey"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = Command::new("script");
    cmd.args(["-qefc", &line, "/dev/null"]).env("NO_COLOR", "1");
    let out = run_limited(cmd, LIMIT);
    (stdout(&out).replace("\r\n", "\n"), out.status.code())
}

#[test]
fn verbose_status_goes_to_stderr_and_the_payload_alone_to_stdout() {
    let (_server, port) = covey_server(&[]);
    let out = run(&[
        "put",
        "-v",
        "-e",
        "hello",
        &format!("coap://127.0.0.1:{port}/echo"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "hello");
    let err = stderr(&out);
    assert!(
        err.contains(&format!("2.04 Changed from 127.0.0.1:{port} in ")),
        "{err}"
    );
}

#[test]
fn an_error_on_a_terminal_is_told_once() {
    let (_server, port) = covey_server(&[]);
    let (shown, code) = on_terminal(&["get", &format!("coap://127.0.0.1:{port}/nope")]);
    assert_eq!(code, Some(3), "{shown}");
    assert_eq!(shown.matches("4.04 Not Found").count(), 1, "{shown}");
    let (shown, code) = on_terminal(&["get", "-v", &format!("coap://127.0.0.1:{port}/nope")]);
    assert_eq!(code, Some(3), "{shown}");
    let status_lines = shown
        .lines()
        .filter(|l| l.contains("4.04 Not Found") && !l.contains("ACK"))
        .count();
    assert_eq!(status_lines, 1, "{shown}");
}

#[test]
fn discover_asks_well_known_core_of_the_authority_whatever_the_path() {
    let (_server, port) = covey_server(&[]);
    let expected = r#"</sensors/temp>;rt="temperature-c";if="sensor";ct="0 50 110";obs"#;
    for uri in [
        format!("coap://127.0.0.1:{port}/sensors/temp?rt=temperature-c"),
        format!("coap://127.0.0.1:{port}/nope?rt=temperature-c"),
        format!("coap://127.0.0.1:{port}?rt=temperature-c"),
    ] {
        let out = run(&["discover", &uri]);
        assert_eq!(
            (out.status.code(), stdout(&out)),
            (Some(0), expected.into()),
            "{uri}: {out:?}"
        );
    }
}

#[test]
fn discover_takes_no_payload_method_or_observe_and_shows_examples() {
    for flag in [["-e", "x"], ["-m", "PUT"], ["-s", "1"]] {
        let out = run(&["discover", flag[0], flag[1], "coap://127.0.0.1"]);
        assert_eq!(out.status.code(), Some(2), "{flag:?}: {out:?}");
    }
    let help = stdout(&run(&["discover", "--help"]));
    assert!(help.contains("covey discover 'coap://[::1]?rt="), "{help}");
}

#[test]
fn option_values_are_checked_against_their_format() {
    for (option, said) in [
        ("Max-Age,abc", "Max-Age takes a number"),
        ("99999,x", "option number 99999 is out of range (0-65535)"),
        ("If-None-Match,1", "If-None-Match takes no value"),
    ] {
        let out = run(&["get", "-O", option, "coap://127.0.0.1:9/x"]);
        assert_eq!(out.status.code(), Some(2), "{option}: {out:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(said), "{option}: {err}");
    }
}
