//! The emulator's real stacks carry the telemetry round trip (gateway -> server ->
//! caregiver) between network namespaces. Needs root: `#[ignore]`d, run with `--include-ignored`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use covey_emu::stacks::launcher::Launcher;
use covey_emu::stacks::network::LinkCondition;
use covey_emu::stacks::programs;
use covey_emu::stacks::schedule::Schedule;
use covey_emu::stacks::testbed_network::{skip_reason, TestbedNetwork};
use covey_lab::scenarios::protocols::protocol::Protocol;
use covey_lab::scenarios::protocols::trial::{self, Externals, NODES};

fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("covey-stacks-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn externals() -> Externals {
    // What the stacks run besides covey comes from scripts/lab-stacks.sh (which
    // scripts/test.sh runs).
    programs::mosquitto().expect("mosquitto");
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/dds-venv");
    let tcp_venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/dds-tcp-venv");
    Externals {
        dds_python: Some(programs::dds_python(&venv).expect("cyclonedds")),
        dds_tcp_python: Some(programs::dds_python(&tcp_venv).expect("cyclonedds with TCP")),
        broker_nodelay: true,
    }
}

#[test]
#[ignore = "needs root, Mosquitto and Cyclone DDS (scripts/lab-stacks.sh)"]
fn every_protocol_delivers_every_message_on_a_clean_network() {
    if let Some(reason) = skip_reason() {
        panic!("the emulator cannot run here: {reason}");
    }
    let externals = externals();
    let dir = work_dir("clean");
    let launcher = Launcher::new(Path::new(env!("CARGO_BIN_EXE_covey-lab")), &dir).unwrap();
    let network =
        TestbedNetwork::star(NODES[1], &[NODES[0], NODES[2]], &LinkCondition::CLEAN, 1).unwrap();
    let schedule = Schedule {
        count: 8,
        rate_hz: 20.0,
        size: 409,
    };
    for protocol in Protocol::all("cocoa") {
        let outcome = trial::run(
            &network,
            &launcher,
            &externals,
            &protocol,
            schedule,
            Duration::from_secs(5),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", protocol.label()));
        assert_eq!(outcome.sent, 8, "{}", protocol.label());
        assert_eq!(outcome.received, 8, "{}: {outcome:?}", protocol.label());
        // Each message crosses two links: at least its payload twice on the wire.
        assert!(
            outcome.traffic.bytes >= 2 * 8 * 409,
            "{}: {:?}",
            protocol.label(),
            outcome.traffic
        );
        assert!(outcome.latencies_s.iter().all(|&l| l < 1.0), "{outcome:?}");
        eprintln!(
            "{}: {} B in {} packets",
            protocol.label(),
            outcome.traffic.bytes,
            outcome.traffic.packets
        );
    }
    let names = network.namespaces().unwrap();
    drop(network);
    let left = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    let left = String::from_utf8_lossy(&left.stdout);
    for name in names {
        assert!(!left.contains(&name), "{name} left behind");
    }
    std::fs::remove_dir_all(dir).ok();
}
