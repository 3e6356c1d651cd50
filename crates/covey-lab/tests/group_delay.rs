//! The group-delay scenario's conclusions on its quick run: for G = 5 the EM's unicast
//! requests sent back to back (D = 0) make the entity slower than D = 50 ms, beyond the
//! optimum the response time grows with D, every member answers without interference, and
//! `delay=auto` is reported against the swept optimum.

use covey_lab::framework::runner;
use covey_lab::scenarios::group_delay::{GroupDelay, Outcome, Params};
use covey_lab::scenarios::RunOptions;

fn quick() -> Outcome {
    let options = RunOptions {
        quick: true,
        seed: 1,
        ..RunOptions::default()
    };
    runner::outcome(&GroupDelay, &options).expect("the sweep runs")
}

#[test]
fn quick_run_reproduces_the_shape_of_figs_7_and_8() {
    let o = quick();
    let mean = |g: usize, d: u64| {
        o.at(g, d)
            .map(|p| p.outcome.mean_response_s())
            .unwrap_or(f64::NAN)
    };
    for p in &o.points {
        eprintln!(
            "G={} {} x={} mean={:.3} s member={:.4} group={:.3} coll/q={:.2} qdrop/q={:.2} retx/q={:.2}",
            p.members,
            p.variant,
            p.x,
            p.outcome.mean_response_s(),
            p.outcome.member_reliability(),
            p.outcome.group_reliability(),
            p.outcome.per_query(p.outcome.collisions),
            p.outcome.per_query(p.outcome.queue_drops),
            p.outcome.per_query(p.outcome.coap_retransmissions),
        );
    }
    // Fig 7: D = 0 is slower than D = 50 ms for G = 5.
    assert!(
        mean(5, 0) > mean(5, 50),
        "{} vs {}",
        mean(5, 0),
        mean(5, 50)
    );
    // Beyond the optimum the response time grows with D, by about (G − 1)·ΔD.
    for g in [5usize, 10] {
        let (t100, t300) = (mean(g, 100), mean(g, 300));
        let growth = t300 - t100;
        let expected = (g as f64 - 1.0) * 0.2;
        assert!(
            (growth - expected).abs() < 0.25 * expected,
            "G = {g}: {t100} → {t300}"
        );
    }
    // Every query was answered, and without interference every member answered.
    for p in &o.points {
        assert_eq!(p.outcome.creation_failures, 0);
        assert_eq!(p.outcome.queries, 20);
        assert!(p.outcome.member_reliability() > 0.99, "{p:?}");
    }
    // delay=auto: the EM computed a delay, and the run was made with it.
    for g in [5usize, 10] {
        let d = o.auto_delay_ms(g).expect("the EM's auto delay");
        assert!(d > 0.0 && d < 200.0, "G = {g}: {d} ms");
        assert!(o.auto(g).is_some() && o.optimum(g).is_some());
    }
}

#[test]
fn a_run_is_the_same_for_the_same_seed_and_differs_for_another() {
    use covey_lab::scenarios::group_delay::{run_point, DelayChoice, RunPoint};
    let params = Params {
        queries: 10,
        ..Params::default()
    };
    let point = |run_seed| RunPoint {
        members: 10,
        delay: DelayChoice::Millis(0),
        seed_index: 0,
        run_seed,
    };
    let times = |seed| {
        run_point(&point(seed), &params)
            .expect("the run")
            .outcome
            .response_times_s
    };
    let first = times(3);
    assert_eq!(first.len(), 10);
    assert_eq!(first, times(3));
    assert_ne!(first, times(4));
}

#[test]
fn parameters_are_checked_against_the_table_not_clamped() {
    let resolve = |k: &str, v: &str| {
        let options = RunOptions {
            quick: true,
            params: vec![(k.to_string(), v.to_string())],
            ..RunOptions::default()
        };
        runner::resolve_params(&GroupDelay, &options)
    };
    let p = resolve("ack_timeout_ms", "500").expect("in range");
    assert_eq!((p.ack_timeout_ms, p.queries), (500, 20));
    assert_eq!(
        resolve("ack_timeout_ms", "50").unwrap_err().to_string(),
        "invalid option: group-delay: `ack_timeout_ms=50` is out of range (ms, 100 to 60000)"
    );
    assert!(resolve("queue", "0")
        .unwrap_err()
        .to_string()
        .contains("is out of range (frames, 1 to 1024)"));
    assert!(resolve("queue_frames", "8")
        .unwrap_err()
        .to_string()
        .contains("has no parameter `queue_frames`"));
}
