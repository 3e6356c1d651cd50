//! `covey gateway --oscore DIR` asked from another host, in network namespaces on one bridge:
//! the client is not on loopback and its address is not verified, yet its OSCORE-protected
//! query of a three-member entity is answered in full (no Echo round it could not answer
//! inside OSCORE), while the same query in the clear has no identity the policy admits. Needs
//! root (CAP_NET_ADMIN) and iproute2.

mod gateway_support;
mod netns;
mod support;

use std::net::Ipv6Addr;
use std::path::PathBuf;
use std::time::Duration;

use gateway_support::{fails, ok};
use netns::{is_root, ula, Lab};

const GATEWAY: usize = 1;
const MEMBERS: usize = 2;
const CLIENT: usize = 3;
const SUBNET: u16 = 0x0a7;
const MEMBER_PORTS: [u16; 3] = [5683, 5685, 5686];

/// Writes a context directory (aiocoap's settings.json) named `name`; returns its path.
fn context_dir(prefix: &str, name: &str, sender: &str, recipient: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the context directory");
    let settings = format!(
        r#"{{"secret_hex": "0102030405060708090a0b0c0d0e0f10", "salt_hex": "9e7ca92223786340", "sender-id_hex": "{sender}", "recipient-id_hex": "{recipient}"}}"#
    );
    std::fs::write(dir.join("settings.json"), settings).expect("write settings.json");
    dir.to_str().expect("a UTF-8 path").to_string()
}

#[test]
#[ignore = "needs root"]
fn another_host_queries_an_entity_under_oscore() {
    assert!(
        is_root(),
        "this test creates network namespaces and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("covey-emo-{}", std::process::id());
    let mut lab = Lab::new(&prefix, Duration::from_secs(20));
    lab.build_ipv6(CLIENT, SUBNET);
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let db = tmp.join(format!("{prefix}.db"));
    let _ = std::fs::remove_file(&db);
    let policy = tmp.join(format!("{prefix}-policy.toml"));
    std::fs::write(
        &policy,
        "[[rule]]\nwho = [\"loopback\"]\nmay = [\"read\", \"manage\"]\n\n\
         [[rule]]\nwho = [\"oscore:00\"]\nmay = [\"read\"]\n",
    )
    .expect("write the policy");
    let server = context_dir(&prefix, "gateway", "01", "00");
    let client = context_dir(&prefix, "client", "00", "01");

    for port in MEMBER_PORTS {
        lab.start(MEMBERS, &["serve", "--bind", &format!("[::]:{port}")]);
        lab.wait_listening();
    }
    lab.start(
        GATEWAY,
        &[
            "gateway",
            "--bind",
            "[::]:5683",
            "--db",
            db.to_str().unwrap(),
            "--no-http",
            "--policy",
            policy.to_str().unwrap(),
            "--oscore",
            &server,
        ],
    );
    lab.wait_until_serving(GATEWAY, Ipv6Addr::LOCALHOST, GATEWAY);

    let mut create = vec!["entity", "create", "coap://[::1]", "room", "--eo", "lst"];
    let members: Vec<String> = MEMBER_PORTS
        .iter()
        .map(|p| format!("coap://[{}]:{p}/sensors/temp", ula(SUBNET, MEMBERS)))
        .collect();
    for m in &members {
        create.extend(["--member", m.as_str()]);
    }
    ok(&lab.covey_in(GATEWAY, &create));

    let room = format!("coap://[{}]/e/room", ula(SUBNET, GATEWAY));
    fails(&lab.covey_in(CLIENT, &["get", &room]), 3, &["4.01"]);
    let out = ok(&lab.covey_in(CLIENT, &["get", "--oscore", &client, &room]));
    for m in &members {
        assert!(out.contains(m.as_str()), "{out}\n{}", lab.logs());
    }
    assert!(out.ends_with("answered: 3 of 3\n"), "{out}");
    let _ = std::fs::remove_file(&db);
    let _ = std::fs::remove_file(&policy);
    let _ = std::fs::remove_dir_all(&server);
    let _ = std::fs::remove_dir_all(&client);
}
