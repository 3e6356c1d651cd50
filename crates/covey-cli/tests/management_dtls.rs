//! The identity a client proves over DTLS reaches the Entity Manager's authorization: a
//! gateway with pre-shared keys and a policy lets the operator manage, lets another
//! authenticated peer only read (4.03 with the reason), and a wrong key gets nowhere.

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use support::{covey, free_port, run_limited, stderr, stdout, Background};

const LIMIT: Duration = Duration::from_secs(40);
const OPERATOR: [&str; 4] = ["-u", "operator", "-k", "op-key"];
const READER: [&str; 4] = ["-u", "reader", "-k", "rd-key"];

const POLICY: &str = r#"
[[rule]]
who = ["psk:operator"]
may = ["read", "manage"]

[[rule]]
who = ["authenticated"]
may = ["read"]
"#;

fn request(method: &str, credentials: &[&str], uri: &str) -> Output {
    let mut cmd = covey();
    cmd.args([method, "-B", "4"]).args(credentials).arg(uri);
    run_limited(cmd, LIMIT)
}

#[test]
fn a_dtls_identity_is_what_the_policy_authorizes() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("covey-management-dtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "operator:op-key\nreader:rd-key\n").unwrap();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let port = free_port();
    let mut cmd = covey();
    cmd.args(["gateway", "--no-http", "--psk-file"])
        .arg(&keys)
        .arg("--policy")
        .arg(&policy)
        .args(["--bind", &format!("127.0.0.1:{port}"), "--db"])
        .arg(dir.join("entities.db"));
    let _gateway = Background::start(cmd);
    let base = format!("coaps://127.0.0.1:{port}");

    // Reading is allowed to any authenticated peer (bounded wait for the gateway to start).
    let mut out = request("get", &READER, &format!("{base}/e"));
    for _ in 0..20 {
        if out.status.success() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        out = request("get", &READER, &format!("{base}/e"));
    }
    assert!(out.status.success(), "reader GET /e: {out:?}");

    // Deleting is not: 4.03 naming the identity, before the EM looks for the entity.
    let out = request("delete", &READER, &format!("{base}/e/absent"));
    assert!(!out.status.success());
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("4.03") && said.contains("not allowed for psk:reader"),
        "{said}"
    );

    // The operator may: the request gets through to the EM, which has no such entity.
    let out = request("delete", &OPERATOR, &format!("{base}/e/absent"));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("4.04") && said.contains("no entity named absent"),
        "{said}"
    );

    // A wrong key gets no session, so no answer at all.
    let out = request(
        "delete",
        &["-u", "operator", "-k", "wrong"],
        &format!("{base}/e/absent"),
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("DTLS handshake"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}
