//! Interop with libcoap (Debian libcoap3-bin): its client against `covey serve --plugtest`,
//! and Covey's client against its server.

mod support;

use std::process::Command;
use std::time::Duration;

use support::{covey, covey_server, peer, run_limited, stdout, udp_port_of, Background};

const LIMIT: Duration = Duration::from_secs(30);
const PACKAGE: &str = "libcoap3-bin";

fn coap_client(args: &[&str]) -> std::process::Output {
    let mut cmd = peer("coap-client-notls", PACKAGE);
    cmd.args(["-B", "5"]).args(args);
    run_limited(cmd, LIMIT)
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn libcoap_client_against_covey_plugtest() {
    let (_server, port) = covey_server(&["--plugtest"]);
    let base = format!("coap://127.0.0.1:{port}");
    for non in [false, true] {
        let flag: &[&str] = if non { &["-N"] } else { &[] };
        let run = |args: &[&str]| {
            let mut all: Vec<&str> = flag.to_vec();
            all.extend_from_slice(args);
            coap_client(&all)
        };
        let out = run(&["-m", "get", &format!("{base}/test")]);
        let text = stdout(&out);
        assert!(
            text.contains(if non {
                "Type: 1 (NON)"
            } else {
                "Type: 0 (CON)"
            }),
            "{text}"
        );
        assert!(text.contains("Code: 1 (GET)"), "{text}");

        let out = run(&["-m", "put", "-e", "stored", &format!("{base}/test")]);
        assert!(out.status.success(), "{out:?}");
        let out = run(&["-m", "get", &format!("{base}/test")]);
        assert!(stdout(&out).contains("stored"), "{}", stdout(&out));

        let out = run(&["-m", "post", "-e", "x", &format!("{base}/large-post")]);
        assert_eq!(stdout(&out).trim(), "X");
        let out = run(&["-m", "delete", &format!("{base}/test")]);
        assert!(out.status.success(), "{out:?}");
        let out = run(&["-m", "get", &format!("{base}/seg1/seg2/seg3")]);
        assert_eq!(stdout(&out).trim(), "Long path resource");
    }
    let out = coap_client(&["-m", "get", &format!("{base}/.well-known/core?rt=Type2")]);
    assert_eq!(
        stdout(&out).trim(),
        r#"</link1>;rt="Type1 Type2";if="If1",</link2>;rt="Type2 Type3";if="If2""#
    );
    let out = coap_client(&["-m", "get", &format!("{base}/.well-known/core?if=foo")]);
    assert_eq!(stdout(&out).trim(), r#"</link3>;rt="Type1 Type3";if="foo""#);
    let out = coap_client(&["-m", "get", &format!("{base}/query?first=1&second=2")]);
    assert_eq!(stdout(&out).trim(), "Queries: first=1&second=2");
    let out = coap_client(&["-m", "get", &format!("{base}/large")]);
    assert_eq!(stdout(&out).trim_end().len(), 1280, "block-wise body");
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn covey_client_against_libcoap_server() {
    // On port 0: libcoap prints no address, /proc says which port it holds.
    let mut cmd: Command = peer("coap-server-notls", PACKAGE);
    cmd.args(["-A", "127.0.0.1", "-p", "0"]);
    let mut server = Background::start(cmd);
    let port = udp_port_of(&mut server);
    let get = |path: &str| {
        let mut cmd = covey();
        cmd.args(["get", "-B", "2", &format!("coap://127.0.0.1:{port}{path}")]);
        run_limited(cmd, LIMIT)
    };
    let root = get("/");
    assert!(root.status.success(), "{root:?}");
    assert!(stdout(&root).contains("libcoap"), "{}", stdout(&root));
    let time = get("/time");
    assert!(time.status.success(), "{time:?}");
    assert!(!stdout(&time).trim().is_empty());
    let missing = get("/no-such-resource");
    assert_eq!(missing.status.code(), Some(3));
    // libcoap's block-wise resource, reassembled by Covey.
    let data = get("/example_data");
    assert!(data.status.success(), "{data:?}");
    assert!(stdout(&data).starts_with("a123456789b123456789"));
    let mut cmd = covey();
    cmd.args([
        "observe",
        "-s",
        "2.5",
        &format!("coap://127.0.0.1:{port}/time"),
    ]);
    let observed = run_limited(cmd, LIMIT);
    assert!(observed.status.success(), "{observed:?}");
    assert!(
        stdout(&observed).lines().count() >= 2,
        "{}",
        stdout(&observed)
    );
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn libcoap_client_observes_covey_time() {
    let (_server, port) = covey_server(&[]);
    let out = coap_client(&["-s", "3", &format!("coap://127.0.0.1:{port}/time")]);
    let text = stdout(&out);
    // Timestamps like 2024-01-01T00:00:00Z, printed back to back.
    assert!(text.matches('Z').count() >= 2, "{text:?}");
}
