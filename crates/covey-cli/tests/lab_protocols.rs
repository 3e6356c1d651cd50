//! `covey lab run protocols --quick`: the paper's low-quality network on real stacks. Checks
//! the conclusions that follow from the mechanisms: TCP-based MQTT and reliable DDS lose
//! nothing, nothing arrives faster than the two links' minimum delay, the UDP protocols
//! without recovery are faster than MQTT, and DDS is faster than MQTT as the paper found.
//! Needs root and the stacks scripts/lab-stacks.sh installs: `#[ignore]`d, run with
//! `--include-ignored`.

use std::path::Path;
use std::process::Command;

use covey_emu::stacks::programs;
use covey_emu::stacks::testbed_network::skip_reason;
use serde_json::Value;

fn median_ms(rows: &[Value], protocol: &str) -> f64 {
    metrics(rows, protocol)["latency_median_s"]
        .as_f64()
        .unwrap()
        * 1000.0
}

fn metrics<'a>(rows: &'a [Value], protocol: &str) -> &'a Value {
    let row = rows
        .iter()
        .find(|r| r["protocol"] == protocol)
        .unwrap_or_else(|| panic!("no row for {protocol}"));
    assert!(row["error"].is_null(), "{protocol}: {}", row["error"]);
    &row["metrics"]
}

#[test]
#[ignore = "needs root, Mosquitto and Cyclone DDS (scripts/lab-stacks.sh)"]
fn quick_run_reproduces_the_low_quality_network_conclusions() {
    if let Some(reason) = skip_reason() {
        panic!("the emulator cannot run here: {reason}");
    }
    // What the scenario runs besides covey comes from scripts/lab-stacks.sh (which
    // scripts/test.sh runs).
    programs::mosquitto().expect("mosquitto");
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/dds-venv");
    programs::dds_python(&venv).expect("cyclonedds");
    let tcp_venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/dds-tcp-venv");
    programs::dds_python(&tcp_venv).expect("cyclonedds with TCP");
    let out = std::env::temp_dir().join(format!("covey-lab-protocols-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_covey"))
        .args(["lab", "run", "protocols", "--quick", "--out"])
        .arg(&out)
        .arg("--set")
        .arg(format!("dds_venv={}", venv.display()))
        .arg("--set")
        .arg(format!("dds_tcp_venv={}", tcp_venv.display()))
        // The quick run's 12 messages make a median that one loss on a reliable stream
        // (TCP, reliable DDS) moves by hundreds of milliseconds; 40 compare the mechanisms.
        .args(["--set", "messages=40"])
        .status()
        .unwrap();
    assert!(status.success());
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("protocols.json")).unwrap())
            .unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9, "one trial per protocol");
    for protocol in [
        "MQTT QoS 0",
        "MQTT QoS 1",
        "DDS reliable",
        "DDS reliable (TCP)",
    ] {
        let m = metrics(rows, protocol);
        assert_eq!(
            m["loss_pct"].as_f64(),
            Some(0.0),
            "{protocol} lost telemetry"
        );
    }
    for row in rows {
        // Two links, each delaying at least 80 % of 100 ms.
        for l in row["latencies_s"].as_array().unwrap() {
            assert!(l.as_f64().unwrap() >= 0.16, "{}: {l}", row["protocol"]);
        }
        let m = &row["metrics"];
        let received = m["received"].as_u64().unwrap();
        assert!(m["wire_bytes"].as_u64().unwrap() >= 2 * 409 * received);
        // Every delivered message entered both links; the overhead counts only what is
        // beyond the JSON, so at least the headers. Over TCP the forwarder reads each IP
        // packet alone, so a message whose `{"seq":N` a segment boundary splits is not matched
        // on that link (a known limit of the count until it follows TCP streams): allow one
        // such message per link there, and none for datagram protocols.
        let protocol = row["protocol"].as_str().unwrap_or("");
        let over_tcp = protocol.starts_with("MQTT") || protocol.contains("(TCP)");
        let missed_allowed = if over_tcp { 2 * 409 } else { 0 };
        let data = m["data_bytes"].as_u64().unwrap();
        assert!(
            data + missed_allowed >= 2 * 409 * received,
            "{protocol}: {data} B of data for {received} messages"
        );
        let overhead = m["overhead_per_100"].as_f64().unwrap();
        assert!(overhead > 0.0, "{}: overhead {overhead}", row["protocol"]);
    }
    let mqtt = median_ms(rows, "MQTT QoS 0").min(median_ms(rows, "MQTT QoS 1"));
    assert!(median_ms(rows, "JSON/UDP") < mqtt);
    assert!(median_ms(rows, "CoAP NON") < mqtt);
    assert!(median_ms(rows, "DDS reliable") < mqtt);
    let page = std::fs::read_to_string(out.join("protocols.md")).unwrap();
    assert!(page.contains("234 ms, 289 B") && page.contains("578 ms, 76 B"));
    assert!(out.join("protocols-low-quality-latency.svg").exists());
    assert!(out.join("protocols-trials.csv").exists());
    std::fs::remove_dir_all(out).ok();
}
