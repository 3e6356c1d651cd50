//! The server-workload scenario's conclusions, checked on the quick sweep, and its
//! determinism.

use std::sync::OnceLock;

use covey_lab::framework::runner;
use covey_lab::scenarios::server_workload::report::{drop_per_10, first_rate_below};
use covey_lab::scenarios::server_workload::results::at;
use covey_lab::scenarios::server_workload::{Outcome, RatePoint, ServerWorkload};
use covey_lab::scenarios::{self, RunOptions};

const SEED: u64 = 2013;

fn quick() -> &'static Outcome {
    static OUTCOME: OnceLock<Outcome> = OnceLock::new();
    OUTCOME.get_or_init(|| {
        let options = RunOptions {
            quick: true,
            seed: SEED,
            ..RunOptions::default()
        };
        runner::outcome(&ServerWorkload, &options).expect("the quick sweep runs")
    })
}

fn rate(r: f64) -> &'static RatePoint {
    at(&quick().points, r).expect("the quick sweep covers 10, 50, 80, 100, 150 and 200 /s")
}

#[test]
fn nearly_every_request_is_answered_at_low_rates() {
    for r in [10.0, 50.0] {
        assert!(
            rate(r).answered_share > 0.9,
            "{r}/s: {}",
            rate(r).answered_share
        );
    }
    assert!(quick().points.iter().all(|p| p.unfinished == 0));
}

#[test]
fn the_answered_share_falls_above_about_80_per_second() {
    let (s50, s150, s200) = (
        rate(50.0).answered_share,
        rate(150.0).answered_share,
        rate(200.0).answered_share,
    );
    assert!(s150 < 0.8 * s50, "150/s: {s150}, 50/s: {s50}");
    assert!(s200 < s150, "200/s: {s200}, 150/s: {s150}");
    // Never rising with the rate (within one request in a hundred of sampling noise).
    for w in quick().points.windows(2) {
        assert!(
            w[1].answered_share <= w[0].answered_share + 0.01,
            "{} -> {}",
            w[0].rate,
            w[1].rate
        );
    }
}

#[test]
fn the_fall_flattens_above_150_per_second() {
    let points = &quick().points;
    let before = drop_per_10(points, 80.0, 150.0).unwrap_or(f64::NAN);
    let after = drop_per_10(points, 150.0, 200.0).unwrap_or(f64::NAN);
    assert!(
        after < before,
        "{before} then {after} points per 10 requests/s"
    );
}

#[test]
fn the_channel_caps_the_answered_rate_and_the_client_queue_takes_the_excess() {
    let o = quick();
    for p in &o.points {
        assert!(
            p.answered_per_s <= 1.02 * o.capacity.transactions_per_s,
            "{}/s answered {:.1}/s above the ceiling {:.1}/s",
            p.rate,
            p.answered_per_s,
            o.capacity.transactions_per_s
        );
    }
    assert_eq!(rate(10.0).client_queue_drop_share, 0.0);
    assert!(rate(200.0).client_queue_drop_share > 0.2);
}

#[test]
fn the_base_stations_serial_line_lowers_the_knee_and_slows_the_answers() {
    let o = quick();
    assert!(
        !o.params.serial_line,
        "the radio hop alone is the headline by default"
    );
    let with = |r: f64| at(&o.side_points, r).expect("the side run covers every rate");
    // Every response crosses the line, so each answer takes longer even at low load.
    assert!(with(10.0).latency_mean_s > rate(10.0).latency_mean_s + 0.01);
    // The line carries fewer responses per second than the radio hop: fewer are answered just
    // above the knee, and the share falls below 95 % at a lower rate.
    assert!(with(100.0).answered_share < rate(100.0).answered_share - 0.05);
    let knee = |points: &[RatePoint]| first_rate_below(points, 0.95).unwrap_or(f64::INFINITY);
    assert!(knee(&o.side_points) < knee(&o.points));
    assert!(with(100.0).serial_drop_share > 0.0);
    assert_eq!(rate(100.0).serial_drop_share, 0.0);
}

#[test]
fn same_seed_same_csv_other_seed_other_csv() {
    let run = |seed: u64, tag: &str| {
        let dir = std::env::temp_dir().join(format!("covey-lab-sw-{tag}-{}", std::process::id()));
        let options = RunOptions {
            quick: true,
            seed,
            runs: Some(1),
            out_dir: dir.clone(),
            params: vec![("requests".into(), "200".into())],
            ..RunOptions::default()
        };
        let summary = scenarios::run("server-workload", &options).expect("the quick run succeeds");
        assert!(summary.markdown.contains("closed-form ceiling"));
        let csv = std::fs::read_to_string(dir.join("server-workload-runs.csv")).unwrap_or_default();
        std::fs::remove_dir_all(&dir).ok();
        csv
    };
    let a = run(5, "a");
    // Six rates without the serial line and six with it, one seed each.
    assert_eq!(a.lines().count(), 13);
    assert_eq!(a, run(5, "b"));
    assert_ne!(a, run(6, "c"));
}

#[test]
fn parameters_are_checked_against_the_table() {
    let run = |k: &str, v: &str| {
        let options = RunOptions {
            quick: true,
            runs: Some(1),
            params: vec![(k.to_string(), v.to_string())],
            out_dir: std::env::temp_dir().join("covey-lab-sw-never-written"),
            ..RunOptions::default()
        };
        runner::resolve_params(&ServerWorkload, &options)
    };
    assert_eq!(run("queue", "4").map(|p| p.queue).ok(), Some(4));
    assert_eq!(
        run("requests", "-3").unwrap_err().to_string(),
        "invalid option: server-workload: `requests=-3` is out of range (1 to 1000000)"
    );
    assert!(run("rate", "10")
        .unwrap_err()
        .to_string()
        .contains("has no parameter `rate`"));
}
