//! `covey gateway --oscore DIR` with three `covey serve` members on loopback: `covey get
//! --oscore` queries an entity through the EM under OSCORE (RFC 8613), a client under the
//! wrong key gets 4.01 and no reading, and a policy grants `oscore:KID` what it grants no
//! client in the clear.

mod gateway_support;
mod support;

use gateway_support::{covey_run, entity, fails, ok, GatewayProcess, Scratch};
use support::{covey_server, Background};

/// A master secret (RFC 8613 Appendix C.1.1's) and the ids the gateway and its client use.
const SECRET: &str = "0102030405060708090a0b0c0d0e0f10";
const SALT: &str = "9e7ca92223786340";
const GATEWAY_ID: &str = "01";
const CLIENT_ID: &str = "00";

/// Writes a context directory in aiocoap's layout (settings.json) under `scratch`.
fn context_dir(
    scratch: &Scratch,
    name: &str,
    secret: &str,
    sender: &str,
    recipient: &str,
) -> String {
    let dir = scratch.join(name);
    std::fs::create_dir_all(&dir).expect("create the context directory");
    let settings = format!(
        r#"{{"secret_hex": "{secret}", "salt_hex": "{SALT}", "sender-id_hex": "{sender}", "recipient-id_hex": "{recipient}"}}"#
    );
    std::fs::write(dir.join("settings.json"), settings).expect("write settings.json");
    dir.to_str().expect("a UTF-8 path").to_string()
}

/// Three `covey serve --plugtest` members (their /test takes PUT) and their ports.
fn members() -> (Vec<Background>, Vec<u16>) {
    (0..3).map(|_| covey_server(&["--plugtest"])).unzip()
}

/// A gateway serving the client's context, with `extra` arguments.
fn gateway(scratch: &Scratch, extra: &[&str]) -> GatewayProcess {
    let server = context_dir(scratch, "gateway-ctx", SECRET, GATEWAY_ID, CLIENT_ID);
    let mut args = vec!["--oscore", server.as_str()];
    args.extend_from_slice(extra);
    GatewayProcess::start(&scratch.join("e.db"), &args)
}

fn create(gw: &GatewayProcess, name: &str, ports: &[u16], path: &str) {
    let base = gw.base();
    let uris: Vec<String> = ports
        .iter()
        .map(|p| format!("coap://127.0.0.1:{p}{path}"))
        .collect();
    let mut args = vec!["create", base.as_str(), name];
    for uri in &uris {
        args.extend(["--member", uri.as_str()]);
    }
    ok(&entity(&args));
}

#[test]
fn an_entity_is_queried_through_the_gateway_under_oscore() {
    let scratch = Scratch::new("oscore-query");
    let (_servers, ports) = members();
    let gw = gateway(&scratch, &[]);
    assert!(
        gw.log()
            .contains("OSCORE: serving kid 00 (requests name the identity oscore:00)"),
        "{}",
        gw.log()
    );
    create(&gw, "room", &ports, "/sensors/temp");
    let query = format!("{}?eo=avg", gw.entity_uri("room"));

    let client = context_dir(&scratch, "client-ctx", SECRET, CLIENT_ID, GATEWAY_ID);
    let out = ok(&covey_run(&["get", "--oscore", &client, &query]));
    assert!(out.ends_with("answered: 3 of 3\n"), "{out}");
    // The client's sequence numbers went on disk (no nonce is reused by a second run),
    // and a second run is answered too.
    assert!(std::path::Path::new(&client).join("sequence.json").exists());
    let again = ok(&covey_run(&["get", "--oscore", &client, &query]));
    assert!(again.ends_with("answered: 3 of 3\n"), "{again}");

    // Under the wrong master secret the gateway cannot verify the request: no reading.
    let wrong = context_dir(
        &scratch,
        "wrong-ctx",
        "ffeeddccbbaa99887766554433221100",
        CLIENT_ID,
        GATEWAY_ID,
    );
    let out = covey_run(&["get", "--oscore", &wrong, &query]);
    assert!(!out.status.success(), "{out:?}");
    let said = format!("{}{}", support::stdout(&out), support::stderr(&out));
    assert!(!said.contains("answered"), "{said}");
    assert!(said.contains("4.01"), "{said}");
}

#[test]
fn the_policy_grants_an_oscore_client_by_its_kid() {
    let scratch = Scratch::new("oscore-policy");
    let (_servers, ports) = members();
    // Loopback manages entities; only the OSCORE client may fan requests out.
    let policy = scratch.join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            "[[rule]]\nwho = [\"loopback\"]\nmay = [\"read\", \"manage\"]\n\n\
             [[rule]]\nwho = [\"oscore:{CLIENT_ID}\"]\nmay = [\"read\", \"fanout\"]\n"
        ),
    )
    .expect("write the policy");
    let gw = gateway(&scratch, &["--policy", policy.to_str().unwrap()]);
    create(&gw, "lamps", &ports, "/test");
    let fanout = format!("{}?fanout", gw.entity_uri("lamps"));

    let out = covey_run(&["put", "-e", "on", &fanout]);
    fails(&out, 3, &["4.01", "fanning requests out"]);

    let client = context_dir(&scratch, "client-ctx", SECRET, CLIENT_ID, GATEWAY_ID);
    let out = ok(&covey_run(&[
        "put", "--oscore", &client, "-e", "on", &fanout,
    ]));
    for port in &ports {
        assert!(
            out.contains(&format!("coap://127.0.0.1:{port}/test 2.04")),
            "{out}"
        );
    }
}

#[test]
fn a_bad_oscore_directory_stops_the_gateway_with_one_line() {
    let scratch = Scratch::new("oscore-bad");
    let dir = scratch.join("ctx");
    std::fs::create_dir_all(&dir).expect("create the context directory");
    std::fs::write(dir.join("settings.json"), r#"{"secret_hex": "zz"}"#).expect("write");
    let path = dir.to_str().unwrap();
    let db = scratch.join("e.db");
    let out = covey_run(&[
        "gateway",
        "--bind",
        "127.0.0.1:0",
        "--no-http",
        "--db",
        db.to_str().unwrap(),
        "--oscore",
        path,
    ]);
    fails(
        &out,
        2,
        &[&format!(
            "--oscore {path}: settings.json: secret_hex is not hex"
        )],
    );
}

/// `--member-oscore ADDR=DIR`: the EM protects its requests to each of three `covey serve
/// --oscore` members with that member's own context and verifies the answers, so an average
/// is computed from protected readings; a member whose context the gateway has wrong refuses
/// the EM (4.00 Decryption failed), so an entity with it is not created, and no secret is
/// logged.
#[test]
fn the_gateway_asks_each_member_under_its_own_oscore_context() {
    let scratch = Scratch::new("oscore-members");
    let secrets = [
        "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
        "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf",
        "c0c1c2c3c4c5c6c7c8c9cacbcccdcecf",
    ];
    let mut servers = Vec::new();
    let mut args = Vec::new();
    for (i, secret) in secrets.iter().enumerate() {
        // The member sends as 4d ('M') and hears the EM as 45 ('E'); the EM the reverse.
        let member = context_dir(&scratch, &format!("member-{i}"), secret, "4d", "45");
        let (server, port) = covey_server(&["--oscore", &member]);
        servers.push((server, port));
        // The third member's context at the gateway is under the wrong secret.
        let em_secret = if i == 2 { secrets[0] } else { secret };
        let em_side = context_dir(&scratch, &format!("em-{i}"), em_secret, "45", "4d");
        args.push("--member-oscore".to_string());
        args.push(format!("127.0.0.1:{port}={em_side}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let gw = GatewayProcess::start(&scratch.join("e.db"), &args);
    let ports: Vec<u16> = servers.iter().map(|(_, p)| *p).collect();
    create(&gw, "room", &ports[..2], "/sensors/temp");
    let query = format!("{}?eo=avg", gw.entity_uri("room"));
    let out = ok(&covey_run(&["get", &query]));
    assert!(out.ends_with("answered: 2 of 2\n"), "{out}");
    for i in 0..2 {
        let reserved = scratch.join(&format!("em-{i}")).join("sequence.json");
        assert!(reserved.exists(), "the EM's sequence numbers are reserved");
    }

    // The member whose context does not match refuses the EM's probe: no entity with it.
    let base = gw.base();
    let uris: Vec<String> = ports
        .iter()
        .map(|p| format!("coap://127.0.0.1:{p}/sensors/temp"))
        .collect();
    let mut args = vec!["create", base.as_str(), "hall"];
    for uri in &uris {
        args.extend(["--member", uri.as_str()]);
    }
    let out = entity(&args);
    fails(
        &out,
        3,
        &[uris[2].as_str(), "Decryption failed", "member_refused"],
    );
    let log = gw.log();
    assert!(log.contains("requests to member 127.0.0.1:"), "{log}");
    for secret in secrets {
        assert!(!log.contains(secret), "a secret in the log");
    }
}

/// The EM observes members that have an OSCORE context under that context (RFC 8613
/// §4.1.3.5.2): `covey observe` of an entity of two `covey serve --oscore` members prints the
/// average at the registration and again as the members' protected notifications come, and
/// each member saw its registration protected (outer FETCH), never a plain GET.
#[test]
fn an_observed_entity_observes_its_members_under_their_oscore_contexts() {
    let scratch = Scratch::new("oscore-observe");
    let mut servers = Vec::new();
    let mut args = Vec::new();
    for i in 0..2 {
        let member = context_dir(&scratch, &format!("member-{i}"), SECRET, "4d", "45");
        let (server, port) = covey_server(&["--oscore", &member, "-v"]);
        servers.push((server, port));
        let em_side = context_dir(&scratch, &format!("em-{i}"), SECRET, "45", "4d");
        args.push("--member-oscore".to_string());
        args.push(format!("127.0.0.1:{port}={em_side}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let gw = GatewayProcess::start(&scratch.join("e.db"), &args);
    let base = gw.base();
    let uris: Vec<String> = servers
        .iter()
        .map(|(_, p)| format!("coap://127.0.0.1:{p}/sensors/temp"))
        .collect();
    let mut create = vec!["create", base.as_str(), "room", "--eo", "avg"];
    for uri in &uris {
        create.extend(["--member", uri.as_str()]);
    }
    ok(&entity(&create));

    let out = covey_run(&["observe", "-s", "7", &gw.entity_uri("room")]);
    let text = ok(&out);
    let averages: Vec<f64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert!(
        averages.len() >= 3,
        "the registration and two notifications:\n{text}"
    );
    assert!(
        text.lines()
            .filter(|l| l.contains("answered: 2 of 2"))
            .count()
            >= 3,
        "{text}"
    );
    for (server, _) in &servers {
        let log = server.log();
        assert!(log.contains("FETCH /"), "a protected registration:\n{log}");
        assert!(
            !log.contains("GET /sensors"),
            "nothing in the clear:\n{log}"
        );
    }
}

/// Issue 27's "context per member, stored with the entity, never printed": `covey entity
/// create --oscore DIR --member-oscore URI=DIR` hands the EM its side of each member's
/// context inside the entity document, over OSCORE. The EM asks the two `covey serve
/// --oscore` members under them, keeps them in its database (the owner's alone) and never
/// shows them (`GET /e/room/profile`, the log). After a restart it resumes above the sequence
/// numbers it reserved before (RFC 8613 Appendix B.1.1): the members, still running, would
/// refuse a number twice. The same document in the clear is refused (4.01), as is another
/// context for a member that has one (4.09).
#[test]
fn an_entity_carries_its_members_oscore_contexts_and_never_shows_them() {
    let scratch = Scratch::new("oscore-carried");
    let secrets = [
        "d0d1d2d3d4d5d6d7d8d9dadbdcdddedf",
        "e0e1e2e3e4e5e6e7e8e9eaebecedeeef",
    ];
    let mut servers = Vec::new();
    let mut uris = Vec::new();
    let mut em_sides = Vec::new();
    for (i, secret) in secrets.iter().enumerate() {
        let member = context_dir(&scratch, &format!("member-{i}"), secret, "4d", "45");
        let (server, port) = covey_server(&["--oscore", &member]);
        servers.push(server);
        uris.push(format!("coap://127.0.0.1:{port}/sensors/temp"));
        em_sides.push(context_dir(
            &scratch,
            &format!("em-{i}"),
            secret,
            "45",
            "4d",
        ));
    }
    let client = context_dir(&scratch, "client-ctx", SECRET, CLIENT_ID, GATEWAY_ID);
    let db = scratch.join("e.db");
    let gw = gateway(&scratch, &[]);
    let base = gw.base();
    let create_args = |name: &'static str, protected: bool, contexts: &[(usize, &str)]| {
        let mut args = vec!["create".to_string(), base.clone(), name.to_string()];
        if protected {
            args.extend(["--oscore".to_string(), client.clone()]);
        }
        for uri in &uris {
            args.extend(["--member".to_string(), uri.clone()]);
        }
        for (i, dir) in contexts {
            args.extend(["--member-oscore".to_string(), format!("{}={dir}", uris[*i])]);
        }
        args
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        entity(&args)
    };
    let both = [(0, em_sides[0].as_str()), (1, em_sides[1].as_str())];

    // The CLI refuses to send secrets in the clear; the EM refuses them too.
    fails(
        &run(create_args("room", false, &both)),
        2,
        &["--oscore or over coaps://"],
    );
    let doc = format!(
        r#"{{"name": "room", "er": ["{}"], "oscore": {{"{}": {{"secret_hex": "{}", "sender-id_hex": "45", "recipient-id_hex": "4d"}}}}}}"#,
        uris[0], uris[0], secrets[0]
    );
    let clear = covey_run(&["post", &format!("{base}/e"), "-t", "json", "-e", &doc]);
    fails(&clear, 3, &["4.01", "never in the clear"]);

    ok(&run(create_args("room", true, &both)));
    let query = format!("{}?eo=avg", gw.entity_uri("room"));
    let out = ok(&covey_run(&["get", &query]));
    assert!(out.ends_with("answered: 2 of 2\n"), "{out}");

    let shown = ok(&covey_run(&[
        "get",
        &format!("{}/profile", gw.entity_uri("room")),
    ]));
    assert!(
        !shown.contains("oscore") && !shown.contains("secret"),
        "{shown}"
    );
    let log = gw.log();
    assert!(log.contains("is asked under OSCORE, kid 45"), "{log}");
    let stored = std::fs::read(&db).unwrap_or_default();
    let wal = std::fs::read(scratch.join("e.db-wal")).unwrap_or_default();
    for secret in secrets {
        assert!(!log.contains(secret), "a secret in the log");
        assert!(!shown.contains(secret), "a secret shown");
        let needle = secret.as_bytes();
        let held = |bytes: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
        assert!(held(&stored) || held(&wal), "stored with the entity");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&db).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the database is its owner's alone");

    // Another context for member 0 (member 1's secret under member 0's URI).
    let other = [(0, em_sides[1].as_str())];
    fails(
        &run(create_args("hall", true, &other)),
        3,
        &["4.09", "already has another OSCORE context (entity room)"],
    );

    // A restart: the contexts come back from the database, above the numbers used.
    drop(gw);
    let gw = gateway(&scratch, &[]);
    let query = format!("{}?eo=avg", gw.entity_uri("room"));
    let out = ok(&covey_run(&["get", &query]));
    assert!(
        out.ends_with("answered: 2 of 2\n"),
        "after a restart: {out}"
    );
}
