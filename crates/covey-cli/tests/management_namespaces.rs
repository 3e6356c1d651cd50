//! Without security, management listens to loopback only, for real: in network namespaces on
//! one bridge, a client on another host gets 4.01 from `covey gateway`'s EM and from the `/mc`
//! of `covey serve --mc`, while clients on the server's own host are served; with
//! --open-management the other host is served too. Needs root (CAP_NET_ADMIN) and iproute2.

mod gateway_support;
mod netns;
mod support;

use std::net::Ipv6Addr;
use std::time::Duration;

use gateway_support::fails;
use netns::{is_root, ula, Lab};
use support::{stderr, stdout};

const GATEWAY: usize = 1;
const MEMBER: usize = 2;
const CLIENT: usize = 3;
const SUBNET: u16 = 0x0a5;

#[track_caller]
fn succeeds(lab: &Lab, n: usize, uri: &str) {
    let out = lab.covey_in(n, &["get", uri]);
    assert!(
        out.status.success(),
        "GET {uri} from host {n}: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
#[ignore = "needs root"]
fn other_hosts_manage_only_when_management_is_opened() {
    assert!(
        is_root(),
        "this test creates network namespaces and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("covey-mgmt-{}", std::process::id());
    let mut lab = Lab::new(&prefix, Duration::from_secs(20));
    lab.build_ipv6(CLIENT, SUBNET);
    let db = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}.db"));
    let _ = std::fs::remove_file(&db);
    let db = db.to_str().unwrap().to_string();
    let gateway = ["gateway", "--bind", "[::]:5683", "--db", &db, "--no-http"];
    lab.start(GATEWAY, &gateway);
    lab.start(MEMBER, &["serve", "--bind", "[::]:5683", "--mc"]);
    // The EM answers its own host only, so it is polled from there.
    lab.wait_until_serving(GATEWAY, Ipv6Addr::LOCALHOST, GATEWAY);
    lab.wait_until_serving(MEMBER, ula(SUBNET, MEMBER), CLIENT);

    let entities = format!("coap://[{}]/e", ula(SUBNET, GATEWAY));
    let mc = format!("coap://[{}]/mc", ula(SUBNET, MEMBER));
    for uri in [&entities, &mc] {
        let out = lab.covey_in(CLIENT, &["get", uri]);
        fails(&out, 3, &["4.01", "for clients on this host only"]);
    }
    succeeds(&lab, GATEWAY, "coap://[::1]/e");
    succeeds(&lab, MEMBER, "coap://[::1]/mc");
    // The member's demo resources are not management: other hosts reach them as before.
    succeeds(
        &lab,
        CLIENT,
        &format!("coap://[{}]/time", ula(SUBNET, MEMBER)),
    );

    lab.kill(GATEWAY);
    lab.kill(MEMBER);
    lab.start(GATEWAY, &[&gateway[..], &["--open-management"]].concat());
    lab.start(
        MEMBER,
        &["serve", "--bind", "[::]:5683", "--mc", "--open-management"],
    );
    lab.wait_until_serving(GATEWAY, ula(SUBNET, GATEWAY), CLIENT);
    lab.wait_until_serving(MEMBER, ula(SUBNET, MEMBER), CLIENT);
    succeeds(&lab, CLIENT, &entities);
    succeeds(&lab, CLIENT, &mc);
}
