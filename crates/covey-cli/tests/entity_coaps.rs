//! `covey entity` manages a gateway that speaks coaps: it takes the DTLS flags of the other
//! client commands (`-u/-k`, `--psk-file`, `--cert/--key`), and the gateway's replies name
//! the entity `coaps://` at the address the client used.

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr, stdout, Background};

const LIMIT: Duration = Duration::from_secs(40);

fn entity(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.arg("entity").args(args);
    run_limited(cmd, LIMIT)
}

#[test]
fn entity_commands_manage_a_coaps_gateway_with_a_pre_shared_key() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("entity-coaps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "operator:op-key\n").unwrap();
    let (_member, member_port) = covey_server(&[]);
    let mut cmd = covey();
    cmd.args(["gateway", "--no-http", "--psk-file"])
        .arg(&keys)
        .args([
            "--bind",
            "127.0.0.1:0",
            "--bind-plain",
            "127.0.0.1:0",
            "--db",
        ])
        .arg(dir.join("entities.db"));
    let mut gateway = Background::start_logged(cmd);
    let listening = gateway.listening(2);
    assert_eq!(listening[0].scheme, "coaps");
    let base = format!("coaps://127.0.0.1:{}", listening[0].port());
    let member = format!("coap://127.0.0.1:{member_port}/sensors/temp");
    let psk = ["-u", "operator", "-k", "op-key"];

    // Without credentials: the URI is refused, as for `covey get`.
    let out = entity(&["list", &base]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("needs DTLS credentials"), "{out:?}");

    let create = [
        &["create"][..],
        &psk,
        &[&base, "room1", "--member", &member],
    ]
    .concat();
    let out = entity(&create);
    assert!(out.status.success(), "{out:?}\n{}", gateway.log());
    let created = stdout(&out);
    assert!(
        created.contains(&format!("created {base}/e/room1")),
        "{created}"
    );

    let out = entity(&[&["list"][..], &psk, &[&base]].concat());
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).contains("</e/room1>"), "{}", stdout(&out));

    // The same key from a file.
    let out = entity(&["list", "--psk-file", &keys.display().to_string(), &base]);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).contains("</e/room1>"), "{}", stdout(&out));

    // The combined reply names the entity as reached: coaps, at this address and port.
    let out = entity(&[&["query", "--json"][..], &psk, &[&base, "room1"]].concat());
    assert!(out.status.success(), "{out:?}");
    let reply: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(reply["entity"], format!("{base}/e/room1"), "{reply}");

    // A wrong key gets no session: a one-line handshake error, not a timeout.
    let out = entity(&["list", "-u", "operator", "-k", "wrong", &base]);
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr(&out).contains("DTLS handshake"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
}
