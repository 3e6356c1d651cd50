//! `covey bench-proxy` runs briefly on loopback and reports sane figures for both paths. No
//! performance threshold here: the targets belong to benchmark runs, not to tests.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{covey, run_limited, stderr, stdout};

#[test]
fn the_proxy_and_direct_coap_are_measured_in_one_run() {
    let mut cmd = covey();
    cmd.args(["bench-proxy", "--duration", "0.3", "--concurrency", "4"]);
    let out = run_limited(cmd, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    for path in ["direct", "proxy"] {
        let p50 = v[path]["p50_us"].as_f64().expect("p50");
        let p99 = v[path]["p99_us"].as_f64().expect("p99");
        assert!(p50 > 0.0 && p50 <= p99, "{v}");
        assert!(
            v[path]["requests_per_second"].as_f64().expect("rate") > 0.0,
            "{v}"
        );
    }
    assert!(v["proxy_added_p50_us"].is_number(), "{v}");
    assert_eq!(v["concurrency"], 4);
}

#[test]
fn a_bad_duration_is_a_usage_error() {
    let mut cmd = covey();
    cmd.args(["bench-proxy", "--duration", "0"]);
    let out = run_limited(cmd, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--duration"));
}
