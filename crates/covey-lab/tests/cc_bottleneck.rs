//! The cc-bottleneck scenario's conclusions, checked on the quick sweep, and its
//! determinism.

use std::sync::OnceLock;

use covey_lab::scenarios::cc_bottleneck::report::completion_ranking;
use covey_lab::scenarios::cc_bottleneck::run::run_point;
use covey_lab::scenarios::cc_bottleneck::{
    run_sweep, Aggregate, Outcome, Params, RunPoint, Sweep, Workload,
};
use covey_lab::scenarios::{self, RunOptions};
use covey_proto::cc::Algorithm;

const SEED: u64 = 2015;

fn quick() -> &'static Outcome {
    static OUTCOME: OnceLock<Outcome> = OnceLock::new();
    OUTCOME.get_or_init(|| run_sweep(&Params::default(), &Sweep::quick(2), SEED, None))
}

fn of(o: &Outcome, alg: Algorithm, n: usize) -> &Aggregate {
    of_workload(o, Workload::Continuous, alg, n)
}

fn of_workload(o: &Outcome, w: Workload, alg: Algorithm, n: usize) -> &Aggregate {
    o.aggregates
        .iter()
        .find(|a| {
            a.workload == w
                && a.run_algorithm == alg.name()
                && a.client_algorithm == alg.name()
                && a.clients == n
        })
        .expect("the quick sweep covers every algorithm at 10, 40 and 80 clients")
}

#[test]
fn every_client_ends_its_fifty_exchanges() {
    for run in &quick().runs {
        assert!(run.finished, "{} {} clients", run.algorithm, run.clients);
        for c in &run.results {
            assert_eq!(c.succeeded + c.failed, 50);
        }
    }
}

#[test]
fn retransmitted_share_grows_with_the_number_of_clients() {
    // Pooled over all algorithms, as the paper states its ranges, for both workloads of
    // its Table 1.
    for w in [Workload::Continuous, Workload::Random] {
        let pooled = |n: usize| {
            let (mut retx, mut all) = (0u64, 0u64);
            for alg in Algorithm::ALL {
                let a = of_workload(quick(), w, alg, n);
                let total: u64 = a.completed_after.iter().sum();
                retx += total - a.completed_after[0];
                all += total;
            }
            retx as f64 / all as f64
        };
        let (s10, s40, s80) = (pooled(10), pooled(40), pooled(80));
        assert!(
            s10 < s40 && s40 < s80,
            "{w:?} 10: {s10}, 40: {s40}, 80: {s80}"
        );
    }
    // And for default CoAP on its own.
    let d = |n| of(quick(), Algorithm::Default, n).retransmitted_share;
    assert!(d(10) <= d(40) && d(40) < d(80));
}

#[test]
fn completion_time_grows_with_the_number_of_clients() {
    for alg in Algorithm::ALL {
        let m = |n| of(quick(), alg, n).completion_s.median;
        assert!(m(10) < m(40) && m(40) < m(80), "{alg}");
    }
}

/// The paper: default CoAP has the highest completion time under high congestion, and the
/// alternatives are more efficient there. Every adaptive estimator keeps its backoff until
/// a valid sample (Karn), so none locks below the queueing RTT.
#[test]
fn default_coap_has_the_longest_completion_time_at_80_continuous_clients() {
    let default = of(quick(), Algorithm::Default, 80).completion_s.median;
    for alg in [
        Algorithm::Cocoa,
        Algorithm::CocoaStrong,
        Algorithm::Linux,
        Algorithm::PeakHopper,
        Algorithm::Rfc6298,
    ] {
        let other = of(quick(), alg, 80).completion_s.median;
        assert!(default > other, "default {default} s vs {alg} {other} s");
    }
    let ranking = completion_ranking(&quick().aggregates, Workload::Continuous, 80);
    assert_eq!(ranking.len(), 6);
}

#[test]
fn same_seed_same_results_other_seed_other_results() {
    let point = |seed| RunPoint {
        algorithm: Algorithm::Cocoa,
        workload: Workload::Mixed,
        clients: 20,
        seed_index: 0,
        run_seed: seed,
    };
    let params = Params::default();
    let trace = |seed| format!("{:?}", run_point(&point(seed), &params));
    assert_eq!(trace(11), trace(11));
    assert_ne!(trace(11), trace(12));
}

#[test]
fn random_clients_use_fresh_endpoints_and_competing_runs_both_algorithms() {
    let params = Params::default();
    let run = run_point(
        &RunPoint {
            algorithm: Algorithm::PeakHopper,
            workload: Workload::Random,
            clients: 10,
            seed_index: 0,
            run_seed: 3,
        },
        &params,
    );
    for c in &run.results {
        assert_eq!(c.succeeded + c.failed, 50);
        // Batches of 1-10 exchanges: at least 5 endpoints for 50 exchanges.
        assert!(c.endpoints >= 5, "{} endpoints", c.endpoints);
    }
    let run = run_point(
        &RunPoint {
            algorithm: Algorithm::Linux,
            workload: Workload::Competing,
            clients: 10,
            seed_index: 0,
            run_seed: 3,
        },
        &params,
    );
    let linux = run
        .results
        .iter()
        .filter(|c| c.algorithm == "linux")
        .count();
    let default = run
        .results
        .iter()
        .filter(|c| c.algorithm == "default")
        .count();
    assert_eq!((linux, default), (5, 5));
}

#[test]
fn run_writes_every_report_file() {
    let dir = std::env::temp_dir().join(format!("covey-lab-cc-{}", std::process::id()));
    let options = RunOptions {
        quick: true,
        seed: 1,
        runs: Some(1),
        out_dir: dir.clone(),
        params: Vec::new(),
        ..RunOptions::default()
    };
    let summary = scenarios::run("cc-bottleneck", &options).expect("the quick run succeeds");
    assert_eq!(summary.runs, 36);
    for f in &summary.files {
        let len = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        assert!(len > 100, "{} is empty", f.display());
    }
    assert!(summary.markdown.contains("| paper %"));
    // The paper's 7th and 8th retransmissions each get their own column, beside ours.
    assert!(
        summary
            .markdown
            .contains("| 6th | 7th | 8th | 9th+ | failed |"),
        "Table 1 header"
    );
    let csv = std::fs::read_to_string(dir.join("cc-bottleneck-summary.csv")).unwrap_or_default();
    let header = csv.lines().next().unwrap_or_default();
    assert!(
        header.ends_with("after_6,after_7,after_8,after_9_or_more"),
        "{header}"
    );
    let columns = header.split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() == columns));
    assert!(matches!(
        scenarios::run("no-such-scenario", &options),
        Err(covey_lab::LabError::UnknownScenario(_))
    ));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn parameters_can_be_overridden_by_name() {
    let set = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    let p = Params::with_overrides(&set("queue", "10")).unwrap();
    assert_eq!(p.queue_packets, 10);
    let p = Params::with_overrides(&set("header", "6LoWPAN")).unwrap();
    assert_eq!(p.header, covey_sim::media::HeaderModel::SixLowpanIphcNhc);
    assert!(Params::with_overrides(&set("queue", "many")).is_err());
    assert!(Params::with_overrides(&set("colour", "red")).is_err());
    // A 2-packet queue at 40 clients loses packets, and the engines repair every loss.
    let mut params = Params::with_overrides(&set("queue", "2")).unwrap();
    params.exchanges_per_client = 10;
    let run = run_point(
        &RunPoint {
            algorithm: Algorithm::Default,
            workload: Workload::Continuous,
            clients: 40,
            seed_index: 0,
            run_seed: 1,
        },
        &params,
    );
    assert!(run.queue_drops > 0);
    let retransmissions: u64 = run
        .results
        .iter()
        .map(|c| c.retransmissions.iter().sum::<u64>())
        .sum();
    assert!(
        retransmissions >= run.queue_drops / 2,
        "drops are repaired by retransmission"
    );
    assert!(run.results.iter().all(|c| c.succeeded + c.failed == 10));
}

#[test]
fn a_sweep_does_not_depend_on_thread_scheduling() {
    let sweep = Sweep {
        algorithms: vec![Algorithm::Default, Algorithm::Linux],
        clients: vec![10, 30],
        workloads: vec![Workload::Random],
        seeds: 2,
    };
    let trace = || format!("{:?}", run_sweep(&Params::default(), &sweep, 9, None).runs);
    assert_eq!(trace(), trace());
}

#[test]
fn every_described_parameter_accepts_its_default() {
    let described = scenarios::params(covey_lab::scenarios::cc_bottleneck::NAME).unwrap();
    assert!(described
        .iter()
        .any(|p| p.name == "queue" && p.default == "1000"));
    let defaults: Vec<(String, String)> = described
        .iter()
        .map(|p| (p.name.to_string(), p.default.clone()))
        .collect();
    let p = Params::with_overrides(&defaults).unwrap();
    assert_eq!(p.queue_packets, Params::default().queue_packets);
    assert_eq!(p.header, Params::default().header);
    assert!(Params::with_overrides(&[("rate".into(), "0".into())]).is_err());
    assert!(matches!(
        scenarios::params("no-such-scenario"),
        Err(covey_lab::LabError::UnknownScenario(_))
    ));
}
