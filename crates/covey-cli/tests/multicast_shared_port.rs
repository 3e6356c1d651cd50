//! Two multicast servers on one host share the CoAP port when both ask to (--reuse-port), and
//! both answer a multicast GET; a third that does not ask is refused. Runs in network
//! namespaces (a server host and a client host on a bridge); needs root and iproute2.

mod netns;
mod support;

use std::time::Duration;

use netns::{is_root, ula, Lab};
use support::{stderr, stdout};

const SERVER: usize = 1;
const CLIENT: usize = 2;

#[test]
#[ignore = "needs root"]
fn two_servers_sharing_the_port_both_answer_a_multicast_get() {
    assert!(
        is_root(),
        "this test creates network namespaces and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("covey-share-{}", std::process::id());
    let mut lab = Lab::new(&prefix, Duration::from_secs(20));
    lab.build_ipv6(CLIENT, 0x5a);
    let sharing = [
        "serve",
        "--reuse-port",
        "--bind",
        "[::]:5683",
        "--group",
        "ff02::fd%eth0",
    ];
    lab.start(SERVER, &sharing);
    lab.wait_until_serving(SERVER, ula(0x5a, SERVER), CLIENT);
    lab.start(SERVER, &sharing);
    lab.wait_listening();

    let refused = lab.covey_in(SERVER, &["serve", "--bind", "[::]:5683"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        stderr(&refused).contains("the port is already in use"),
        "{}",
        stderr(&refused)
    );

    let out = lab.covey_in(
        CLIENT,
        &[
            "get",
            "--json",
            "-B",
            "10",
            "coap://[ff02::fd%25eth0]:5683/sensors/temp",
        ],
    );
    assert!(out.status.success(), "{out:?}\n{}", lab.logs());
    let answers: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON response"))
        .collect();
    assert_eq!(
        answers.len(),
        2,
        "one answer per server expected: {answers:?}"
    );
    assert!(answers.iter().all(|a| a["code"] == "2.05"), "{answers:?}");
}
