//! The group-nested scenario's conclusion on its quick run: at every Wi-Fi load two nested
//! 10-member entities on two gateways answer faster than one 20-member entity, and no faster
//! than one 10-member entity.

use covey_lab::scenarios::group_nested::{run_sweep, Layout, Outcome, Params, Sweep};

fn quick() -> Outcome {
    let params = Params {
        queries: 20,
        ..Params::default()
    };
    run_sweep(&params, &Sweep::quick(1), 1, None).expect("the sweep runs")
}

#[test]
fn nested_entities_answer_faster_than_one_big_entity() {
    let o = quick();
    for p in &o.points {
        eprintln!(
            "{} load={} mean={:.3} s group={:.3} created_fail={}",
            p.variant,
            p.x,
            p.outcome.mean_response_s(),
            p.outcome.group_reliability(),
            p.outcome.creation_failures
        );
    }
    for &load in &o.sweep.loads_mbps {
        let mean = |l: Layout| {
            let p = o.at(l, load).expect("every layout at every load");
            assert_eq!(p.outcome.creation_failures, 0, "{l:?} at {load}");
            assert_eq!(p.outcome.queries, 20);
            p.outcome.mean_response_s()
        };
        let (ten, twenty, nested) = (
            mean(Layout::Single10),
            mean(Layout::Single20),
            mean(Layout::Nested2x10),
        );
        assert!(nested < twenty, "{load} Mbit/s: {nested} vs {twenty}");
        assert!(nested >= ten, "{load} Mbit/s: {nested} vs {ten}");
    }
}
