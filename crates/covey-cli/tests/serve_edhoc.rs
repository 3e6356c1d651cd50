//! `covey get --edhoc DIR` against `covey serve --edhoc DIR`: the EDHOC handshake sets up
//! the OSCORE context that protects the request; untrusted credentials are refused with the
//! reason.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr, stdout};

const LIMIT: Duration = Duration::from_secs(30);

// RFC 9529 §3's Initiator credential (kid 2b) and lakers' test Responder credential (kid 0a).
const CRED_I: &str = "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7d37ecb52a387d257e6db3c2a93df21ff3affc8";
const I: &str = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b";
const CRED_R: &str = "a2026008a101a5010202410a2001215820bbc34960526ea4d32e940cad2a234148ddc21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eabf6072";
const R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";

/// A credential directory under the test's scratch space.
fn credentials(name: &str, ccs: &str, key: &str, trusted: &[&str]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("edhoc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trusted: Vec<String> = trusted.iter().map(|t| format!("\"{t}\"")).collect();
    let json = format!(
        "{{\"own\": {{\"ccs\": \"{ccs}\", \"private_key\": \"{key}\"}}, \"trusted\": [{}]}}\n",
        trusted.join(", ")
    );
    std::fs::write(dir.join("edhoc.json"), json).unwrap();
    dir
}

fn get(port: u16, dir: &Path) -> (Option<i32>, String, String) {
    get_with(port, dir, &[])
}

fn get_with(port: u16, dir: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = covey();
    cmd.args(["get", "--edhoc", dir.to_str().unwrap()])
        .args(extra)
        .arg(format!("coap://127.0.0.1:{port}/sensors/temp"));
    let out = run_limited(cmd, LIMIT);
    (out.status.code(), stdout(&out), stderr(&out))
}

#[test]
fn get_over_edhoc_reaches_the_resource_and_untrusted_peers_are_refused() {
    let server_dir = credentials("server", CRED_R, R, &[CRED_I]);
    let (server, port) = covey_server(&["-v", "--edhoc", server_dir.to_str().unwrap()]);
    let edhoc_posts = || {
        server
            .log()
            .matches("POST /.well-known/edhoc -> 2.04")
            .count()
    };

    let client_dir = credentials("client", CRED_I, I, &[CRED_R]);
    for _ in 0..2 {
        // Each run is a handshake of its own, with a context of its own.
        let (code, out, err) = get(port, &client_dir);
        assert_eq!(code, Some(0), "{err}");
        assert!(!out.trim().is_empty(), "{err}");
    }
    // message_3 rode in the request itself (RFC 9668): one EDHOC round trip a run.
    assert_eq!(edhoc_posts(), 2, "{}", server.log());
    // On its own, message_3 is a second round trip, answered with message_4.
    let (code, out, err) = get_with(port, &client_dir, &["--edhoc-separate"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.trim().is_empty(), "{err}");
    assert_eq!(edhoc_posts(), 4, "{}", server.log());

    // The client does not trust the server's credential.
    let wary = credentials("wary", CRED_I, I, &[CRED_I]);
    let (code, _, err) = get(port, &wary);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("EDHOC peer credential kid 0a is not trusted"),
        "{err}"
    );

    // The server does not trust this client's credential.
    let stranger = credentials("stranger", CRED_R, R, &[CRED_R]);
    let (code, _, err) = get(port, &stranger);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("4.00"), "{err}");
    assert!(
        err.contains("EDHOC peer credential kid 0a is not trusted"),
        "{err}"
    );
    for dir in [server_dir, client_dir, wary, stranger] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_bad_edhoc_directory_is_refused_with_one_line() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("edhoc-missing-{}", std::process::id()));
    let mut cmd = covey();
    cmd.args([
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--edhoc",
        dir.to_str().unwrap(),
    ]);
    let out = run_limited(cmd, LIMIT);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("edhoc.json"), "{err}");
}
