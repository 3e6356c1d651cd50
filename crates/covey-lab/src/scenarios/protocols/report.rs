//! The protocols report: CSV of every trial, SVG plots (latency CDF at the low-quality point;
//! latency, loss and bytes along each sweep), and a Markdown page that sets Covey's numbers
//! beside the paper's and says where each protocol wins. Every number on the page is a
//! point's median across its trials ([`PointSummary`]).

use std::fmt::Write as _;

use serde::Serialize;

use super::condition::{Axis, Condition};
use super::paper;
use super::results::{PointSummary, TrialRow};
use super::{Outcome, NAME};
use crate::report::folder::ReportFolder;
use crate::report::markdown::MarkdownTable;
use crate::report::rows::Plain;
use crate::report::svg::{AxisKind, LineChart, Series};
use crate::stats::Estimate;
use crate::LabError;

/// Writes the CSV and SVG files of `outcome` into `folder` and returns the page.
pub fn write(outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
    if !outcome.rows.is_empty() {
        folder.rows("trials", &trial_rows(outcome))?;
    }
    let mut plots = Vec::new();
    if let Some(chart) = latency_cdf(outcome) {
        folder.svg(Some("low-quality-latency"), &chart)?;
        plots.push((
            format!("{NAME}-low-quality-latency.svg"),
            Some(
                "The paper gives no latency distribution, only DDS's and MQTT's mean latency \
                 (marked on the next plot), so this plot shows no paper points."
                    .to_string(),
            ),
        ));
    }
    let (chart, paper_points) = tradeoff(outcome);
    folder.svg_with_paper(Some("low-quality-tradeoff"), &chart, &paper_points)?;
    plots.push((format!("{NAME}-low-quality-tradeoff.svg"), None));
    for (axis, suffix, x_label) in [
        (Axis::Loss, "loss", "network loss (%)"),
        (Axis::Latency, "latency", "one-way network latency (ms)"),
        (Axis::Bandwidth, "bandwidth", "bandwidth cap (kB/s)"),
    ] {
        let charts = [
            ("latency", "median latency (ms)", latency_ms as Field),
            ("lost", "telemetry lost (%)", |s: &PointSummary| s.loss_pct),
            ("bytes", "bytes on the wire (kB)", |s: &PointSummary| {
                s.wire_bytes.map(|e| scaled(e, |v| v / 1000.0))
            }),
        ];
        for (what, y_label, metric) in charts {
            if let Some(chart) = axis_chart(outcome, axis, x_label, y_label, metric) {
                folder.svg(Some(&format!("{suffix}-{what}")), &chart)?;
                plots.push((format!("{NAME}-{suffix}-{what}.svg"), None));
            }
        }
    }
    if plots.len() > 2 {
        if let Some(last) = plots.last_mut() {
            last.1 = Some(
                "The paper publishes its sweeps (Figs 6–11) only as plots and gives no numbers \
                 for them, so the sweep plots show no paper points."
                    .to_string(),
            );
        }
    }
    Ok(crate::report::with_plots(&markdown(outcome), &plots))
}

/// A point's metric across its trials, in the unit the page shows.
type Field = fn(&PointSummary) -> Option<Estimate>;

/// `e` with `f` applied to the value and both bounds.
fn scaled(e: Estimate, f: impl Fn(f64) -> f64) -> Estimate {
    Estimate {
        value: f(e.value),
        low: f(e.low),
        high: f(e.high),
    }
}

fn ms(e: Estimate) -> Estimate {
    scaled(e, |v| v * 1000.0)
}

/// The median latency, ms.
fn latency_ms(s: &PointSummary) -> Option<Estimate> {
    s.latency_median_s.map(ms)
}

fn cell(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "–".into()
    }
}

/// An estimate's cell, with its interval in brackets when `with_interval`; "–" when absent.
fn estimate_cell(e: Option<Estimate>, decimals: usize, with_interval: bool) -> String {
    e.map_or("–".into(), |e| {
        if with_interval {
            format!(
                "{} [{}–{}]",
                cell(e.value, decimals),
                cell(e.low, decimals),
                cell(e.high, decimals)
            )
        } else {
            cell(e.value, decimals)
        }
    })
}

/// A float with `D` decimals, or `–` when it is not a number, as the CSV has always shown it.
#[derive(Debug, Clone, Copy)]
struct Cell<const D: usize>(f64);

impl<const D: usize> Serialize for Cell<D> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.collect_str(&format_args!("{:.*}", D, self.0))
        } else {
            s.serialize_str("–")
        }
    }
}

/// One trial, as `protocols-trials.csv` lists it (empty metric cells for a trial that did
/// not run, with the reason under `error`).
#[derive(Serialize)]
struct TrialCsvRow {
    axis: String,
    loss: Plain,
    delay_s: Plain,
    rate_bytes_per_s: Option<Plain>,
    tbf_burst_bytes: Option<u64>,
    tbf_latency_ms: Option<u64>,
    protocol: String,
    repetition: usize,
    sent: Option<u64>,
    received: Option<u64>,
    loss_pct: Option<Cell<2>>,
    latency_mean_s: Option<Cell<4>>,
    latency_median_s: Option<Cell<4>>,
    latency_p95_s: Option<Cell<4>>,
    wire_bytes: Option<u64>,
    wire_packets: Option<u64>,
    data_bytes: Option<u64>,
    repeated_messages: Option<u64>,
    overhead_per_100: Option<Cell<1>>,
    error: String,
    setup_failures: usize,
}

fn trial_rows(outcome: &Outcome) -> Vec<TrialCsvRow> {
    outcome
        .rows
        .iter()
        .map(|r| {
            let l = r.condition.link;
            let m = r.metrics.as_ref();
            TrialCsvRow {
                axis: format!("{:?}", r.condition.axis).to_lowercase(),
                loss: Plain(l.loss),
                delay_s: Plain(l.delay_s),
                rate_bytes_per_s: l.rate_bytes_per_s.map(Plain),
                // An uncapped link has no shaper.
                tbf_burst_bytes: r
                    .tbf
                    .filter(|_| l.rate_bytes_per_s.is_some())
                    .map(|t| t.burst_bytes),
                tbf_latency_ms: r
                    .tbf
                    .filter(|_| l.rate_bytes_per_s.is_some())
                    .map(|t| t.latency_ms),
                protocol: r.protocol.clone(),
                repetition: r.repetition,
                sent: m.map(|m| m.sent),
                received: m.map(|m| m.received),
                loss_pct: m.map(|m| Cell(m.loss_pct)),
                latency_mean_s: m.map(|m| Cell(m.latency_mean_s)),
                latency_median_s: m.map(|m| Cell(m.latency_median_s)),
                latency_p95_s: m.map(|m| Cell(m.latency_p95_s)),
                wire_bytes: m.map(|m| m.wire_bytes),
                wire_packets: m.map(|m| m.wire_packets),
                data_bytes: m.map(|m| m.data_bytes),
                repeated_messages: m.map(|m| m.repeated_messages),
                overhead_per_100: m.map(|m| Cell(m.overhead_per_100)),
                error: match m {
                    Some(_) => String::new(),
                    None => r.error.clone().unwrap_or_default(),
                },
                setup_failures: r.setup_failures.len(),
            }
        })
        .collect()
}

/// The protocols in the order they ran.
fn protocols(outcome: &Outcome) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &outcome.rows {
        if !names.contains(&r.protocol) {
            names.push(r.protocol.clone());
        }
    }
    names
}

/// The summary of `protocol` at `condition`.
fn summary<'a>(
    outcome: &'a Outcome,
    condition: &Condition,
    protocol: &str,
) -> Option<&'a PointSummary> {
    outcome
        .points
        .iter()
        .find(|s| s.condition == *condition && s.protocol == protocol)
}

/// The median across trials of `field` for `protocol` at `condition`.
fn median_at(
    outcome: &Outcome,
    condition: &Condition,
    protocol: &str,
    field: Field,
) -> Option<f64> {
    summary(outcome, condition, protocol)
        .and_then(field)
        .map(|e| e.value)
}

fn conditions_on(outcome: &Outcome, axis: Axis) -> Vec<Condition> {
    let mut on: Vec<Condition> = outcome
        .conditions
        .iter()
        .filter(|c| c.axis == axis || (c.axis == Axis::Loss && c.link.loss == 0.0))
        .copied()
        .collect();
    if axis == Axis::Bandwidth {
        // Widest cap first; the uncapped point has no place on this axis.
        on.retain(|c| c.axis == Axis::Bandwidth);
    }
    on
}

fn axis_chart(
    outcome: &Outcome,
    axis: Axis,
    x_label: &str,
    y_label: &str,
    metric: Field,
) -> Option<LineChart> {
    let on = conditions_on(outcome, axis);
    if on.len() < 2 {
        return None;
    }
    let series = protocols(outcome)
        .into_iter()
        .map(|p| {
            let mut points: Vec<(f64, f64)> = on
                .iter()
                .filter_map(|c| Some((c.x(), median_at(outcome, c, &p, metric)?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name: p, points }
        })
        .collect();
    Some(LineChart {
        title: format!("{y_label} against {x_label}"),
        x_label: x_label.into(),
        x_kind: AxisKind::Quantity,
        y_label: y_label.into(),
        series,
    })
}

fn low_quality(outcome: &Outcome) -> Option<Condition> {
    outcome
        .conditions
        .iter()
        .find(|c| c.axis == Axis::LowQuality)
        .copied()
}

/// The share of the messages sent that arrived within each latency, every trial of a
/// protocol at the low-quality point pooled.
fn latency_cdf(outcome: &Outcome) -> Option<LineChart> {
    let lq = low_quality(outcome)?;
    let mut series = Vec::new();
    for p in protocols(outcome) {
        let main = outcome.tbf_settings.first().copied().flatten();
        let measured: Vec<&TrialRow> = outcome
            .rows
            .iter()
            .filter(|r| {
                r.condition == lq && r.protocol == p && r.metrics.is_some() && r.tbf == main
            })
            .collect();
        if measured.is_empty() {
            continue;
        }
        let sent: u64 = measured
            .iter()
            .filter_map(|r| r.metrics.as_ref())
            .map(|m| m.sent)
            .sum();
        let sent = sent.max(1) as f64;
        let mut l: Vec<f64> = measured
            .iter()
            .flat_map(|r| r.latencies_s.iter().copied())
            .collect();
        l.sort_by(f64::total_cmp);
        let points = l
            .iter()
            .enumerate()
            .map(|(i, v)| (v * 1000.0, 100.0 * (i + 1) as f64 / sent))
            .collect();
        series.push(Series { name: p, points });
    }
    (!series.is_empty()).then(|| LineChart {
        title: "Telemetry delivered within a latency, low-quality network".into(),
        x_label: "gateway-to-caregiver latency (ms)".into(),
        x_kind: AxisKind::Quantity,
        y_label: "messages delivered (% of sent)".into(),
        series,
    })
}

/// Latency against control overhead at the low-quality point: each protocol one point, and
/// the paper's DDS and MQTT as markers in the colour of the protocol they stand for (the
/// paper's alone when the sweep did not run).
fn tradeoff(outcome: &Outcome) -> (LineChart, Vec<Series>) {
    let mut series = Vec::new();
    if let Some(lq) = low_quality(outcome) {
        for p in protocols(outcome) {
            let overhead = median_at(outcome, &lq, &p, |s| s.overhead_per_100);
            let latency = median_at(outcome, &lq, &p, |s| s.latency_mean_s.map(ms));
            if let (Some(x), Some(y)) = (overhead, latency) {
                series.push(Series {
                    name: p,
                    points: vec![(x, y)],
                });
            }
        }
    }
    let published = [
        (
            "DDS",
            "DDS reliable",
            paper::DDS_OVERHEAD_PER_100,
            paper::DDS_LATENCY_S,
        ),
        (
            "MQTT",
            "MQTT",
            paper::MQTT_OVERHEAD_PER_100,
            paper::MQTT_LATENCY_S,
        ),
    ];
    let mut paper_series: Vec<Series> = Vec::new();
    for (i, (name, ours, overhead, latency)) in published.into_iter().enumerate() {
        // Beside the first of our lines it stands for, or in a colour of its own after ours.
        let index = series
            .iter()
            .position(|s| s.name.starts_with(ours))
            .unwrap_or(series.len() + i);
        if paper_series.len() <= index {
            paper_series.resize(
                index + 1,
                Series {
                    name: String::new(),
                    points: Vec::new(),
                },
            );
        }
        paper_series[index] = Series {
            name: format!("paper, {name} (004 Figs 12–13)"),
            points: vec![(overhead, latency * 1000.0)],
        };
    }
    let chart = LineChart {
        title: "Latency against overhead, low-quality network".into(),
        x_label: "control bytes per 100 bytes of data".into(),
        x_kind: AxisKind::Quantity,
        y_label: "mean latency (ms)".into(),
        series,
    };
    (chart, paper_series)
}

fn paper_beside(protocol: &str) -> String {
    if protocol == "DDS reliable" || protocol == "DDS reliable (TCP)" {
        format!(
            "{:.0} ms, {:.0} B{}",
            paper::DDS_LATENCY_S * 1000.0,
            paper::DDS_OVERHEAD_PER_100,
            if protocol == "DDS reliable" {
                " (004's OpenDDS ran over TCP)"
            } else {
                " (TCP, as 004's OpenDDS)"
            }
        )
    } else if protocol.starts_with("MQTT") {
        format!(
            "{:.0} ms, {:.0} B (QoS not stated)",
            paper::MQTT_LATENCY_S * 1000.0,
            paper::MQTT_OVERHEAD_PER_100
        )
    } else {
        "–".into()
    }
}

/// The metrics of every protocol at `condition`, each the median across its trials; with
/// more than one trial, the median latency and the loss give their interval in brackets; with
/// the paper's numbers beside them at the low-quality point, the only one the paper gives
/// numbers for.
fn condition_table(outcome: &Outcome, condition: &Condition) -> MarkdownTable {
    let with_paper = condition.axis == Axis::LowQuality;
    let spread = outcome.trials_per_point > 1;
    let mut columns = vec![
        "protocol",
        "mean latency ms",
        "median ms",
        "p95 ms",
        "lost %",
        "bytes on the wire",
        "data B",
        "overhead per 100 B",
    ];
    if with_paper {
        columns.push("paper (latency, overhead)");
    }
    let mut t = MarkdownTable::new(&columns);
    for p in protocols(outcome) {
        let s = summary(outcome, condition, &p);
        let m = |f: Field, d: usize, with_interval: bool| {
            estimate_cell(s.and_then(f), d, with_interval && spread)
        };
        let mut row = vec![
            p.clone(),
            m(|s| s.latency_mean_s.map(ms), 0, false),
            m(latency_ms, 0, true),
            m(|s| s.latency_p95_s.map(ms), 0, false),
            m(|s| s.loss_pct, 1, true),
            m(|s| s.wire_bytes, 0, false),
            m(|s| s.data_bytes, 0, false),
            m(|s| s.overhead_per_100, 0, false),
        ];
        if with_paper {
            row.push(paper_beside(&p));
        }
        t.push(row);
    }
    t
}

/// The protocol in `pool` with the lowest median `metric` at `condition`, and its value.
fn best_at(
    outcome: &Outcome,
    condition: &Condition,
    metric: Field,
    pool: &[String],
) -> Option<(String, f64)> {
    pool.iter()
        .filter_map(|p| Some((p.clone(), median_at(outcome, condition, p, metric)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The protocols that delivered every message at `condition`, in every trial.
fn lossless_at(outcome: &Outcome, condition: &Condition) -> Vec<String> {
    protocols(outcome)
        .into_iter()
        .filter(|p| summary(outcome, condition, p).is_some_and(|s| s.lost_nothing))
        .collect()
}

/// Bytes on the wire per message the caregiver got: a protocol that carried fewer messages
/// does not win on bytes for that (none delivered: not a number, left out).
fn bytes_per_delivered(s: &PointSummary) -> Option<Estimate> {
    s.bytes_per_delivered
}

/// Who wins what at `condition`: the lowest latency among protocols that lost nothing, the
/// fewest bytes, the least overhead, and who lost nothing.
pub fn winners(outcome: &Outcome, condition: &Condition) -> Vec<String> {
    let all = protocols(outcome);
    let lossless = lossless_at(outcome, condition);
    let mut out = Vec::new();
    if let Some((p, v)) = best_at(outcome, condition, latency_ms, &lossless) {
        out.push(format!(
            "lowest median latency with nothing lost: {p} ({v:.0} ms)"
        ));
    }
    if let Some((p, v)) = best_at(outcome, condition, latency_ms, &all) {
        out.push(format!("lowest median latency overall: {p} ({v:.0} ms)"));
    }
    if let Some((p, v)) = best_at(outcome, condition, bytes_per_delivered, &all) {
        out.push(format!(
            "fewest bytes on the wire per delivered message: {p} ({v:.0} B)"
        ));
    }
    if let Some((p, v)) = best_at(outcome, condition, |s| s.overhead_per_100, &all) {
        out.push(format!("least overhead per 100 B of data: {p} ({v:.0} B)"));
    }
    out.push(format!(
        "lost nothing: {}",
        if lossless.is_empty() {
            "none".into()
        } else {
            lossless.join(", ")
        }
    ));
    out
}

/// Each protocol's record over every condition: where it delivered everything, where it was
/// the fastest of those that did, and where it used the fewest bytes.
pub fn wins_by_protocol(outcome: &Outcome) -> Vec<String> {
    let all = protocols(outcome);
    let mut conditions = outcome.conditions.clone();
    conditions.dedup();
    let names = |cs: &[&Condition]| {
        if cs.is_empty() {
            "nowhere".to_owned()
        } else {
            cs.iter().map(|c| c.label()).collect::<Vec<_>>().join("; ")
        }
    };
    all.iter()
        .map(|p| {
            let mut lossless = Vec::new();
            let mut fastest = Vec::new();
            let mut fewest = Vec::new();
            for c in &conditions {
                let pool = lossless_at(outcome, c);
                if pool.contains(p) {
                    lossless.push(c);
                }
                if best_at(outcome, c, latency_ms, &pool).is_some_and(|(b, _)| &b == p) {
                    fastest.push(c);
                }
                let bytes = best_at(outcome, c, bytes_per_delivered, &all);
                if bytes.is_some_and(|(b, _)| &b == p) {
                    fewest.push(c);
                }
            }
            format!(
                "**{p}** lost nothing at {} of {} conditions; fastest of those that lost \
                 nothing at: {}; fewest bytes per delivered message at: {}.",
                lossless.len(),
                conditions.len(),
                names(&fastest),
                names(&fewest)
            )
        })
        .collect()
}

/// Which trial `row` was, when a point has more than one.
fn trial_of(outcome: &Outcome, row: &TrialRow) -> String {
    if outcome.trials_per_point > 1 {
        format!(", trial {}", row.repetition + 1)
    } else {
        String::new()
    }
}

/// `, tbf burst … latency …` when the run swept tbf's settings and the trial's link was
/// capped.
fn setting_of(outcome: &Outcome, row: &TrialRow) -> String {
    match row.tbf {
        Some(t)
            if outcome.tbf_settings.len() > 1 && row.condition.link.rate_bytes_per_s.is_some() =>
        {
            format!(", tbf {}", t.label())
        }
        _ => String::new(),
    }
}

/// The section on tbf's two free parameters: why the lab's values, and, when the run swept
/// them (`--set tbf_burst=… tbf_latency_ms=…`), every protocol at every capped condition
/// under each setting.
fn tbf_section(outcome: &Outcome) -> String {
    let mut md = String::new();
    let Some(main) = outcome.tbf_settings.first().copied().flatten() else {
        return md;
    };
    let _ = writeln!(
        md,
        "## tbf's burst and limit (not in 004)\n\n\
         004 capped bandwidth with tc's tbf (its ref. [14] is the tc-tbf(8) man page) but gives \
         neither the bucket (`burst`) nor the queue (`limit`, or `latency`, from which tc \
         derives `limit = rate × latency + burst`). None of the values here is fitted to \
         004's results; they are tc-tbf(8)'s rules and common practice:\n\n\
         - **burst.** tc-tbf(8): the bucket must hold at least `rate / HZ` bytes (63 B at \
         6.25 kB/s with HZ = 100), and a packet larger than the bucket is never sent; the \
         kernel warns below the device MTU. 1600 B is the smallest practical bucket (one \
         1514-byte Ethernet frame), 4096 B (`32kbit`) is the value of the common tbf \
         recipes, 10 kB a generous one.\n\
         - **limit / latency.** tc-tbf(8) takes either; its example uses `latency 70ms`, the \
         recipes 50 ms, and 200 ms to 1 s keep more of a TCP burst.\n\n\
         The lab's default is burst {} B with latency {} ms ({} B of queue at 6.25 kB/s): \
         the recipes' values, kept because varying them moved no result beyond the spread \
         between trials (the lines under the table measure that for this run; \
         `docs/lab/tbf.md` has the first sweep). tbf is the default \
         shaper because 004 used it: it spends time only on load the bucket cannot absorb, so \
         a 437-byte message at 4 messages/s crosses a 6.25 kB/s cap without waiting, where \
         the serialiser spent 70 ms per packet per hop and put a floor of about 340 ms under \
         every protocol at the low-quality point. Nothing here depends on the serialiser, and \
         with 15 s of drain no protocol lost telemetry at any setting of the first sweep, the \
         50 ms queue included (`--set shaper=serialiser` still gives the earlier model).\n",
        main.burst_bytes,
        main.latency_ms,
        main.limit_bytes(paper::LOW_QUALITY_RATE)
    );
    if outcome.tbf_sweep.is_empty() {
        let _ = writeln!(
            md,
            "This run used that setting alone; `--set tbf_burst=4096,1600,10000 \
             --set tbf_latency_ms=50,200,1000` runs each other value with the first of the \
             other parameter, and adds a table of every setting here.\n"
        );
        return md;
    }
    let spread = outcome.trials_per_point > 1;
    for condition in outcome
        .conditions
        .iter()
        .filter(|c| c.link.rate_bytes_per_s.is_some())
    {
        let rate = condition.link.rate_bytes_per_s.unwrap_or(0.0);
        let mut t = MarkdownTable::new(&[
            "burst B",
            "latency ms",
            "limit B",
            "protocol",
            "mean latency ms",
            "median ms",
            "p95 ms",
            "lost %",
            "bytes on the wire",
        ]);
        for (setting, points) in &outcome.tbf_sweep {
            for s in points.iter().filter(|s| s.condition == *condition) {
                let m = |e: Option<Estimate>, d: usize, with_interval: bool| {
                    estimate_cell(e, d, with_interval && spread)
                };
                t.push(vec![
                    setting.burst_bytes.to_string(),
                    setting.latency_ms.to_string(),
                    setting.limit_bytes(rate).to_string(),
                    s.protocol.clone(),
                    m(s.latency_mean_s.map(ms), 0, true),
                    m(s.latency_median_s.map(ms), 0, true),
                    m(s.latency_p95_s.map(ms), 0, false),
                    m(s.loss_pct, 1, true),
                    m(s.wire_bytes, 0, false),
                ]);
            }
        }
        let _ =
            writeln!(
            md,
            "### {}\n\nEach setting's trials, the main one first; medians across trials{}.\n\n{}",
            condition.label(),
            if spread { ", the range in brackets" } else { "" },
            t.render()
        );
        for line in sensitivity(outcome, condition) {
            let _ = writeln!(md, "- {line}");
        }
        md.push('\n');
    }
    md
}

/// For each protocol at `condition`: how far its median latency moves across the tbf
/// settings, against how far its trials spread under the main setting.
fn sensitivity(outcome: &Outcome, condition: &Condition) -> Vec<String> {
    let Some(main) = outcome.tbf_settings.first().copied().flatten() else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for p in protocols(outcome) {
        let medians: Vec<f64> = outcome
            .tbf_sweep
            .iter()
            .filter_map(|(_, points)| {
                points
                    .iter()
                    .find(|s| s.condition == *condition && s.protocol == p)
                    .and_then(|s| s.latency_median_s)
                    .map(|e| e.value * 1000.0)
            })
            .collect();
        let trials: Vec<f64> = outcome
            .rows
            .iter()
            .filter(|r| r.condition == *condition && r.protocol == p && r.tbf == Some(main))
            .filter_map(|r| r.metrics.as_ref().map(|m| m.latency_median_s * 1000.0))
            .filter(|v| v.is_finite())
            .collect();
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        };
        if medians.len() < 2 || trials.is_empty() {
            continue;
        }
        let (lo, hi) = range(&medians);
        let (tlo, thi) = range(&trials);
        lines.push(format!(
            "**{p}**: the median latency of the {} settings spans {lo:.0}–{hi:.0} ms ({:.0} ms); \
             the main setting's {} trials alone span {tlo:.0}–{thi:.0} ms ({:.0} ms).",
            medians.len(),
            hi - lo,
            trials.len(),
            thi - tlo
        ));
    }
    lines
}

/// Each of DDS's and MQTT's mean latencies at the low-quality point against 004's, with the
/// difference in per cent.
fn against_paper(outcome: &Outcome, lq: &Condition) -> Vec<String> {
    let mut lines = Vec::new();
    for p in protocols(outcome) {
        let paper_s = if p.starts_with("DDS reliable") {
            paper::DDS_LATENCY_S
        } else if p.starts_with("MQTT") {
            paper::MQTT_LATENCY_S
        } else {
            continue;
        };
        if let Some(mean) = median_at(outcome, lq, &p, |s| s.latency_mean_s.map(ms)) {
            let paper_ms = paper_s * 1000.0;
            lines.push(format!(
                "{p}: mean latency {mean:.0} ms against 004's {paper_ms:.0} ms ({:+.0} %)",
                100.0 * (mean - paper_ms) / paper_ms
            ));
        }
    }
    lines
}

fn markdown(outcome: &Outcome) -> String {
    let mut md = String::new();
    let p = &outcome.params;
    let _ = writeln!(
        md,
        "# protocols — CoAP, MQTT, DDS and JSON/UDP on real stacks\n\n\
         Seed 004's medical telemetry: a gateway sends {}-byte JSON, {} messages/s, through a \
         server to a caregiver; {} messages per trial. Real stacks (covey, Mosquitto with \
         rumqttc, Cyclone DDS, a JSON/UDP broker) in network namespaces joined by the \
         emulator's links (the simulator's link models on real time). CoAP CON and Observe use \
         `{}` congestion control. The gateway starts sending once the chain is up: the \
         caregiver subscribed, and for DDS every endpoint matched at both ends of both \
         topics, since each end matches on its own and a sample written before the far end \
         has matched is dropped there.\n\n\
         Bytes on the wire are the IP bytes of every packet both links carried, set-up, \
         discovery and tear-down included. Data is the JSON of each message once for every \
         link it entered, counted by the emulator's forwarder, which finds each message's \
         sequence number in the packets (a message lost on the first hop never enters the \
         second; a copy of one a link already carried is a repeat). Overhead per 100 B is \
         (bytes on the wire − data) / data × 100: headers, acknowledgements, set-up, \
         discovery, keep-alives and retransmitted copies all count as overhead, so it cannot \
         go below the share of the headers. A message the caregiver has not received {} s \
         after the gateway's last send counts as lost. A trial's median and 95th percentile \
         latency interpolate between the two nearest latencies (the lab's quantile).\n",
        p.size, p.rate_hz, p.messages, p.cc, p.drain_s
    );
    let shaper = match outcome.tbf_settings.first().copied().flatten() {
        None => "a serialiser: every packet is spaced by its size over the cap, as netem's \
                 `rate` does (`--set shaper=tbf` gives 004's tbf)"
            .to_string(),
        Some(t) => format!(
            "tbf, as 004 capped it: a token bucket (tc-tbf(8)) of {} B whose queue holds \
             {} ms at the cap (tc's `latency`; {} B at 6.25 kB/s), netem's loss and delay \
             before it as on one host. A packet within the bucket leaves at line speed and \
             only sustained load is held to the cap. 004 gives neither burst nor limit; \
             `docs/lab/tbf.md` gives the model and its sources, the section on tbf's burst \
             and limit below says why these values, and `--set shaper=serialiser` gives the \
             earlier model",
            t.burst_bytes,
            t.latency_ms,
            t.limit_bytes(paper::LOW_QUALITY_RATE)
        ),
    };
    let _ = writeln!(md, "Capped links hold their rate with {shaper}.\n");
    let k = outcome.trials_per_point;
    let _ = write!(
        md,
        "Each protocol ran {k} trial{} at each condition, one at a time, each on fresh links \
         in fresh namespaces; trial k of every point seeds its links' losses and delays with \
         `splitmix64(seed + k)`.",
        if k == 1 { "" } else { "s" }
    );
    if k > 1 {
        let _ = write!(
            md,
            " The tables give each metric's median across the trials; the median latency and \
             the loss add in brackets the median's distribution-free 95 % interval (with up to \
             ten trials, the range of the trials)."
        );
    }
    md.push_str("\n\n");
    if let Some(reason) = &outcome.skipped {
        let mut t =
            MarkdownTable::new(&["protocol", "paper: latency", "paper: overhead per 100 B"]);
        for (name, latency, overhead) in [
            ("DDS", paper::DDS_LATENCY_S, paper::DDS_OVERHEAD_PER_100),
            ("MQTT", paper::MQTT_LATENCY_S, paper::MQTT_OVERHEAD_PER_100),
        ] {
            t.push(vec![
                name.into(),
                format!("{:.0} ms", latency * 1000.0),
                format!("{overhead:.0} B"),
            ]);
        }
        let _ = writeln!(
            md,
            "**Not run**: {reason}.\n\n## The paper's low-quality network\n\n{}",
            t.render()
        );
        return md;
    }
    let _ = writeln!(md, "## Where each protocol wins\n");
    for line in wins_by_protocol(outcome) {
        let _ = writeln!(md, "- {line}");
    }
    md.push('\n');
    if let Some(lq) = low_quality(outcome) {
        let _ = writeln!(
            md,
            "## The low-quality network (paper's Figs 12 and 13)\n\n{}\n\n{}",
            lq.label(),
            condition_table(outcome, &lq).render()
        );
        for w in winners(outcome, &lq) {
            let _ = writeln!(md, "- {w}");
        }
        for line in against_paper(outcome, &lq) {
            let _ = writeln!(md, "- {line}");
        }
        md.push('\n');
    }
    for (axis, title) in [
        (Axis::Loss, "Loss sweep (paper's Figs 6, 9, 11)"),
        (Axis::Latency, "Latency sweep (paper's Figs 7, 8)"),
        (Axis::Bandwidth, "Bandwidth sweep (paper's Fig 10)"),
    ] {
        let on = conditions_on(outcome, axis);
        if on.len() < 2 {
            continue;
        }
        let _ = writeln!(md, "## {title}\n");
        for c in on {
            let _ = writeln!(
                md,
                "### {}\n\n{}",
                c.label(),
                condition_table(outcome, &c).render()
            );
            for w in winners(outcome, &c) {
                let _ = writeln!(md, "- {w}");
            }
            md.push('\n');
        }
    }
    md.push_str(&tbf_section(outcome));
    let failed: Vec<&TrialRow> = outcome.rows.iter().filter(|r| r.error.is_some()).collect();
    if !failed.is_empty() {
        let _ = writeln!(md, "## Trials that did not run\n");
        for r in failed {
            let _ = writeln!(
                md,
                "- {} at {}{}{}: {}",
                r.protocol,
                r.condition.label(),
                setting_of(outcome, r),
                trial_of(outcome, r),
                r.error.as_deref().unwrap_or_default()
            );
        }
        md.push('\n');
    }
    let retried: Vec<&TrialRow> = outcome
        .rows
        .iter()
        .filter(|r| !r.setup_failures.is_empty())
        .collect();
    if !retried.is_empty() {
        let _ = writeln!(
            md,
            "## Trials started again\n\nA trial whose stacks do not become ready (discovery or \
             connection through the lossy link takes too long) is started again on fresh \
             links, up to {} attempts; these needed more than one:\n",
            super::SETUP_ATTEMPTS
        );
        for r in retried {
            let _ = writeln!(
                md,
                "- {} at {}{}{}: {} failed attempt(s) ({})",
                r.protocol,
                r.condition.label(),
                setting_of(outcome, r),
                trial_of(outcome, r),
                r.setup_failures.len(),
                r.setup_failures.join("; ")
            );
        }
        md.push('\n');
    }
    let _ = writeln!(md, "## The paper's account\n");
    for claim in paper::CLAIMS {
        let _ = writeln!(md, "- {claim}");
    }
    let _ = writeln!(
        md,
        "\n## How this differs from the paper\n\n\
         - The paper's stacks were Californium (CoAP), HiveMQ with Mosquitto clients (MQTT) \
         and OpenDDS on a Raspberry Pi; ours are covey, Mosquitto with rumqttc, and Cyclone \
         DDS (Python binding) on one host. DDS's bytes depend heavily on the implementation's \
         discovery: Cyclone's participant and endpoint discovery is counted in every trial, \
         and weighs more in short trials than in the paper's 10-minute ones.\n\
         - The paper's trials lasted 10 minutes (2400 messages) and were repeated three \
         times; ours send `messages` per trial (`--set messages=2400` and `--runs 3` for the \
         paper's length).\n\
         - Loss is Bernoulli per packet on each link and direction, as NetEM's default; the \
         paper applied NetEM and TBF at the gateway and server, we impair both links in both \
         directions.\n\
         - The paper ran CoAP NON only; CoAP CON and Observe recover losses at the cost of \
         retransmission timeouts (seconds, not TCP's hundreds of milliseconds), which is where \
         they trade latency for delivery. CoAP CON keeps NSTART 1: one exchange in flight \
         per peer, so when the round trip exceeds the 250 ms between messages the relay's \
         CONs queue, and a retransmission holds back every message behind it. The queue \
         takes at most {} requests per peer and refuses the rest. When one exchange loses its \
         transmission and three retransmissions in a row (19 % per round trip at 10 % loss \
         per link: about one exchange in 770, or one trial in four with 200 exchanges), its \
         backed-off retransmissions hold the queue for 14 s or more (from a 2 s RTO; longer \
         once CoCoA's estimate has grown), and telemetry arriving once the queue is full is \
         refused. CON's loss at one point of one run therefore says more about that run's \
         draws than about the loss rate (`--runs 3` runs three trials of each point and \
         gives their median and range). Observe \
         loses telemetry without losing packets for good: RFC 7641 lets a newer notification \
         replace one still being retransmitted, which suits state (the latest reading) more \
         than a stream of samples.\n\
         - Without recovery, a message crosses two links, so CoAP NON and JSON/UDP lose about \
         1 - (1 - p)^2 of the telemetry at loss p per link (19 % at 10 %); the paper reports \
         about the network's rate.\n\
         - **DDS over UDP or TCP.** 004's DDS was OpenDDS with its TCP transport; Cyclone DDS \
         runs RTPS over UDP by default. *DDS reliable (TCP)* (`dds-tcp`) sets Cyclone's \
         `General/Transport` to `tcp`, so discovery and data travel over TCP connections as in \
         004: by transport it is the row to set beside 004's DDS numbers, and the lines under \
         the low-quality table give both rows against them. Over TCP a lost segment holds \
         every later sample until TCP retransmits it (an RTO of 200 ms or more, doubling when \
         the retransmission is lost too), where RTPS over UDP repairs a sample on the reader's \
         NACK and keeps the others moving. The PyPI wheels' library has no TCP transport, so \
         `dds-tcp` runs Cyclone 0.10.2 (Debian's library, binding 0.10.5, \
         `scripts/lab-stacks.sh`) where the UDP rows run 11.0.1: the two rows differ in \
         version as well as transport.\n\
         - **MQTT and Nagle's algorithm.** rumqttc 0.24 has no TCP_NODELAY option, so the \
         gateway's and the caregiver's sockets run Nagle's algorithm, as libmosquitto's \
         clients do unless told otherwise (mosquitto_pub's `--nodelay`). Mosquitto's broker \
         also runs it by default (mosquitto.conf(5) `set_tcp_nodelay false`), but 004's broker \
         was HiveMQ, built on Netty, which sets TCP_NODELAY on every socket by default; so the \
         lab sets it on the broker ({}). With Nagle, a hop keeps at most one segment shorter \
         than the MSS unacknowledged: a message sent while the previous one is unacknowledged \
         waits in the socket for that ACK (about a round trip, 200–450 ms here, against 250 ms \
         between messages), and a lost segment holds everything behind it until it is \
         retransmitted (RTO 0.5–3 s, doubling when the retransmission is lost too). The \
         latencies then fall by 250 ms from message to message as the backlog drains, the \
         saw-tooth of the low-quality CDF's tail.\n\
         - **MQTT QoS 0 against QoS 1.** The likely reason QoS 0 is the slower is the \
         gateway's Nagle: its next publish waits for the ACK of the one before, which at QoS 1 \
         the broker's PUBACK carries at once, while at QoS 0 only the broker's delayed ACK \
         answers (40 ms or more on Linux): a round trip of about 200 ms plus that delay comes \
         close to the 250 ms between messages, so a small disturbance builds a backlog that \
         QoS 1's shorter wait would have absorbed. The lab has not isolated this (rumqttc cannot turn Nagle off). With the \
         broker's Nagle on as well (`--set broker_nodelay=false`) the same happens on the \
         broker-to-caregiver hop, and an earlier single-trial page showed QoS 0 far slower \
         (5.2 s against 2.3 s mean): one seed's draws lost a retransmission twice, a 7.5 s \
         stall, in QoS 0's trial at every tbf setting (`docs/lab/tbf.md` gives the \
         measurements).",
        covey_sim::paper_config().max_queued_per_peer,
        if outcome.params.broker_nodelay {
            "`broker_nodelay=true`, as in this run"
        } else {
            "`broker_nodelay=true` by default; this run left it off"
        },
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::rows::to_csv;
    use crate::scenarios::protocols::condition::Condition;
    use crate::scenarios::protocols::results::{summarise, Metrics};
    use crate::scenarios::protocols::{Params, TbfSetting};

    /// The outcome of `rows` at the low-quality point, `trials` per point.
    fn outcome_of(rows: Vec<TrialRow>, trials: usize) -> Outcome {
        Outcome {
            params: Params::default(),
            trials_per_point: trials,
            conditions: vec![Condition::low_quality()],
            points: summarise(&rows),
            tbf_settings: vec![Some(TbfSetting::DEFAULT)],
            tbf_sweep: Vec::new(),
            rows,
            skipped: None,
        }
    }

    fn outcome_with(setup_failures: Vec<String>, error: Option<String>) -> Outcome {
        outcome_of(
            vec![TrialRow {
                condition: Condition::low_quality(),
                protocol: "DDS reliable".into(),
                reliable: true,
                tbf: Some(TbfSetting::DEFAULT),
                repetition: 0,
                seed: 1,
                metrics: None,
                latencies_s: Vec::new(),
                error,
                setup_failures,
            }],
            1,
        )
    }

    #[test]
    fn trials_started_again_are_listed_on_the_page_and_counted_in_the_csv() {
        let why = "stack: DDS subscriber did not become ready within 30 s".to_string();
        let o = outcome_with(vec![why.clone(), why.clone()], Some("later".into()));
        let md = markdown(&o);
        assert!(md.contains("## Trials started again"), "{md}");
        assert!(md.contains("DDS reliable at "), "{md}");
        assert!(md.contains("2 failed attempt(s)"), "{md}");
        let csv = to_csv(&trial_rows(&o)).unwrap();
        let last = csv.lines().last().unwrap();
        assert!(last.ends_with(",2"), "{csv}");

        let md = markdown(&outcome_with(Vec::new(), Some("later".into())));
        assert!(!md.contains("## Trials started again"), "{md}");
    }

    #[test]
    fn the_page_says_when_a_late_message_counts_as_lost_and_how_con_queues() {
        let mut o = outcome_with(Vec::new(), None);
        o.params.drain_s = 42.0;
        let md = markdown(&o);
        assert!(
            md.contains("has not received 42 s after the gateway's last send counts as lost"),
            "{md}"
        );
        let limit = covey_sim::paper_config().max_queued_per_peer;
        assert!(
            md.contains(&format!("takes at most {limit} requests per peer")),
            "{md}"
        );
    }

    fn measured(protocol: &str, received: u64, wire_bytes: u64) -> TrialRow {
        TrialRow {
            condition: Condition::low_quality(),
            protocol: protocol.into(),
            reliable: false,
            tbf: Some(TbfSetting::DEFAULT),
            repetition: 0,
            seed: 1,
            metrics: Some(Metrics {
                sent: 100,
                received,
                loss_pct: 100.0 - received as f64,
                latency_mean_s: 0.3,
                latency_median_s: 0.3,
                latency_p95_s: 0.4,
                wire_bytes,
                wire_packets: 2 * received,
                data_bytes: 2 * 409 * received,
                repeated_messages: 0,
                overhead_per_100: 10.0,
            }),
            latencies_s: Vec::new(),
            error: None,
            setup_failures: Vec::new(),
        }
    }

    #[test]
    fn fewer_bytes_from_carrying_fewer_messages_do_not_win() {
        // Lossy carried 40 messages in 40 000 B (1 000 B each); whole carried 100 in
        // 90 000 B (900 B each): whole wins on bytes although it sent more of them.
        let o = outcome_of(
            vec![
                measured("lossy", 40, 40_000),
                measured("whole", 100, 90_000),
                measured("nothing", 0, 5_000),
            ],
            1,
        );
        let lines = winners(&o, &Condition::low_quality());
        assert!(
            lines
                .iter()
                .any(|l| l == "fewest bytes on the wire per delivered message: whole (900 B)"),
            "{lines:?}"
        );
    }

    #[test]
    fn the_trials_csv_keeps_its_columns_and_formats() {
        let mut ran = measured("CoAP NON", 90, 12_345);
        if let Some(m) = ran.metrics.as_mut() {
            m.overhead_per_100 = f64::NAN;
        }
        let failed = outcome_with(vec!["a".into()], Some("no broker, sorry".into())).rows;
        let mut o = outcome_of(vec![ran], 1);
        o.rows.extend(failed);
        let csv = to_csv(&trial_rows(&o)).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines,
            [
                "axis,loss,delay_s,rate_bytes_per_s,tbf_burst_bytes,tbf_latency_ms,protocol,\
                 repetition,sent,received,loss_pct,latency_mean_s,latency_median_s,latency_p95_s,wire_bytes,wire_packets,\
                 data_bytes,repeated_messages,overhead_per_100,error,setup_failures",
                "lowquality,0.1,0.1,6250,4096,50,CoAP NON,0,100,90,10.00,0.3000,0.3000,0.4000,12345,\
                 180,73620,0,–,,0",
                "lowquality,0.1,0.1,6250,4096,50,DDS reliable,0,,,,,,,,,,,,\"no broker, sorry\",1",
            ]
        );
    }

    #[test]
    fn with_several_trials_the_tables_give_the_median_and_its_interval() {
        let trial = |k, received, median_s| {
            let mut r = measured("MQTT QoS 1", received, 50_000);
            r.repetition = k;
            if let Some(m) = r.metrics.as_mut() {
                m.latency_median_s = median_s;
            }
            r
        };
        let o = outcome_of(
            vec![trial(0, 100, 0.5), trial(1, 98, 0.7), trial(2, 100, 0.6)],
            3,
        );
        let md = markdown(&o);
        assert!(md.contains("ran 3 trials at each condition"), "{md}");
        assert!(
            md.contains("| MQTT QoS 1 | 300 | 600 [500–700] | 400 | 0.0 [0.0–2.0] |"),
            "{md}"
        );
        // One trial lost two messages: MQTT did not lose nothing in every trial.
        assert!(md.contains("lost nothing: none"), "{md}");
        let one = outcome_of(vec![trial(0, 100, 0.5)], 1);
        let md = markdown(&one);
        assert!(
            md.contains("| MQTT QoS 1 | 300 | 500 | 400 | 0.0 |"),
            "{md}"
        );
        assert!(md.contains("ran 1 trial at each condition"), "{md}");
    }

    #[test]
    fn a_tbf_sweep_adds_a_table_of_every_setting_and_how_far_each_moves() {
        let other = TbfSetting {
            burst_bytes: 1600,
            latency_ms: 1000,
        };
        let trial = |k, tbf, median_s| {
            let mut r = measured("DDS reliable (TCP)", 100, 50_000);
            r.repetition = k;
            r.tbf = Some(tbf);
            if let Some(m) = r.metrics.as_mut() {
                m.latency_median_s = median_s;
            }
            r
        };
        let main_rows = vec![
            trial(0, TbfSetting::DEFAULT, 0.20),
            trial(1, TbfSetting::DEFAULT, 0.26),
        ];
        let other_rows = vec![trial(0, other, 0.25), trial(1, other, 0.27)];
        let mut o = outcome_of(main_rows.clone(), 2);
        o.rows.extend(other_rows.clone());
        o.tbf_settings = vec![Some(TbfSetting::DEFAULT), Some(other)];
        o.tbf_sweep = vec![
            (TbfSetting::DEFAULT, summarise(&main_rows)),
            (other, summarise(&other_rows)),
        ];
        let md = markdown(&o);
        assert!(md.contains("## tbf's burst and limit (not in 004)"), "{md}");
        assert!(
            md.contains("burst 4096 B with latency 50 ms (4408 B of queue"),
            "{md}"
        );
        // limit = 6250 B/s × 1 s + 1600 B.
        assert!(
            md.contains(
                "| 1600 | 1000 | 7850 | DDS reliable (TCP) | 300 [300–300] | 260 [250–270] |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "**DDS reliable (TCP)**: the median latency of the 2 settings spans 230–260 ms \
                 (30 ms); the main setting's 2 trials alone span 200–260 ms (60 ms)."
            ),
            "{md}"
        );
        // 004 compared with the TCP variant; mean 300 ms against 234 ms.
        assert!(
            md.contains("DDS reliable (TCP): mean latency 300 ms against 004's 234 ms (+28 %)"),
            "{md}"
        );
        assert!(md.contains("(TCP, as 004's OpenDDS)"), "{md}");
        // A run of one setting says how to sweep.
        let md = markdown(&outcome_of(main_rows, 2));
        assert!(md.contains("--set tbf_burst=4096,1600,10000"), "{md}");
        assert!(!md.contains("### low quality"), "{md}");
    }

    #[test]
    fn only_a_stack_that_never_became_ready_counts_as_a_set_up_failure() {
        use crate::scenarios::protocols::trial::is_setup_timeout;
        assert!(is_setup_timeout(&LabError::Stack(
            "DDS subscriber did not become ready within 30 s".into()
        )));
        assert!(!is_setup_timeout(&LabError::Stack(
            "DDS needs Cyclone DDS for Python".into()
        )));
        assert!(!is_setup_timeout(&LabError::InvalidOption(
            "did not become ready".into()
        )));
    }
}
