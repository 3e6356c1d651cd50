//! The fading-goodput report: CSV of every run, of the goodput points and of Table 4, the
//! outcome as JSON, one goodput chart per SNR (the paper's Fig 10 a–d) as SVG, and a
//! Markdown page that sets Covey's numbers beside the paper's and says where they differ.

use std::fmt::Write as _;

use serde::Serialize;

use super::error_model::ErrorModel;
use super::loss_probe::LossCell;
use super::paper;
use super::results::{curve_against_closed_form, curve_mean, find, GoodputPoint};
use super::run::endpoint_config;
use super::Outcome;
use super::NAME;
use crate::report::folder::ReportFolder;
use crate::report::markdown::MarkdownTable;
use crate::report::rows::Fixed;
use crate::report::svg::{AxisKind, LineChart, Series};
use crate::scenarios::one_hop::LinkFormat;
use crate::LabError;

/// Writes the CSV and SVG files of `outcome` into `folder` and returns the page.
pub fn write(outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
    folder.rows("runs", &runs_rows(outcome))?;
    folder.rows("goodput", &goodput_rows(&outcome.points))?;
    folder.rows("table4", &table_4_rows(&outcome.table_4))?;
    let mut plots = Vec::new();
    for &snr in &outcome.sweep.snrs_db {
        let suffix = format!("snr-{}", snr_label(snr));
        folder.svg(Some(&suffix), &chart(outcome, snr))?;
        plots.push((format!("{NAME}-{suffix}.svg"), None));
    }
    if let Some(last) = plots.last_mut() {
        last.1 = Some(
            "The paper publishes its goodput (Fig 10) only as plots and gives no numbers for \
             it, so these plots show no paper points; its Table 4 is compared below."
                .to_string(),
        );
    }
    Ok(crate::report::with_plots(&markdown(outcome), &plots))
}

/// "2.5" → "2_5", for file names.
fn snr_label(snr: f64) -> String {
    format!("{snr:.1}").replace('.', "_")
}

/// One run, as `fading-goodput-runs.csv` lists it.
#[derive(Serialize)]
struct RunRow {
    model: ErrorModel,
    snr_db: Fixed<1>,
    payload: usize,
    seed_index: usize,
    run_seed: u64,
    finished: bool,
    fragments: usize,
    succeeded: u32,
    failed: u32,
    bytes: u64,
    elapsed_s: Fixed<6>,
    goodput_bytes_per_s: Fixed<3>,
    coap_retransmissions: u64,
    coap_datagrams: u64,
    frames_on_air: u64,
    mac_retries: u64,
    channel_losses: u64,
    udp_discards: u64,
}

fn runs_rows(outcome: &Outcome) -> Vec<RunRow> {
    outcome
        .runs
        .iter()
        .map(|r| RunRow {
            model: r.point.model,
            snr_db: Fixed(r.point.snr_db),
            payload: r.point.payload,
            seed_index: r.point.seed_index,
            run_seed: r.point.run_seed,
            finished: r.finished,
            fragments: r.fragments,
            succeeded: r.succeeded,
            failed: r.failed,
            bytes: r.bytes,
            elapsed_s: Fixed(r.elapsed_s),
            goodput_bytes_per_s: Fixed(r.goodput),
            coap_retransmissions: r.coap_retransmissions,
            coap_datagrams: r.coap_datagrams,
            frames_on_air: r.frames_on_air,
            mac_retries: r.mac_retries,
            channel_losses: r.channel_losses,
            udp_discards: r.udp_discards,
        })
        .collect()
}

/// One (model, SNR, payload) point, as `fading-goodput-goodput.csv` lists it.
#[derive(Serialize)]
struct GoodputRow {
    model: ErrorModel,
    snr_db: Fixed<1>,
    payload: usize,
    fragments: usize,
    runs: usize,
    goodput_mean_bytes_per_s: Fixed<3>,
    goodput_pooled_bytes_per_s: Fixed<3>,
    goodput_closed_form_bytes_per_s: Option<Fixed<3>>,
    goodput_min: Fixed<3>,
    goodput_max: Fixed<3>,
    transactions: u64,
    failed: u64,
    transaction_s: Fixed<6>,
    coap_retransmissions_per_transaction: Fixed<4>,
    unfinished_runs: usize,
}

fn goodput_rows(points: &[GoodputPoint]) -> Vec<GoodputRow> {
    points
        .iter()
        .map(|p| GoodputRow {
            model: p.model,
            snr_db: Fixed(p.snr_db),
            payload: p.payload,
            fragments: p.fragments,
            runs: p.runs,
            goodput_mean_bytes_per_s: Fixed(p.goodput_mean),
            goodput_pooled_bytes_per_s: Fixed(p.goodput_pooled),
            goodput_closed_form_bytes_per_s: p.goodput_closed_form.map(Fixed),
            goodput_min: Fixed(p.goodput_min),
            goodput_max: Fixed(p.goodput_max),
            transactions: p.transactions,
            failed: p.failed,
            transaction_s: Fixed(p.transaction_s),
            coap_retransmissions_per_transaction: Fixed(p.coap_retransmissions_per_transaction),
            unfinished_runs: p.unfinished,
        })
        .collect()
}

/// One Table 4 cell, as `fading-goodput-table4.csv` lists it.
#[derive(Serialize)]
struct Table4Row {
    model: ErrorModel,
    snr_db: Fixed<1>,
    fragments: usize,
    payload: usize,
    paper_percent: Option<Fixed<2>>,
    closed_form_percent: Fixed<4>,
    monte_carlo_percent: Fixed<4>,
    datagrams: u64,
    lost: u64,
}

fn table_4_rows(cells: &[LossCell]) -> Vec<Table4Row> {
    cells
        .iter()
        .map(|c| Table4Row {
            model: c.model,
            snr_db: Fixed(c.snr_db),
            fragments: c.fragments,
            payload: c.payload,
            paper_percent: paper::table_4(c.fragments, c.snr_db).map(Fixed),
            closed_form_percent: Fixed(c.closed_form_percent),
            monte_carlo_percent: Fixed(c.measured_percent()),
            datagrams: c.datagrams,
            lost: c.lost,
        })
        .collect()
}

fn chart(outcome: &Outcome, snr: f64) -> LineChart {
    LineChart {
        title: format!("Goodput at {snr:.1} dB SNR (cf. the paper's Fig 10)"),
        x_label: "payload (bytes)".into(),
        x_kind: AxisKind::Count,
        y_label: "goodput (bytes/s)".into(),
        series: outcome
            .sweep
            .models
            .iter()
            .map(|&m| Series {
                name: format!("{} model", m.name()),
                points: outcome
                    .points
                    .iter()
                    .filter(|p| p.model == m && (p.snr_db - snr).abs() < 1e-9)
                    .map(|p| (p.payload as f64, p.goodput_mean))
                    .collect(),
            })
            .collect(),
    }
}

/// The Table 4 cell of `model` at (f, SNR).
fn cell(cells: &[LossCell], model: ErrorModel, f: usize, snr: f64) -> Option<&LossCell> {
    cells
        .iter()
        .find(|c| c.model == model && c.fragments == f && (c.snr_db - snr).abs() < 1e-9)
}

/// The largest |closed form − paper| for the paper model over Table 4's 44 cells with two or
/// more fragments, in percentage points, with where it occurs. The f = 1 row is left out: the
/// model's P comes from it, so it agrees by construction.
pub fn table_4_max_deviation(cells: &[LossCell]) -> Option<(f64, usize, f64)> {
    cells
        .iter()
        .filter(|c| c.model == ErrorModel::Paper && c.fragments >= 2)
        .filter_map(|c| {
            let p = paper::table_4(c.fragments, c.snr_db)?;
            Some(((c.closed_form_percent - p).abs(), c.fragments, c.snr_db))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The largest |Monte Carlo − closed form| of `model` in standard errors of the measurement.
fn largest_z(cells: &[LossCell], model: ErrorModel) -> Option<f64> {
    cells
        .iter()
        .filter(|c| c.model == model && c.datagrams > 0)
        .map(|c| {
            let p = (c.closed_form_percent / 100.0).clamp(1e-9, 1.0 - 1e-9);
            let sigma = (p * (1.0 - p) / c.datagrams as f64).sqrt();
            (c.measured_percent() / 100.0 - p).abs() / sigma
        })
        .max_by(f64::total_cmp)
}

fn markdown(outcome: &Outcome) -> String {
    let p = &outcome.params;
    let s = &outcome.sweep;
    let retries = LinkFormat::default().mac.max_frame_retries;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# fading-goodput: CoAP reliability under Rayleigh fading\n\nReproduces Ludovici, \
         Moreno and Calveras, TinyCoAP (JSAN 2013, seed 002): Table 4 and Fig 10. One IEEE \
         802.15.4 hop (unslotted CSMA/CA, {retries} MAC retries, 127-byte PSDU, 6LoWPAN \
         fragments), CON GET, ACK_TIMEOUT {:.1} s with ACK_RANDOM_FACTOR {:.1}, MAX_RETRANSMIT \
         {}, {} consecutive transactions per run, MAC queue {} frames. Sweep: models {} × SNR \
         {:?} dB × payloads {:?} B × {} seed(s), base seed {} (every point of a seed draws the \
         same random sequences); {} runs and {} Table 4 cells of {} datagrams.\n",
        p.ack_timeout().as_secs_f64(),
        endpoint_config(p).transmission.ack_random_factor.as_f64(),
        p.max_retransmit,
        p.transactions,
        p.queue,
        s.models
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(", "),
        s.snrs_db,
        s.payloads,
        s.seeds,
        outcome.seed,
        outcome.runs.len(),
        outcome.table_4.len(),
        p.probe,
    );
    let _ = writeln!(
        md,
        "Error models: **paper** — the paper's method: the radio delivers every frame, the \
         receiver's UDP layer discards a datagram of f fragments when the next number of a fixed \
         random sequence is ≤ C_f = P^{attempts} · (1 − (1 − P)^f) / P, with the spec's P = \
         0.7935, 0.64, 0.4775, 0.333 at 1, 1.5, 2, 2.5 dB; **independent** — every data frame \
         on the radio is corrupted with that P (ACKs pass), each fragment has its own {retries} \
         MAC retries, so a datagram is lost with 1 − (1 − P^{attempts})^f; **rayleigh** — block \
         Rayleigh fading of every frame (ACKs too) from the O-QPSK DSSS bit error rate at the \
         SNR and the frame's length, with no number taken from the paper.\n",
        attempts = u32::from(retries) + 1,
    );
    table_4_section(outcome, &mut md);
    goodput_section(outcome, &mut md);
    conclusions(outcome, &mut md);
    md
}

fn table_4_section(outcome: &Outcome, md: &mut String) {
    let cells = &outcome.table_4;
    let snrs = paper::SNRS_DB;
    let _ = writeln!(
        md,
        "## Table 4: application-layer packet error rate (%)\n\nPer SNR three columns: \
         **paper** (published), **closed form** (the paper model's C_f, computed), **Monte \
         Carlo** (measured in this run: the share of {} datagrams that fill f fragments, sent \
         one at a time over the simulated hop, that the receiver's UDP layer discarded).\n",
        outcome.params.probe
    );
    let mut header = vec!["f".to_string()];
    for snr in snrs {
        for what in ["paper", "closed form", "Monte Carlo"] {
            header.push(format!("{snr:.1} dB {what}"));
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = MarkdownTable::new(&header);
    for f in 1..=12 {
        let mut row = vec![f.to_string()];
        for snr in snrs {
            let c = cell(cells, ErrorModel::Paper, f, snr);
            row.push(paper::table_4(f, snr).map_or("–".into(), |x| format!("{x:.2}")));
            row.push(c.map_or("–".into(), |c| format!("{:.2}", c.closed_form_percent)));
            row.push(c.map_or("–".into(), |c| format!("{:.2}", c.measured_percent())));
        }
        t.push(row);
    }
    if outcome.sweep.models.contains(&ErrorModel::Paper) {
        md.push_str(&t.render());
        if let Some((dev, f, snr)) = table_4_max_deviation(cells) {
            let _ = writeln!(
                md,
                "\nClosed form against the paper: largest deviation {dev:.4} percentage points \
                 (f = {f}, {snr:.1} dB) over the 44 entries with f ≥ 2. The f = 1 row is not \
                 a reproduction: the paper model's P per SNR is taken from it (C_1 = P^4), so \
                 it agrees by construction."
            );
        }
        if let Some(z) = largest_z(cells, ErrorModel::Paper) {
            let _ = writeln!(
                md,
                "Monte Carlo against the closed form: largest difference {z:.1} standard errors \
                 of the measurement."
            );
        }
    }
    for model in [ErrorModel::Independent, ErrorModel::Rayleigh] {
        if !outcome.sweep.models.contains(&model) {
            continue;
        }
        let _ = writeln!(
            md,
            "\n### The same table under the {} model (closed form / Monte Carlo, %)\n",
            model.name()
        );
        let mut header = vec!["f".to_string()];
        header.extend(snrs.iter().map(|s| format!("{s:.1} dB")));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = MarkdownTable::new(&header);
        for f in 1..=12 {
            let mut row = vec![f.to_string()];
            for snr in snrs {
                row.push(cell(cells, model, f, snr).map_or("–".into(), |c| {
                    format!("{:.2} / {:.2}", c.closed_form_percent, c.measured_percent())
                }));
            }
            t.push(row);
        }
        md.push_str(&t.render());
        if let Some(z) = largest_z(cells, model) {
            let _ = writeln!(
                md,
                "\nMonte Carlo against the closed form: largest difference {z:.1} standard \
                 errors."
            );
        }
    }
    md.push_str(
        "\nThe paper model's C_f = P^(r+1) · Σ_{i<f} (1 − P)^i is not the loss of f independent \
         fragments: it tends to P^r (49.95 % at 1 dB) where independent fragments tend to \
         100 %, so it understates the loss of long datagrams. With one frame (f = 1) all \
         three readings of P agree; the rayleigh model derives its own P from the SNR and the \
         frame length and loses far less at 1 dB and a little more at 2.5 dB than the \
         paper's P.\n",
    );
}

fn goodput_section(outcome: &Outcome, md: &mut String) {
    let s = &outcome.sweep;
    let points = &outcome.points;
    let _ = writeln!(
        md,
        "\n## Goodput (Fig 10), bytes/s\n\nMean over the seeds of the payload bytes received in \
         {} consecutive transactions divided by the time they took; in brackets the model's \
         closed form (`expected.rs`: per-attempt success from the two datagrams' losses, fixed \
         {timeout} s doubling timeouts, air time on the standard's timeline; single-exchange \
         transfers only). The closed form is a ratio of expectations (all bytes over all \
         time), which the per-curve table compares with the pooled simulated goodput; the \
         mean of the runs' own goodputs shown here lies above it where a few {timeout} s \
         timeouts dominate some runs' time (small payloads at 2.5 dB). f is the fragment count \
         of the response datagram.\n",
        outcome.params.transactions,
        timeout = outcome.params.ack_timeout().as_secs_f64(),
    );
    let mut header = vec!["payload B".to_string(), "f".to_string()];
    for &snr in &s.snrs_db {
        for m in &s.models {
            header.push(format!("{snr:.1} dB {}", m.name()));
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = MarkdownTable::new(&header);
    for &payload in &s.payloads {
        let f = points
            .iter()
            .filter(|p| p.payload == payload)
            .map(|p| p.fragments)
            .max()
            .unwrap_or(0);
        let mut row = vec![payload.to_string(), f.to_string()];
        for &snr in &s.snrs_db {
            for &m in &s.models {
                row.push(find(points, m, snr, payload).map_or("–".into(), |p| {
                    match p.goodput_closed_form {
                        Some(c) => format!("{:.0} ({c:.0})", p.goodput_mean),
                        None => format!("{:.0}", p.goodput_mean),
                    }
                }));
            }
        }
        t.push(row);
    }
    md.push_str(&t.render());
    let _ = writeln!(md, "\n### Per curve\n");
    let mut t = MarkdownTable::new(&[
        "model",
        "SNR dB",
        "mean goodput over payloads B/s",
        "goodput at the largest payload B/s",
        "simulated (pooled) / closed form B/s",
        "failed transactions",
        "CoAP retransmissions per transaction",
    ]);
    let largest = s.payloads.iter().copied().max().unwrap_or(0);
    for &m in &s.models {
        for &snr in &s.snrs_db {
            let curve: Vec<&GoodputPoint> = points
                .iter()
                .filter(|p| p.model == m && (p.snr_db - snr).abs() < 1e-9)
                .collect();
            let transactions: u64 = curve.iter().map(|p| p.transactions).sum();
            let retx: f64 = curve
                .iter()
                .map(|p| p.coap_retransmissions_per_transaction * p.transactions as f64)
                .sum();
            t.push(vec![
                m.name().to_string(),
                format!("{snr:.1}"),
                curve_mean(points, m, snr).map_or("–".into(), |g| format!("{g:.0}")),
                find(points, m, snr, largest)
                    .map_or("–".into(), |p| format!("{:.0}", p.goodput_mean)),
                curve_against_closed_form(points, m, snr)
                    .map_or("–".into(), |(sim, cf)| format!("{sim:.0} / {cf:.0}")),
                format!(
                    "{} of {}",
                    curve.iter().map(|p| p.failed).sum::<u64>(),
                    transactions
                ),
                if transactions == 0 {
                    "–".into()
                } else {
                    format!("{:.3}", retx / transactions as f64)
                },
            ]);
        }
    }
    md.push_str(&t.render());
}

/// Whether `model`'s mean goodput rises at every step up in SNR.
pub fn rises_with_snr(points: &[GoodputPoint], snrs: &[f64], model: ErrorModel) -> bool {
    let mut sorted = snrs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let means: Vec<f64> = sorted
        .iter()
        .filter_map(|&s| curve_mean(points, model, s))
        .collect();
    means.len() == sorted.len() && means.windows(2).all(|w| w[0] < w[1])
}

fn conclusions(outcome: &Outcome, md: &mut String) {
    let s = &outcome.sweep;
    let points = &outcome.points;
    let _ = writeln!(
        md,
        "\n## Against the paper\n\nPaper (Fig 10, plots only): {}\n",
        paper::FIG_10_CLAIM
    );
    for &m in &s.models {
        let verdict = if rises_with_snr(points, &s.snrs_db, m) {
            "rises at every step up in SNR, as the paper's does"
        } else {
            "does not rise at every step up in SNR"
        };
        let smallest = s.payloads.iter().copied().min().unwrap_or(0);
        let largest = s.payloads.iter().copied().max().unwrap_or(0);
        let ends: Vec<String> = s
            .snrs_db
            .iter()
            .filter_map(|&snr| {
                let a = find(points, m, snr, smallest)?;
                let b = find(points, m, snr, largest)?;
                Some(format!(
                    "{snr:.1} dB: {:.0} → {:.0} B/s",
                    a.goodput_mean, b.goodput_mean
                ))
            })
            .collect();
        let _ = writeln!(
            md,
            "- {} model: the mean goodput {verdict}; from {smallest} B to {largest} B: {}.",
            m.name(),
            ends.join(", ")
        );
    }
    let worst = s
        .models
        .iter()
        .flat_map(|&m| s.snrs_db.iter().map(move |&snr| (m, snr)))
        .filter_map(|(m, snr)| {
            let (sim, cf) = curve_against_closed_form(points, m, snr)?;
            (cf > 0.0).then(|| (100.0 * (sim / cf - 1.0)).abs())
        })
        .fold(None, |w: Option<f64>, d| Some(w.map_or(d, |w| w.max(d))));
    if let Some(worst) = worst {
        let _ = writeln!(
            md,
            "- Simulated (pooled) against closed-form goodput, per curve: within \
             {worst:.0} % everywhere. The difference is sampling noise of {} seeds that share their \
             random sequences across payloads (with 100 seeds the curves come within a few \
             percent), so the curves are what the fixed doubling timeouts, the air time and \
             each error model imply.",
            s.seeds
        );
    }
    let _ = write!(
        md,
        "\n### Where and why Covey's curves differ from Fig 10\n\n\
         - **Absolute level.** The paper's goodput includes TinyOS packet processing on \
         TelosB-class motes (its Figs 6–7: latency grows with payload mostly from processing \
         and Blip's fragment handling); Covey's nodes answer in zero time, so a clean \
         transaction lasts only its air time (CSMA/CA, frames, ACKs, interframe spaces). \
         Where errors are rare (2.5 dB) Covey's goodput should therefore lie above the \
         motes', the more so the larger the payload; Fig 10 is published only as plots, so \
         this cannot be checked number by number, and the comparison here is of shape \
         (growth with SNR and payload), not of values.\n\
         - **Timeout-bound at low SNR.** Every lost message costs at least the fixed {} s \
         initial timeout, doubling per retransmission, against a few to a few tens of \
         milliseconds of air time. At 1 dB the goodput is set almost entirely by the timeouts, so \
         a transaction's time hardly depends on its air time: under the paper model, whose \
         loss saturates at P^r ≈ 50 % beyond a few fragments, goodput then grows almost in \
         proportion to the payload; under the physical models, which lose long datagrams \
         nearly always, it falls as the payload grows.\n\
         - **Paper model vs radio losses.** Under the paper model losses are whole datagrams \
         at the receiver's UDP layer and the radio never retries; under the independent and \
         rayleigh models the MAC retries each fragment (adding air time) and a long datagram \
         is lost far more often than C_f says (the tables above), so their goodput falls \
         below the paper model's at large payloads, and at low SNR it falls as the payload \
         grows: the paper's finding that goodput grows with the payload holds in Covey only \
         for its own error model (and for the independent model at 2.5 dB up to a few \
         fragments).\n\
         - **Up to 1200 bytes in one datagram**, as TinyCoAP: Covey's server is configured \
         (`Config::single_message_payload`) to send every payload of the sweep whole, in up \
         to 12 fragments, where an RFC 7959 default would go block-wise above 1024 B with two \
         exchanges to lose.\n\
         - **The rayleigh model** takes nothing from the paper: its P for a full frame is \
         0.498 / 0.460 / 0.422 / 0.387 at 1 / 1.5 / 2 / 2.5 dB (paper 0.79 / 0.64 / 0.48 / \
         0.33) and shorter frames fare better, so its goodput depends less on the SNR than \
         the paper's; the paper's SNR is defined and measured its own way.\n",
        outcome.params.ack_timeout().as_secs_f64(),
    );
}
