//! The fading-goodput scenario's conclusions, checked on the quick sweep, and its
//! determinism.

use std::sync::OnceLock;

use covey_lab::framework::runner;
use covey_lab::scenarios::fading_goodput::expected::expected_goodput;
use covey_lab::scenarios::fading_goodput::paper::{SNRS_DB, TABLE_4};
use covey_lab::scenarios::fading_goodput::report::{rises_with_snr, table_4_max_deviation};
use covey_lab::scenarios::fading_goodput::results::{self, find};
use covey_lab::scenarios::fading_goodput::run::{endpoint_config, run_point};
use covey_lab::scenarios::fading_goodput::{
    ErrorModel, FadingGoodput, Outcome, Params, RunPoint, RunResult,
};
use covey_lab::scenarios::{self, RunOptions};
use covey_lab::LabError;
use rayon::prelude::*;

const SEED: u64 = 2013;

fn options(sets: &[(&str, &str)]) -> RunOptions {
    RunOptions {
        quick: true,
        seed: SEED,
        params: sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        out_dir: std::env::temp_dir().join("covey-lab-fg-never-written"),
        ..RunOptions::default()
    }
}

fn quick() -> &'static Outcome {
    static OUTCOME: OnceLock<Outcome> = OnceLock::new();
    OUTCOME.get_or_init(|| {
        runner::outcome(&FadingGoodput, &options(&[])).expect("the quick sweep runs")
    })
}

/// The parameters `sets` give, or the table's refusal.
fn resolve(sets: &[(&str, &str)]) -> Result<Params, LabError> {
    runner::resolve_params(&FadingGoodput, &options(sets))
}

#[test]
fn table_4_comes_out_of_the_paper_model_within_five_hundredths_of_a_point() {
    let cells: Vec<_> = quick()
        .table_4
        .iter()
        .filter(|c| c.model == ErrorModel::Paper)
        .collect();
    assert_eq!(cells.len(), 48);
    for (row, f) in TABLE_4.iter().zip(1usize..) {
        for (&published, snr) in row.iter().zip(SNRS_DB) {
            let ours = cells
                .iter()
                .find(|c| c.fragments == f && (c.snr_db - snr).abs() < 1e-9)
                .map_or(f64::NAN, |c| c.closed_form_percent);
            assert!(
                (ours - published).abs() <= 0.05,
                "f {f}, {snr} dB: {ours:.3} % vs the paper's {published} %"
            );
        }
    }
    let worst = table_4_max_deviation(&quick().table_4).map_or(f64::NAN, |w| w.0);
    assert!(worst <= 0.05, "{worst}");
}

#[test]
fn measured_datagram_loss_matches_each_models_closed_form() {
    for c in &quick().table_4 {
        let p = (c.closed_form_percent / 100.0).clamp(1e-6, 1.0 - 1e-6);
        let sigma = (p * (1.0 - p) / c.datagrams as f64).sqrt();
        let measured = c.measured_percent() / 100.0;
        assert!(
            (measured - p).abs() < 5.0 * sigma + 1e-3,
            "{:?} f {} at {} dB: measured {measured:.4}, closed form {p:.4}",
            c.model,
            c.fragments,
            c.snr_db
        );
    }
}

#[test]
fn goodput_rises_with_the_snr_under_every_model() {
    let o = quick();
    for m in ErrorModel::ALL {
        assert!(rises_with_snr(&o.points, &o.sweep.snrs_db, m), "{m:?}");
    }
    // Under the paper model, at every payload.
    for &payload in &o.sweep.payloads {
        let g = |snr| {
            find(&o.points, ErrorModel::Paper, snr, payload).map_or(f64::NAN, |p| p.goodput_mean)
        };
        assert!(
            g(1.0) < g(1.5) && g(1.5) < g(2.0) && g(2.0) < g(2.5),
            "{payload} B"
        );
    }
}

#[test]
fn independent_fragments_cost_goodput_on_long_transfers() {
    // Both models are reported, and the physical one loses fragmented datagrams more often
    // than the paper's C_f, so its goodput at the largest payload is lower at every SNR.
    let o = quick();
    for snr in SNRS_DB {
        let g = |m| find(&o.points, m, snr, 1200).map_or(f64::NAN, |p| p.goodput_mean);
        assert!(
            g(ErrorModel::Independent) < g(ErrorModel::Paper),
            "{snr} dB"
        );
    }
    // With one frame both readings of P agree on the loss.
    let one = |m| {
        o.table_4
            .iter()
            .find(|c| c.model == m && c.fragments == 1 && c.snr_db == 1.0)
            .map_or(f64::NAN, |c| c.closed_form_percent)
    };
    assert!((one(ErrorModel::Paper) - one(ErrorModel::Independent)).abs() < 1e-9);
}

#[test]
fn transfers_are_paced_by_the_fixed_one_second_timeout() {
    // At 2.5 dB under the paper model few messages are lost, so most transactions take only
    // air time; at 1 dB the 1 s timeouts dominate.
    let o = quick();
    let t = |snr| find(&o.points, ErrorModel::Paper, snr, 10).map_or(f64::NAN, |p| p.transaction_s);
    assert!(t(2.5) < 0.2, "{}", t(2.5));
    assert!(t(1.0) > 1.0, "{}", t(1.0));
    for p in &o.points {
        assert_eq!(p.unfinished, 0);
        assert_eq!(p.transactions, 200);
    }
}

#[test]
fn same_seed_same_csv_other_seed_other_csv() {
    let run = |seed: u64, tag: &str| {
        let dir = std::env::temp_dir().join(format!("covey-lab-fg-{tag}-{}", std::process::id()));
        let options = RunOptions {
            quick: true,
            seed,
            runs: Some(1),
            out_dir: dir.clone(),
            params: vec![
                ("models".into(), "paper,independent".into()),
                ("probe".into(), "100".into()),
            ],
            ..RunOptions::default()
        };
        let summary = scenarios::run("fading-goodput", &options).expect("the quick run succeeds");
        assert!(summary.markdown.contains("1.0 dB paper"));
        assert!(summary.markdown.contains("1.0 dB independent"));
        let csv = std::fs::read_to_string(dir.join("fading-goodput-runs.csv")).unwrap_or_default();
        std::fs::remove_dir_all(&dir).ok();
        csv
    };
    let a = run(5, "a");
    assert!(a.lines().count() > 40);
    assert_eq!(a, run(5, "b"));
    assert_ne!(a, run(6, "c"));
}

#[test]
fn parameters_are_checked() {
    assert_eq!(
        resolve(&[("transactions", "20")])
            .map(|p| p.transactions)
            .ok(),
        Some(20)
    );
    assert!(resolve(&[("transactions", "many")]).is_err());
    assert!(resolve(&[("colour", "red")]).is_err());
    assert_eq!(
        resolve(&[("models", "rayleigh,paper")])
            .map(|p| p.models)
            .ok(),
        Some(vec![ErrorModel::Rayleigh, ErrorModel::Paper])
    );
    assert!(resolve(&[("models", "awgn")])
        .unwrap_err()
        .to_string()
        .contains("has an item `awgn` that is not one of paper, independent, rayleigh"));
    assert_eq!(
        resolve(&[("models", "paper,paper")])
            .unwrap_err()
            .to_string(),
        "invalid option: fading-goodput: `models` names `paper` twice"
    );
    let p = resolve(&[]).unwrap();
    assert_eq!(p.models, ErrorModel::ALL.to_vec());
    // The quick sweep measures Table 4 with fewer datagrams.
    assert_eq!(p.probe, 1000);
}

#[test]
fn values_out_of_range_are_refused_with_the_table_s_rule_not_clamped() {
    let err = |sets: &[(&str, &str)]| resolve(sets).unwrap_err().to_string();
    assert_eq!(
        err(&[("transactions", "0")]),
        "invalid option: fading-goodput: `transactions=0` is out of range (1 to 100000)"
    );
    assert_eq!(
        err(&[("ack_timeout_ms", "60001")]),
        "invalid option: fading-goodput: `ack_timeout_ms=60001` is out of range (ms, 1 to 60000)"
    );
    assert_eq!(
        err(&[("max_retransmit", "21")]),
        "invalid option: fading-goodput: `max_retransmit=21` is out of range (0 to 20)"
    );
    assert_eq!(
        err(&[("queue", "0")]),
        "invalid option: fading-goodput: `queue=0` is out of range (frames, 1 to 1024)"
    );
}

#[test]
fn simulated_goodput_matches_the_closed_form_of_fixed_doubling_timeouts() {
    // 20 seeds of one payload: the engine's fixed 1 s timeout, doubled per retransmission,
    // and the radio's air time should give the goodput the closed form predicts.
    let params = Params::default();
    let mut points = Vec::new();
    for model in [ErrorModel::Paper, ErrorModel::Independent] {
        for snr_db in [1.5, 2.0] {
            for seed_index in 0..20 {
                points.push(RunPoint {
                    model,
                    snr_db,
                    payload: 510,
                    seed_index,
                    run_seed: runner::trial_seed(SEED, seed_index),
                });
            }
        }
    }
    let runs: Vec<RunResult> = points.par_iter().map(|p| run_point(p, &params)).collect();
    let token_length = endpoint_config(&params).token_length;
    for p in results::aggregate(&runs) {
        let expected = expected_goodput(p.model, p.snr_db, p.payload, &params, token_length)
            .unwrap_or(f64::NAN);
        let ratio = p.goodput_pooled / expected;
        assert!(
            (0.85..1.15).contains(&ratio),
            "{:?} at {} dB: simulated {:.0} B/s, closed form {expected:.0} B/s",
            p.model,
            p.snr_db,
            p.goodput_pooled
        );
    }
}

#[test]
fn the_report_takes_its_timeout_from_the_parameters() {
    let dir = std::env::temp_dir().join(format!("covey-lab-fg-prose-{}", std::process::id()));
    let mut o = options(&[
        ("models", "paper"),
        ("ack_timeout_ms", "500"),
        ("transactions", "10"),
        ("probe", "10"),
    ]);
    o.runs = Some(1);
    o.out_dir = dir.clone();
    let md = scenarios::run("fading-goodput", &o).unwrap().markdown;
    std::fs::remove_dir_all(&dir).ok();
    assert!(md.contains("ACK_TIMEOUT 0.5 s"), "{md}");
    assert!(md.contains("fixed 0.5 s doubling timeouts"), "{md}");
    assert!(
        md.contains("at least the fixed 0.5 s initial timeout"),
        "{md}"
    );
    assert!(
        !md.contains("wall time"),
        "no wall-clock time in a written file"
    );
}
