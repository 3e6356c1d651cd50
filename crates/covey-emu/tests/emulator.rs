//! The emulator end to end: namespaces joined through TUN devices by the userspace
//! forwarder. Needs root: `#[ignore]`d, run with `--include-ignored`.

mod emu_support;

use std::process::{Command, Stdio};
use std::time::Duration as StdDuration;

use covey_emu::{self as emu, Testbed};
use emu_support::{alive, require_emulator};

#[test]
#[ignore = "needs root"]
fn udp_crosses_between_namespaces_and_is_counted_per_flow() {
    require_emulator();
    let testbed = two_nodes("a", "b");
    let a = testbed.udp_socket("a", 0).expect("socket in a");
    let b = testbed.udp_socket("b", 7000).expect("socket in b");
    b.set_read_timeout(Some(StdDuration::from_secs(5)))
        .expect("timeout");
    let to = (testbed.address("b").expect("address"), 7000);
    for i in 0..10u8 {
        a.send_to(&[i; 100], to).expect("send");
    }
    let mut buf = [0u8; 2048];
    for i in 0..10u8 {
        let (n, from) = b.recv_from(&mut buf).expect("datagram arrives");
        assert_eq!((n, buf[0]), (100, i), "in order, intact");
        assert_eq!(from, a.local_addr().expect("local"));
    }
    let flows = testbed.counters();
    let flow = flows
        .iter()
        .find(|r| r.flow.protocol == 17 && r.flow.destination.port() == 7000)
        .expect("the UDP flow is counted");
    assert_eq!((flow.from.as_str(), flow.to.as_str()), ("a", "b"));
    assert_eq!(flow.counters.packets_sent, 10);
    assert_eq!(flow.counters.packets_delivered, 10);
    assert_eq!(
        flow.counters.bytes_delivered,
        10 * (100 + 28),
        "IPv4 + UDP headers"
    );
    let dir = testbed.direction("a", "b").expect("direction");
    assert_eq!(dir.packets_delivered, 10);
}

#[test]
#[ignore = "needs root"]
fn a_process_runs_inside_its_node_and_the_nodes_are_addressed_in_order() {
    require_emulator();
    let mut testbed = Testbed::builder()
        .node("gw")
        .node("srv")
        .node("cg")
        .build()
        .expect("testbed");
    assert_eq!(testbed.address("cg").expect("cg").to_string(), "10.77.0.3");
    let mut show = Command::new("ip");
    show.args(["-4", "-o", "addr", "show", "dev", emu::DEVICE])
        .stdout(Stdio::piped());
    let id = testbed.exec("srv", &mut show).expect("exec");
    let child = testbed.process(id).expect("process");
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().expect("piped"), &mut out).expect("read");
    assert!(out.contains("10.77.0.2/24"), "ip in srv says: {out}");
    assert!(
        matches!(testbed.address("nope"), Err(emu::EmuError::UnknownNode(_))),
        "unknown node names are an error"
    );
}

#[test]
#[ignore = "needs root"]
fn dropping_the_testbed_removes_its_processes_and_namespaces() {
    require_emulator();
    let mut testbed = two_nodes("x", "y");
    let names: Vec<String> = ["x", "y"]
        .iter()
        .map(|n| testbed.netns(n).expect("netns").to_owned())
        .collect();
    // A shell whose child sleeps: the whole process group must go, not just the shell.
    let id = testbed
        .exec("y", Command::new("sh").args(["-c", "sleep 600 & wait"]))
        .expect("exec");
    let pid = testbed.process(id).expect("process").id();
    // The shell has started its child once the group has two members (bounded wait).
    let deadline = std::time::Instant::now() + StdDuration::from_secs(10);
    let mut group = process_group_members(pid);
    while group.len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(StdDuration::from_millis(10));
        group = process_group_members(pid);
    }
    assert!(group.len() >= 2, "shell and sleep run: {group:?}");
    for ns in &names {
        assert!(emu::namespace::namespaces_with_prefix(ns).contains(ns));
    }
    drop(testbed);
    for ns in &names {
        assert!(
            !emu::namespace::namespaces_with_prefix(ns).contains(ns),
            "{ns} removed"
        );
    }
    assert_eq!(
        process_group_members(pid),
        Vec::<u32>::new(),
        "no process left"
    );
}

#[test]
#[ignore = "needs root"]
fn an_adopted_process_started_with_ip_netns_exec_is_stopped_with_the_testbed() {
    require_emulator();
    let mut testbed = two_nodes("a", "b");
    let netns = testbed.netns("b").expect("netns").to_owned();
    // Not a process-group leader: it shares the test's group.
    let child = Command::new("ip")
        .args(["netns", "exec", &netns, "sleep", "600"])
        .spawn()
        .expect("ip netns exec");
    let pid = child.id();
    testbed.adopt(child);
    // `ip netns exec` has entered the namespace once it has become `sleep` (bounded wait).
    let deadline = std::time::Instant::now() + StdDuration::from_secs(10);
    let comm = || std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    while comm().trim() != "sleep" && std::time::Instant::now() < deadline {
        std::thread::sleep(StdDuration::from_millis(10));
    }
    assert!(alive(pid), "sleep runs");
    assert_eq!(comm().trim(), "sleep");
    drop(testbed);
    assert!(!alive(pid), "sleep is stopped with the testbed");
}

#[test]
#[ignore = "needs root"]
fn bad_testbeds_are_refused_with_a_reason() {
    require_emulator();
    let one = Testbed::builder().node("a").build();
    assert!(matches!(one, Err(emu::EmuError::Invalid(_))), "{one:?}");
    let bad_name = Testbed::builder().node("A B").node("b").build();
    assert!(
        matches!(bad_name, Err(emu::EmuError::Invalid(_))),
        "{bad_name:?}"
    );
    let unknown = Testbed::builder()
        .node("a")
        .node("b")
        .symmetric_link(
            "a",
            "c",
            emu::emulated_link(
                1_000_000,
                covey_sim::media::PropagationDelay::Fixed(covey_proto::Duration::ZERO),
                covey_sim::media::LossSpec::None,
                10,
            ),
        )
        .build();
    assert!(
        matches!(unknown, Err(emu::EmuError::UnknownNode(_))),
        "{unknown:?}"
    );
}

#[test]
#[ignore = "needs root"]
fn a_missing_program_is_an_error_that_names_it() {
    require_emulator();
    let mut testbed = two_nodes("a", "b");
    let err = testbed
        .exec("a", &mut Command::new("no-such-program-covey"))
        .expect_err("no such program");
    let text = err.to_string();
    assert!(
        text.contains("no-such-program-covey") && text.contains("node a"),
        "{text}"
    );
    let err = testbed
        .exec("nowhere", &mut Command::new("true"))
        .expect_err("no such node");
    assert!(
        matches!(err, emu::EmuError::UnknownNode(ref n) if n == "nowhere"),
        "{err}"
    );
    assert!(matches!(
        testbed.stop_process(emu::ProcessId(7)),
        Err(emu::EmuError::UnknownProcess(7))
    ));
}

/// A testbed of nodes `a` and `b` joined by the default (unimpaired) link.
#[test]
#[ignore = "needs root"]
fn messages_are_counted_on_each_link_they_enter() {
    use covey_emu::stacks::telemetry::{message, MESSAGE_MARKER};
    require_emulator();
    let lossy = emu::emulated_link(
        100_000_000,
        covey_sim::media::PropagationDelay::Fixed(covey_proto::Duration::ZERO),
        covey_sim::media::LossSpec::Bernoulli { p: 0.5 },
        100,
    );
    let testbed = Testbed::builder()
        .seed(3)
        .message_marker(MESSAGE_MARKER, 1000)
        .node("gw")
        .node("srv")
        .node("cg")
        .symmetric_link("gw", "srv", lossy)
        .build()
        .expect("testbed");
    let gw = testbed.udp_socket("gw", 0).expect("socket in gw");
    let srv = testbed.udp_socket("srv", 7000).expect("socket in srv");
    srv.set_read_timeout(Some(StdDuration::from_millis(500)))
        .expect("timeout");
    let srv_addr = (testbed.address("srv").expect("srv"), 7000);
    let cg_addr = (testbed.address("cg").expect("cg"), 7000);
    for seq in 0..40 {
        gw.send_to(&message(seq, 409), srv_addr).expect("send");
    }
    gw.send_to(&message(5, 409), srv_addr).expect("a repeat");
    // The server relays what reached it; a loss on the first hop never enters the second.
    let mut relayed = std::collections::BTreeSet::new();
    let mut buf = [0u8; 2048];
    while let Ok((n, _)) = srv.recv_from(&mut buf) {
        let seq = covey_emu::stacks::telemetry::sequence_of(&buf[..n]).expect("telemetry");
        if relayed.insert(seq) {
            srv.send_to(&buf[..n], cg_addr).expect("relay");
        }
    }
    assert!(
        !relayed.is_empty() && relayed.len() < 40,
        "half the first hop's packets are lost: {} relayed",
        relayed.len()
    );
    let counts = |from: &str, to: &str| {
        testbed
            .messages()
            .into_iter()
            .find(|(f, t, _)| f == from && t == to)
            .map(|(_, _, c)| c)
            .unwrap_or_default()
    };
    let first_hop = counts("gw", "srv");
    assert_eq!((first_hop.first, first_hop.repeats), (40, 1));
    let second_hop = counts("srv", "cg");
    assert_eq!(second_hop.first, relayed.len() as u64);
    assert_eq!(second_hop.repeats, 0);
}

fn two_nodes(a: &str, b: &str) -> Testbed {
    Testbed::builder().node(a).node(b).build().expect("testbed")
}

/// Live processes whose process group is `group` (read from /proc).
fn process_group_members(group: u32) -> Vec<u32> {
    let mut members = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return members;
    };
    for entry in dir.filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state, ppid, pgrp.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(group) {
            members.push(pid);
        }
    }
    members
}
