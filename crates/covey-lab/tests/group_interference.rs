//! The group-interference scenario's conclusions on its quick run: under Wi-Fi interference
//! unicast CON entities keep member reliability at least as high as multicast ones, multicast
//! entities answer within the leisure, and interference costs multicast members and unicast
//! response time.

use covey_lab::framework::runner;
use covey_lab::scenarios::group_interference::{GroupInterference, Outcome};
use covey_lab::scenarios::RunOptions;

fn quick() -> Outcome {
    let options = RunOptions {
        quick: true,
        seed: 1,
        ..RunOptions::default()
    };
    runner::outcome(&GroupInterference, &options).expect("the sweep runs")
}

#[test]
fn quick_run_reproduces_the_conclusions_of_figs_10_to_12() {
    let o = quick();
    for p in &o.points {
        eprintln!(
            "{} G={} load={} member={:.4} group={:.3} mean={:.3} s max={:.3} chan/q={:.2} retx/q={:.2} created={}",
            p.variant,
            p.members,
            p.x,
            p.outcome.member_reliability(),
            p.outcome.group_reliability(),
            p.outcome.mean_response_s(),
            p.outcome.max_response_s(),
            p.outcome.per_query(p.outcome.channel_errors),
            p.outcome.per_query(p.outcome.coap_retransmissions),
            p.outcome.creation_failures,
        );
    }
    for &g in &o.sweep.sizes {
        for &load in &o.sweep.loads_mbps {
            let u = o.at("unicast", g, load).expect("unicast point");
            let m = o.at("multicast", g, load).expect("multicast point");
            assert_eq!(u.outcome.creation_failures + m.outcome.creation_failures, 0);
            // Fig 10: unicast member reliability is at least multicast's.
            assert!(
                u.outcome.member_reliability() >= m.outcome.member_reliability(),
                "G = {g}, {load} Mbit/s"
            );
            // Fig 12: multicast answers within the leisure, on average (the paper's
            // figure); no query waits much beyond it for its last reply.
            assert!(m.outcome.mean_response_s() < 5.0, "G = {g}, {load} Mbit/s");
            // SMRF delays each forwarding hop by up to 125 ms (smrf.c `in()`), so the last
            // reply may trail the leisure by a few of those.
            assert!(m.outcome.max_response_s() < 6.0, "G = {g}, {load} Mbit/s");
        }
        // Interference costs multicast members and unicast time.
        let clean = o.at("multicast", g, 0.0).expect("clean");
        let loud = o.at("multicast", g, 28.5).expect("loud");
        assert!(loud.outcome.member_reliability() < clean.outcome.member_reliability());
        let clean = o.at("unicast", g, 0.0).expect("clean");
        let loud = o.at("unicast", g, 28.5).expect("loud");
        assert!(loud.outcome.mean_response_s() > clean.outcome.mean_response_s());
    }
}
