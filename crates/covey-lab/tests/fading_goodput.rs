//! The fading-goodput scenario's conclusions, checked on the quick sweep, and its
//! determinism.

use std::sync::OnceLock;

use covey_lab::scenarios::fading_goodput::paper::{SNRS_DB, TABLE_4};
use covey_lab::scenarios::fading_goodput::report::{rises_with_snr, table_4_max_deviation};
use covey_lab::scenarios::fading_goodput::results::find;
use covey_lab::scenarios::fading_goodput::{
    models_from, run_sweep, ErrorModel, Outcome, Params, Sweep,
};
use covey_lab::scenarios::{self, RunOptions};

const SEED: u64 = 2013;

fn quick() -> &'static Outcome {
    static OUTCOME: OnceLock<Outcome> = OnceLock::new();
    OUTCOME.get_or_init(|| {
        let params = Params {
            probe_datagrams: 1000,
            ..Params::default()
        };
        run_sweep(
            &params,
            &Sweep::quick(ErrorModel::ALL.to_vec(), 2),
            SEED,
            None,
        )
    })
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
    let set = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    assert_eq!(
        Params::with_overrides(&set("transactions", "20"))
            .map(|p| p.transactions)
            .ok(),
        Some(20)
    );
    assert!(Params::with_overrides(&set("transactions", "many")).is_err());
    assert!(Params::with_overrides(&set("colour", "red")).is_err());
    assert_eq!(
        models_from(&set("models", "rayleigh,paper")).ok(),
        Some(vec![ErrorModel::Rayleigh, ErrorModel::Paper])
    );
    assert!(models_from(&set("models", "awgn")).is_err());
    assert_eq!(models_from(&[]).ok(), Some(ErrorModel::ALL.to_vec()));
}

#[test]
fn simulated_goodput_matches_the_closed_form_of_fixed_doubling_timeouts() {
    // 20 seeds of one point: the engine's fixed 1 s timeout, doubled per retransmission, and
    // the radio's air time should give the goodput the closed form predicts.
    let params = Params {
        probe_datagrams: 10,
        ..Params::default()
    };
    let sweep = Sweep {
        models: vec![ErrorModel::Paper, ErrorModel::Independent],
        snrs_db: vec![1.5, 2.0],
        payloads: vec![510],
        seeds: 20,
    };
    let o = run_sweep(&params, &sweep, SEED, None);
    for p in &o.points {
        let expected = p.goodput_closed_form.unwrap_or(f64::NAN);
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
