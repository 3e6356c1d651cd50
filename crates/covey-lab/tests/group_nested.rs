//! The group-nested scenario's conclusion on its quick run: at every Wi-Fi load two nested
//! 10-member entities on two gateways answer faster than one 20-member entity, and no faster
//! than one 10-member entity.

use covey_lab::framework::runner;
use covey_lab::scenarios::group_nested::{GroupNested, Layout, Outcome};
use covey_lab::scenarios::RunOptions;

fn quick() -> Outcome {
    let options = RunOptions {
        quick: true,
        seed: 1,
        ..RunOptions::default()
    };
    runner::outcome(&GroupNested, &options).expect("the sweep runs")
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
        let outcome = |l: Layout| {
            let p = o.at(l, load).expect("every layout at every load");
            assert_eq!(p.outcome.creation_failures, 0, "{l:?} at {load}");
            assert_eq!(p.outcome.queries, 20);
            &p.outcome
        };
        let (ten, twenty, nested) = (
            outcome(Layout::Single10),
            outcome(Layout::Single20),
            outcome(Layout::Nested2x10),
        );
        let (n, t) = (nested.mean_response_s(), twenty.mean_response_s());
        assert!(n < t, "{load} Mbit/s: mean {n} vs {t}");
        // The nested pair waits for the slower of two 10-member queries, so a typical query
        // is no faster than one 10-member entity's. Compared by the median: over 20 queries
        // one CoAP retransmission (2-3 s) moves a mean by more than the margin.
        let (n, s) = (nested.median_response_s(), ten.median_response_s());
        assert!(n >= s, "{load} Mbit/s: median {n} vs {s}");
    }
}
