//! A multicast entity for real: network namespaces on one bridge (itself in a namespace, so
//! the host's network is untouched) — a gateway, three members running `covey serve --mc`,
//! one member without `/mc`, and a client. The gateway assigns a group from its pool
//! (ff1e::89:N, global scope, so every host has a route for ff00::/8 on eth0), the members
//! join it through `/mc`, the client queries the entity through the EM and directly at the
//! profile's `mcastURI`, and deletion makes the members leave. A creation that one member
//! refuses is rolled back. Everything the test creates is removed when it ends, also on
//! failure. Needs root (CAP_NET_ADMIN) and iproute2.

mod gateway_support;
mod netns;
mod support;

use std::collections::BTreeSet;
use std::net::Ipv6Addr;
use std::time::Duration;

use gateway_support::senml_json;
use netns::{ip, ip_quiet, is_root, netns_list, Lab};
use support::{stderr, stdout};

/// Host numbers: the gateway, the members with /mc, the one without, the client.
const GATEWAY: usize = 1;
const MEMBERS: [usize; 3] = [2, 3, 4];
const NO_MC: usize = 5;
const CLIENT: usize = 6;
const HOSTS: usize = 6;

#[test]
#[ignore = "needs root"]
fn multicast_entity_life_cycle_in_namespaces() {
    assert!(
        is_root(),
        "this test creates network namespaces and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("covey-em-{}", std::process::id());
    let mut lab = Lab::new(&prefix, Duration::from_secs(30));
    build(&mut lab);
    let db = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}.db"));
    let _ = std::fs::remove_file(&db);
    let gateway_args = [
        "gateway",
        "--bind",
        "[::]:5683",
        "--db",
        db.to_str().unwrap(),
        "--validation-timeout",
        "5",
        // The client and members are other hosts, and there is no security in this test.
        "--open-management",
    ];
    lab.start(GATEWAY, &gateway_args);
    for n in MEMBERS {
        // The gateway is another host: it must be let in to join and leave groups.
        lab.start(
            n,
            &["serve", "--bind", "[::]:5683", "--mc", "--open-management"],
        );
    }
    lab.start(NO_MC, &["serve", "--bind", "[::]:5683"]);
    for n in [GATEWAY, MEMBERS[0], MEMBERS[1], MEMBERS[2], NO_MC] {
        lab.wait_until_serving(n, ula(n), CLIENT);
    }
    let gw = format!("coap://[{}]", ula(GATEWAY));
    let member = |n: usize| format!("coap://[{}]/sensors/temp", ula(n));
    let members: Vec<String> = MEMBERS.iter().map(|n| member(*n)).collect();
    let entity_uri = format!("coap://[{}]/e/cold", ula(GATEWAY));

    // Create: a group from the pool, every member joined.
    let mut args = vec![
        "entity",
        "create",
        gw.as_str(),
        "cold",
        "--ect",
        "multicast",
    ];
    for m in &members {
        args.extend(["--member", m.as_str()]);
    }
    args.extend(["--eo", "avg,lst"]);
    let out = lab.covey_ok(CLIENT, &args);
    let group = "ff1e::89:1";
    assert!(
        out.starts_with(&format!("created {entity_uri} (3 members, multicast)\n")),
        "{out}"
    );
    let mcast_uri = format!("coap://[{group}]/sensors/temp");
    assert!(out.contains(&format!("mcastURI: {mcast_uri}")), "{out}");
    for m in &members {
        assert!(out.contains(&format!("{m} joined (2.04")), "{out}");
    }
    let profile: serde_json::Value =
        serde_json::from_str(&lab.covey_ok(CLIENT, &["entity", "show", &gw, "cold"])).unwrap();
    assert_eq!(profile["ect"], "multicast");
    assert_eq!(profile["emt"], "non");
    assert_eq!(profile["mcastURI"], mcast_uri);
    for n in MEMBERS {
        assert_eq!(lab.groups(n), [group], "member {n}'s /mc");
    }

    // Query through the EM: one NON multicast request, every member's reply.
    let doc: serde_json::Value = serde_json::from_str(&lab.covey_ok(
        CLIENT,
        &["entity", "query", &gw, "cold", "--eo", "lst", "--json"],
    ))
    .unwrap();
    assert_eq!(doc["answered"], 3, "{doc}");
    let answered: BTreeSet<String> = doc["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["member"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(answered, members.iter().cloned().collect());
    let out = lab.covey_in(
        CLIENT,
        &[
            "entity",
            "query",
            &gw,
            "cold",
            "--eo",
            "avg",
            "--accept",
            "senml+json",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let records = senml_json(&out.stdout);
    assert_eq!(records[0].name, entity_uri);
    let values: Vec<f64> = records[2..].iter().map(|r| r.value.unwrap()).collect();
    assert_eq!(values.len(), 3, "{records:?}");
    let avg = values.iter().sum::<f64>() / 3.0;
    assert!(
        (records[0].value.unwrap() - avg).abs() < 1e-9,
        "{records:?}"
    );

    // Directly at mcastURI, without the EM: one response per member.
    let out = lab.covey_in(CLIENT, &["get", "--json", "-B", "10", &mcast_uri]);
    assert!(out.status.success(), "{out:?}");
    let sources: BTreeSet<String> = stdout(&out)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["code"], "2.05", "{l}");
            v["source"].as_str().unwrap().to_string()
        })
        .collect();
    let expected: BTreeSet<String> = MEMBERS
        .iter()
        .map(|n| format!("[{}]:5683", ula(*n)))
        .collect();
    assert_eq!(sources, expected, "{}", stdout(&out));

    // Delete: every member leaves, and says so.
    let out = lab.covey_ok(CLIENT, &["entity", "delete", &gw, "cold"]);
    assert!(
        out.starts_with(&format!(
            "deleted {entity_uri}; 3 of 3 members left {group}\n"
        )),
        "{out}"
    );
    for m in &members {
        assert!(out.contains(&format!("{m} left (2.02")), "{out}");
    }
    for n in MEMBERS {
        assert!(lab.groups(n).is_empty(), "member {n} still in a group");
    }

    // A member without /mc: the creation fails (5.02), the others are made to leave again,
    // and the next entity gets the next group address (none is reused).
    let out = lab.covey_in(
        CLIENT,
        &[
            "entity",
            "create",
            &gw,
            "partial",
            "--ect",
            "multicast",
            "--member",
            &member(MEMBERS[0]),
            "--member",
            &member(NO_MC),
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let line = stderr(&out);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("5.02"), "{line}");
    assert!(
        line.contains("not every member joined ff1e::89:2"),
        "{line}"
    );
    assert!(
        line.contains(&format!("rolled back: {} left", member(MEMBERS[0]))),
        "{line}"
    );
    assert!(lab.groups(MEMBERS[0]).is_empty());
    let out = lab.covey_ok(
        CLIENT,
        &[
            "entity",
            "create",
            &gw,
            "again",
            "--ect",
            "multicast",
            "--member",
            &members[0],
            "--member",
            &members[1],
        ],
    );
    assert!(
        out.contains("mcastURI: coap://[ff1e::89:3]/sensors/temp"),
        "{out}"
    );

    // The gateway killed (SIGKILL) and restarted on its database: the entity is back, its
    // members were asked to join again (re-verification), and it answers.
    lab.kill(GATEWAY);
    lab.start(GATEWAY, &gateway_args);
    lab.wait_until_serving(GATEWAY, ula(GATEWAY), CLIENT);
    let profile: serde_json::Value =
        serde_json::from_str(&lab.covey_ok(CLIENT, &["entity", "show", &gw, "again"])).unwrap();
    assert_eq!(profile["mcastURI"], "coap://[ff1e::89:3]/sensors/temp");
    assert!(profile.get("unjoined").is_none(), "{profile}");
    assert_eq!(lab.groups(MEMBERS[0]), ["ff1e::89:3"]);
    let out = lab.covey_ok(CLIENT, &["entity", "query", &gw, "again", "--eo", "count"]);
    assert_eq!(out, "2\nanswered: 2 of 2\n");
    lab.covey_ok(CLIENT, &["entity", "delete", &gw, "again"]);
    assert!(lab.groups(MEMBERS[0]).is_empty());

    let names = lab.namespaces.clone();
    drop(lab);
    let _ = std::fs::remove_file(&db);
    let left = netns_list();
    for name in names {
        assert!(!left.contains(&name), "namespace {name} was left behind");
    }
}

/// The unique local address of host `n`.
fn ula(n: usize) -> Ipv6Addr {
    netns::ula(0xc0f, n)
}

/// Hosts 1..=HOSTS on the bridge, each `eth0` with fd00:c0f::N/64 without DAD and a route
/// for ff00::/8 (global-scope groups).
fn build(lab: &mut Lab) {
    lab.build(HOSTS, |host, n| {
        let cidr = format!("{}/64", ula(n));
        ip(&["-n", host, "addr", "add", &cidr, "dev", "eth0", "nodad"]);
        ip(&["-n", host, "link", "set", "eth0", "up"]);
        // The kernel adds `multicast ff00::/8 dev eth0 table local` when eth0 comes up;
        // make sure, since the group is not link-local and there is no default route.
        let _ = ip_quiet(&[
            "-n",
            host,
            "-6",
            "route",
            "add",
            "multicast",
            "ff00::/8",
            "dev",
            "eth0",
            "table",
            "local",
        ]);
    });
}

// The gateway test's own helpers on the shared lab.
impl Lab {
    /// Standard output of `covey ARGS` in host `n`, which must succeed.
    #[track_caller]
    fn covey_ok(&self, n: usize, args: &[&str]) -> String {
        let out = self.covey_in(n, args);
        assert!(
            out.status.success(),
            "covey {args:?}: {:?}\n{}\n{}\n{}",
            out.status.code(),
            stdout(&out),
            stderr(&out),
            self.logs()
        );
        stdout(&out)
    }

    /// The groups member `n` lists at `/mc`.
    fn groups(&self, n: usize) -> Vec<String> {
        let uri = format!("coap://[{}]:5683/mc", ula(n));
        self.covey_ok(CLIENT, &["get", &uri])
            .lines()
            .map(str::to_string)
            .collect()
    }
}
