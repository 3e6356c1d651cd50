//! `covey lab run object-download --quick`: CoAP against HTTP over a Zigbee-like emulated
//! link. Checks the paper's conclusion for objects that fit one block (CoAP fastest, fewest
//! bytes), that time grows with size for every service, and that a TCP connection per
//! object costs bytes a persistent connection saves. Needs root: `#[ignore]`d.

use std::process::Command;

use covey_emu::stacks::testbed_network::skip_reason;
use serde_json::Value;

fn point<'a>(points: &'a [Value], transfer: &str, size: u64) -> &'a Value {
    points
        .iter()
        .find(|p| p["transfer"] == transfer && p["size"] == size)
        .unwrap_or_else(|| panic!("no point for {transfer} at {size}"))
}

fn mean_s(p: &Value) -> f64 {
    let t = p["times_s"].as_array().unwrap();
    t.iter().map(|v| v.as_f64().unwrap()).sum::<f64>() / t.len() as f64
}

fn bytes_per_object(p: &Value) -> f64 {
    p["traffic"]["bytes"].as_f64().unwrap() / p["downloaded"].as_f64().unwrap()
}

#[test]
#[ignore = "needs root"]
fn quick_run_puts_coap_ahead_for_small_objects() {
    if let Some(reason) = skip_reason() {
        panic!("the emulator cannot run here: {reason}");
    }
    let out = std::env::temp_dir().join(format!("covey-lab-objects-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_covey"))
        .args(["lab", "run", "object-download", "--quick", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("object-download.json")).unwrap())
            .unwrap();
    let points = json["points"].as_array().unwrap();
    let services = ["CoAP", "HTTP/TCP", "persistent HTTP", "HTTP/2", "HTTP/UDP"];
    for p in points {
        assert_eq!(p["failed"], 0, "{p}");
    }
    for size in [10, 400] {
        let coap = point(points, "CoAP", size);
        for other in &services[1..] {
            let o = point(points, other, size);
            assert!(
                mean_s(coap) < mean_s(o),
                "{size} B: CoAP slower than {other}"
            );
            assert!(
                bytes_per_object(coap) < bytes_per_object(o),
                "{size} B: CoAP heavier than {other}"
            );
        }
    }
    for s in services {
        assert!(
            mean_s(point(points, s, 10)) < mean_s(point(points, s, 1200)),
            "{s}"
        );
    }
    assert!(
        bytes_per_object(point(points, "HTTP/TCP", 10))
            > bytes_per_object(point(points, "persistent HTTP", 10))
    );
    for f in [
        "object-download.md",
        "object-download-time.svg",
        "object-download-sizes.csv",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    std::fs::remove_dir_all(out).ok();
}

/// The file names in `dir`, sorted.
fn file_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
#[ignore = "needs root"]
fn shards_run_on_real_stacks_merge_into_the_report_of_one_run() {
    if let Some(reason) = skip_reason() {
        panic!("the emulator cannot run here: {reason}");
    }
    // One 10-byte download per service: five trials, a second or two in all.
    let dir = std::env::temp_dir().join(format!("covey-lab-objects-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let lab = |args: &[&str], out: &std::path::Path| {
        let status = Command::new(env!("CARGO_BIN_EXE_covey"))
            .arg("lab")
            .args(args)
            .arg("--out")
            .arg(out)
            .status()
            .unwrap();
        assert!(status.success(), "{args:?}");
    };
    let run = [
        "run",
        "object-download",
        "--quick",
        "--set",
        "sizes=10",
        "--set",
        "repeats=1",
    ];
    let (whole, shards, merged) = (dir.join("whole"), dir.join("shards"), dir.join("merged"));
    lab(&run, &whole);
    for shard in ["0/2", "1/2"] {
        lab(&[&run[..], &["--shard", shard]].concat(), &shards);
    }
    lab(&["merge", shards.to_str().unwrap()], &merged);
    // Real stacks in real time do not repeat their numbers: the same files, points and
    // columns, each download done.
    assert_eq!(file_names(&whole), file_names(&merged));
    let points = |out: &std::path::Path| {
        let json: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("object-download.json")).unwrap(),
        )
        .unwrap();
        json["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                assert_eq!(
                    (p["downloaded"].as_u64(), p["failed"].as_u64()),
                    (Some(1), Some(0)),
                    "{p}"
                );
                (
                    p["transfer"].as_str().unwrap().to_string(),
                    p["size"].as_u64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(points(&whole).len(), 5);
    assert_eq!(points(&whole), points(&merged));
    let header = |out: &std::path::Path| {
        let csv = std::fs::read_to_string(out.join("object-download-sizes.csv")).unwrap();
        (csv.lines().next().unwrap().to_string(), csv.lines().count())
    };
    assert_eq!(header(&whole), header(&merged));
    std::fs::remove_dir_all(dir).ok();
}
