//! The cc-bottleneck scenario's conclusions, checked on the quick sweep, and its
//! determinism.

use std::sync::OnceLock;

use covey_lab::framework::runner;
use covey_lab::scenarios::cc_bottleneck::report::completion_ranking;
use covey_lab::scenarios::cc_bottleneck::run::run_point;
use covey_lab::scenarios::cc_bottleneck::{
    Aggregate, CcBottleneck, Headers, Outcome, Params, RunPoint, Workload,
};
use covey_lab::scenarios::{self, RunOptions};
use covey_lab::LabError;
use covey_proto::cc::Algorithm;

const SEED: u64 = 2015;

fn options(runs: usize, sets: &[(&str, &str)]) -> RunOptions {
    RunOptions {
        quick: true,
        seed: SEED,
        runs: Some(runs),
        params: sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        out_dir: std::env::temp_dir().join("covey-lab-cc-never-written"),
        ..RunOptions::default()
    }
}

fn quick() -> &'static Outcome {
    static OUTCOME: OnceLock<Outcome> = OnceLock::new();
    OUTCOME.get_or_init(|| {
        runner::outcome(&CcBottleneck, &options(2, &[])).expect("the quick sweep runs")
    })
}

/// The parameters `sets` give, or the table's refusal.
fn resolve(sets: &[(&str, &str)]) -> Result<Params, LabError> {
    runner::resolve_params(&CcBottleneck, &options(1, sets))
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
        .filter(|c| c.algorithm == Algorithm::Linux)
        .count();
    let default = run
        .results
        .iter()
        .filter(|c| c.algorithm == Algorithm::Default)
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
    // 36 runs of the sweep, 18 of the sensitivity study (two changed settings) and 4 of
    // the retransmission sweep's quick corner.
    assert_eq!(summary.runs, 58);
    assert!(summary
        .markdown
        .contains("## What could produce Table 1's retransmissions"));
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
    // Table 1's shares are markers on the retransmission plot; completion time has none.
    let svg = |suffix: &str| {
        std::fs::read_to_string(dir.join(format!("cc-bottleneck-{suffix}.svg"))).unwrap_or_default()
    };
    assert!(svg("retransmitted").contains("paper, default (003 Table 1)"));
    assert!(!svg("completion").contains("003 Table 1"));
    assert!(summary
        .markdown
        .contains("gives no numbers for completion time"));
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
    assert_eq!(resolve(&[("queue", "10")]).unwrap().queue, 10);
    assert_eq!(
        resolve(&[("header", "6lowpan")]).unwrap().header,
        Headers::SixLowpan
    );
    assert!(resolve(&[("queue", "many")]).is_err());
    assert!(resolve(&[("colour", "red")]).is_err());
    // A 2-packet queue at 40 clients loses packets, and the engines repair every loss.
    let params = resolve(&[("queue", "2"), ("exchanges", "10")]).unwrap();
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
fn values_out_of_range_are_refused_with_the_table_s_rule_not_clamped() {
    let err = |sets: &[(&str, &str)]| resolve(sets).unwrap_err().to_string();
    assert_eq!(
        err(&[("max_retransmit", "21")]),
        "invalid option: cc-bottleneck: `max_retransmit=21` is out of range (0 to 20)"
    );
    assert_eq!(
        err(&[("rate", "0")]),
        "invalid option: cc-bottleneck: `rate=0` is out of range (bit/s, 1 to 1000000000)"
    );
    assert_eq!(
        err(&[("mtu", "15")]),
        "invalid option: cc-bottleneck: `mtu=15` is out of range (bytes, 16 to 65535)"
    );
    assert!(err(&[("header", "IPv6")]).contains("is not one of ipv6, ipv4, 6lowpan"));
}

#[test]
fn a_sweep_does_not_depend_on_thread_scheduling() {
    let sweep = || {
        let o = runner::outcome(&CcBottleneck, &options(1, &[("exchanges", "5")])).unwrap();
        format!("{:?} {:?}", o.runs, o.sensitivity)
    };
    assert_eq!(sweep(), sweep());
}

#[test]
fn the_report_takes_its_values_from_the_parameters_and_the_clients_configuration() {
    let dir = std::env::temp_dir().join(format!("covey-lab-cc-prose-{}", std::process::id()));
    let mut o = options(1, &[("exchanges", "5"), ("queue", "100")]);
    o.out_dir = dir.clone();
    let md = scenarios::run("cc-bottleneck", &o).unwrap().markdown;
    std::fs::remove_dir_all(&dir).ok();
    // ACK_TIMEOUT and ACK_RANDOM_FACTOR of the clients' configuration, RFC 7252's defaults.
    assert!(md.contains("(ACK_TIMEOUT = 2 s)"), "{md}");
    assert!(md.contains("uniform in 2–3 s"), "{md}");
    assert!(md.contains("a client takes for its 5 exchanges"), "{md}");
    assert!(md.contains("instead of the configured 100"), "{md}");
    assert!(md.contains("| `queue` | 100 | 1000 |"), "{md}");
    assert!(
        !md.contains("wall time"),
        "no wall-clock time in a written file"
    );
}

#[test]
fn every_described_parameter_accepts_its_default() {
    let described = scenarios::params(covey_lab::scenarios::cc_bottleneck::NAME).unwrap();
    assert!(described
        .iter()
        .any(|p| p.name == "queue" && p.default == "1000"));
    let defaults: Vec<(&str, &str)> = described
        .iter()
        .map(|p| (p.name, p.default.as_str()))
        .collect();
    assert_eq!(resolve(&defaults).unwrap(), Params::default());
    assert!(matches!(
        scenarios::params("no-such-scenario"),
        Err(covey_lab::LabError::UnknownScenario(_))
    ));
}

/// One lightly loaded client running `exchanges` exchanges with `sets` applied.
fn lone_client(
    exchanges: u32,
    sets: &[(&str, &str)],
) -> (Params, covey_lab::scenarios::cc_bottleneck::RunResult) {
    let mut all = vec![("exchanges", exchanges.to_string())];
    all.extend(sets.iter().map(|(k, v)| (*k, v.to_string())));
    let sets: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let params = resolve(&sets).expect("the parameters are accepted");
    let run = run_point(
        &RunPoint {
            algorithm: Algorithm::Default,
            workload: Workload::Continuous,
            clients: 1,
            seed_index: 0,
            run_seed: 23,
        },
        &params,
    );
    (params, run)
}

/// Share of a run's completed exchanges that needed at least `k` retransmissions.
fn share_with_at_least(run: &covey_lab::scenarios::cc_bottleneck::RunResult, k: usize) -> f64 {
    let c = &run.results[0].completed_after;
    let total: u64 = c.iter().sum();
    c[k..].iter().sum::<u64>() as f64 / total as f64
}

/// Whether `measured` lies within 4.5 binomial standard deviations of `expected` over `n`.
fn near(measured: f64, expected: f64, n: u32) -> bool {
    let sd = (expected * (1.0 - expected) / f64::from(n)).sqrt();
    (measured - expected).abs() < 4.5 * sd
}

#[test]
fn random_loss_reaches_the_link_and_retransmits_the_analytic_share() {
    // One client never meets a queue or a spurious timeout (its RTT is a fraction of
    // ACK_TIMEOUT), so only the loss retransmits: an attempt fails when the request or
    // the response is lost, 1 − (1 − p)^2, and attempts fail independently (geometric).
    let n = 3000;
    let (_, run) = lone_client(n, &[("loss", "5")]);
    let q = 1.0 - 0.95f64 * 0.95;
    let once = share_with_at_least(&run, 1);
    assert!(near(once, q, n), "retransmitted {once} vs {q}");
    let twice = share_with_at_least(&run, 2);
    assert!(near(twice, q * q, n), "twice {twice} vs {}", q * q);
    assert_eq!(run.queue_drops, 0);
    // On one direction only: one packet per attempt can be lost.
    let (_, up) = lone_client(n, &[("loss", "5"), ("loss_direction", "up")]);
    let s = share_with_at_least(&up, 1);
    assert!(near(s, 0.05, n), "up only: {s}");
    // And without loss nothing is retransmitted.
    let (_, none) = lone_client(200, &[]);
    assert_eq!(share_with_at_least(&none, 1), 0.0);
}

#[test]
fn a_fragmented_response_is_lost_when_any_fragment_is() {
    // 300 B of payload at MTU 128 leaves the server as IP fragments; with the loss on the
    // downstream direction only, an attempt fails with 1 − (1 − p)^k for k fragments.
    use covey_lab::scenarios::cc_bottleneck::retx_sweep::frames;
    let n = 3000;
    let sets = [
        ("loss", "5"),
        ("loss_direction", "down"),
        ("payload", "300"),
        ("fragmentation", "ip"),
        ("mtu", "128"),
    ];
    let (params, run) = lone_client(n, &sets);
    let (request, response) = frames(&params, 300);
    assert_eq!(request, 1);
    assert!(response >= 3, "{response} fragments");
    // Every response fragment crossed the link (as many frames as fragments per datagram).
    let datagrams: u64 = run.results[0].transmissions;
    assert!(run.frames_on_wire >= datagrams * (1 + response as u64) * 9 / 10);
    let q = 1.0 - 0.95f64.powi(response as i32);
    let s = share_with_at_least(&run, 1);
    assert!(near(s, q, n), "{response} fragments: {s} vs {q}");
    // The same response in one frame (a large MTU) fails only with p.
    let mut big_mtu = sets;
    big_mtu[4] = ("mtu", "1500");
    let (_, whole) = lone_client(n, &big_mtu);
    let s = share_with_at_least(&whole, 1);
    assert!(near(s, 0.05, n), "one frame: {s}");
}
