//! The cc-bottleneck report: CSV of every client and of the aggregates, the whole outcome as
//! JSON, completion-time and retransmission charts as SVG, and a Markdown page that sets
//! Covey's numbers beside the paper's and says where they differ.

use std::fmt::Write as _;

use covey_proto::cc::Algorithm;
use covey_proto::stats::TRACKED_ATTEMPTS;
use serde::Serialize;

use super::client::ClientKind;
use super::paper::{self, RETRANSMITTED_SHARE};
use super::results::{Aggregate, ClientResult, RunResult};
use super::{run, Outcome, Params, Workload, NETEM_LIMIT};
use crate::report::folder::ReportFolder;
use crate::report::markdown::MarkdownTable;
use crate::report::rows::Fixed;
use crate::report::svg::{AxisKind, LineChart, Series};
use crate::LabError;

/// Writes the CSV and SVG files of `outcome` into `folder` and returns the page.
pub fn write(outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
    folder.rows("clients", &clients_rows(outcome))?;
    folder.rows("summary", &summary_rows(&outcome.aggregates))?;
    super::retx_report::write_csv(outcome, folder)?;
    let mut plots = Vec::new();
    for (suffix, chart) in charts(outcome) {
        let note = if suffix == "retransmitted" {
            folder.svg_with_paper(Some(suffix), &chart, &paper_retransmitted(outcome))?;
            None
        } else {
            folder.svg(Some(suffix), &chart)?;
            Some(
                "The paper gives no numbers for completion time (its Figs 2a and 2b are plots), so \
                 this plot shows no paper points."
                    .to_string(),
            )
        };
        plots.push((format!("{}-{suffix}.svg", super::NAME), note));
    }
    Ok(crate::report::with_plots(&markdown(outcome), &plots))
}

/// The paper's Table 1 share of CONs retransmitted for the charted workload, one series per
/// algorithm in the chart's order (empty where the paper has no row).
fn paper_retransmitted(outcome: &Outcome) -> Vec<Series> {
    let workload = charted_workload(outcome);
    algorithms(outcome)
        .into_iter()
        .map(|alg| Series {
            name: format!("paper, {alg} (003 Table 1)"),
            points: paper::TABLE_1
                .iter()
                .filter(|r| r.workload == workload.name() && r.algorithm == alg)
                .map(|r| (r.clients as f64, 100.0 * r.retransmitted_share()))
                .collect(),
        })
        .collect()
}

/// The workload the charts show: the sweep's first.
fn charted_workload(outcome: &Outcome) -> Workload {
    outcome
        .sweep
        .workloads
        .first()
        .copied()
        .unwrap_or(Workload::Continuous)
}

// The CSV columns of the engine's retransmission buckets are spelled out below: `after_0` …
// `after_8`, then `after_9_or_more` (the last bucket holds every later attempt).
const _: () = assert!(
    TRACKED_ATTEMPTS == 10,
    "one CSV column per retransmission bucket"
);

/// One client of one run, as `cc-bottleneck-clients.csv` lists it.
#[derive(Serialize)]
struct ClientRow {
    workload: Workload,
    algorithm: &'static str,
    clients: usize,
    seed_index: usize,
    run_seed: u64,
    client: usize,
    client_algorithm: &'static str,
    kind: ClientKind,
    completion_s: Option<Fixed<3>>,
    rto_max_s: Fixed<3>,
    succeeded: u32,
    failed: u32,
    endpoints: u32,
    after_0: u64,
    after_1: u64,
    after_2: u64,
    after_3: u64,
    after_4: u64,
    after_5: u64,
    after_6: u64,
    after_7: u64,
    after_8: u64,
    after_9_or_more: u64,
}

impl ClientRow {
    fn of(run: &RunResult, c: &ClientResult) -> ClientRow {
        let a = c.completed_after;
        ClientRow {
            workload: run.workload,
            algorithm: run.algorithm.name(),
            clients: run.clients,
            seed_index: run.seed_index,
            run_seed: run.run_seed,
            client: c.client,
            client_algorithm: c.algorithm.name(),
            kind: c.kind,
            completion_s: c.completion_s.map(Fixed),
            rto_max_s: Fixed(c.rto_max_s),
            succeeded: c.succeeded,
            failed: c.failed,
            endpoints: c.endpoints,
            after_0: a[0],
            after_1: a[1],
            after_2: a[2],
            after_3: a[3],
            after_4: a[4],
            after_5: a[5],
            after_6: a[6],
            after_7: a[7],
            after_8: a[8],
            after_9_or_more: a[9],
        }
    }
}

fn clients_rows(outcome: &Outcome) -> Vec<ClientRow> {
    outcome
        .runs
        .iter()
        .flat_map(|run| run.results.iter().map(move |c| ClientRow::of(run, c)))
        .collect()
}

/// One class of clients, as `cc-bottleneck-summary.csv` lists it.
#[derive(Serialize)]
struct SummaryRow {
    workload: Workload,
    algorithm: &'static str,
    clients: usize,
    client_algorithm: &'static str,
    runs: usize,
    completion_median_s: Fixed<3>,
    completion_p10_s: Fixed<3>,
    completion_p90_s: Fixed<3>,
    completion_max_s: Fixed<3>,
    rto_max_median_s: Fixed<3>,
    rto_max_max_s: Fixed<3>,
    retransmitted_share: Fixed<4>,
    transmissions_per_exchange: Fixed<3>,
    rtt_mean_s: Fixed<3>,
    failed: u64,
    unfinished_clients: usize,
    after_0: u64,
    after_1: u64,
    after_2: u64,
    after_3: u64,
    after_4: u64,
    after_5: u64,
    after_6: u64,
    after_7: u64,
    after_8: u64,
    after_9_or_more: u64,
}

fn summary_rows(aggregates: &[Aggregate]) -> Vec<SummaryRow> {
    aggregates
        .iter()
        .map(|a| {
            let c = a.completed_after;
            SummaryRow {
                workload: a.workload,
                algorithm: a.run_algorithm,
                clients: a.clients,
                client_algorithm: a.client_algorithm,
                runs: a.runs,
                completion_median_s: Fixed(a.completion_s.median),
                completion_p10_s: Fixed(a.completion_s.p10),
                completion_p90_s: Fixed(a.completion_s.p90),
                completion_max_s: Fixed(a.completion_s.max),
                rto_max_median_s: Fixed(a.rto_max_s.median),
                rto_max_max_s: Fixed(a.rto_max_s.max),
                retransmitted_share: Fixed(a.retransmitted_share),
                transmissions_per_exchange: Fixed(a.transmissions_per_exchange),
                rtt_mean_s: Fixed(a.rtt_mean_s),
                failed: a.failed,
                unfinished_clients: a.unfinished,
                after_0: c[0],
                after_1: c[1],
                after_2: c[2],
                after_3: c[3],
                after_4: c[4],
                after_5: c[5],
                after_6: c[6],
                after_7: c[7],
                after_8: c[8],
                after_9_or_more: c[9],
            }
        })
        .collect()
}

/// The Markdown column names of the retransmission buckets: orig, 1st … 8th, 9th+.
fn after_labels() -> Vec<String> {
    (0..TRACKED_ATTEMPTS)
        .map(|i| {
            let ordinal = match i {
                0 => return "orig".to_string(),
                1 => "1st".to_string(),
                2 => "2nd".to_string(),
                3 => "3rd".to_string(),
                n => format!("{n}th"),
            };
            if i + 1 == TRACKED_ATTEMPTS {
                format!("{ordinal}+")
            } else {
                ordinal
            }
        })
        .collect()
}

/// The aggregate of the clients running the algorithm under test (the whole run outside
/// the competing workload).
fn own<'a>(
    aggregates: &'a [Aggregate],
    workload: Workload,
    algorithm: &str,
    clients: usize,
) -> Option<&'a Aggregate> {
    aggregates.iter().find(|a| {
        a.workload == workload
            && a.run_algorithm == algorithm
            && a.client_algorithm == algorithm
            && a.clients == clients
    })
}

fn algorithms(outcome: &Outcome) -> Vec<&'static str> {
    outcome.sweep.algorithms.iter().map(|a| a.name()).collect()
}

fn charts(outcome: &Outcome) -> Vec<(&'static str, LineChart)> {
    let workload = charted_workload(outcome);
    let line = |f: &dyn Fn(&Aggregate) -> f64| -> Vec<Series> {
        algorithms(outcome)
            .into_iter()
            .map(|alg| Series {
                name: alg.to_string(),
                points: outcome
                    .sweep
                    .clients
                    .iter()
                    .filter_map(|&n| own(&outcome.aggregates, workload, alg, n))
                    .map(|a| (a.clients as f64, f(a)))
                    .collect(),
            })
            .collect()
    };
    vec![
        (
            "completion",
            LineChart {
                title: format!(
                    "Median client completion time, {} workload",
                    workload.name()
                ),
                x_label: "clients".into(),
                x_kind: AxisKind::Count,
                y_label: format!(
                    "completion time of {} exchanges (s)",
                    outcome.params.exchanges
                ),
                series: line(&|a| a.completion_s.median),
            },
        ),
        (
            "retransmitted",
            LineChart {
                title: format!(
                    "CONs that needed a retransmission, {} workload",
                    workload.name()
                ),
                x_label: "clients".into(),
                x_kind: AxisKind::Count,
                y_label: "share of exchanges (%)".into(),
                series: line(&|a| 100.0 * a.retransmitted_share),
            },
        ),
    ]
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// The algorithms at `clients` ordered by median completion time, longest first.
pub fn completion_ranking(
    aggregates: &[Aggregate],
    workload: Workload,
    clients: usize,
) -> Vec<(&'static str, f64)> {
    let mut v: Vec<(&'static str, f64)> = Algorithm::ALL
        .iter()
        .filter_map(|a| own(aggregates, workload, a.name(), clients))
        .map(|a| (a.client_algorithm, a.completion_s.median))
        .collect();
    v.sort_by(|x, y| y.1.total_cmp(&x.1));
    v
}

fn markdown(outcome: &Outcome) -> String {
    let p = &outcome.params;
    let s = &outcome.sweep;
    let aggs = &outcome.aggregates;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# cc-bottleneck: CoAP congestion control behind a bottleneck\n"
    );
    let _ = writeln!(
        md,
        "Reproduces Järvinen, Daniel and Kojo (WF-IoT 2015, seed 003). Bottleneck {} kbit/s, \
         {} ms one way, MTU {} B, headers counted as {}, drop-tail queue {} packets per \
         direction, MAX_RETRANSMIT {}, {} exchanges per client, NSTART 1. Sweep: {} × \
         clients {:?} × workloads {} × {} seed(s), base seed {}; {} runs.\n",
        p.rate / 1000,
        p.delay_ms,
        p.mtu,
        p.header_model().name(),
        p.queue,
        p.max_retransmit,
        p.exchanges,
        algorithms(outcome).join(", "),
        s.clients,
        s.workloads
            .iter()
            .map(|w| w.name())
            .collect::<Vec<_>>()
            .join(", "),
        s.seeds,
        outcome.seed,
        outcome.runs.len(),
    );

    let _ = writeln!(md, "## Share of CONs that needed a retransmission\n");
    let mut header = vec!["workload", "clients"];
    let algs = algorithms(outcome);
    header.extend(algs.iter().copied());
    header.push("paper (all algorithms)");
    let mut t = MarkdownTable::new(&header);
    for &w in &s.workloads {
        for &n in &s.clients {
            let mut row = vec![w.name().to_string(), n.to_string()];
            for alg in &algs {
                row.push(own(aggs, w, alg, n).map_or("–".into(), |a| pct(a.retransmitted_share)));
            }
            row.push(
                RETRANSMITTED_SHARE
                    .iter()
                    .find(|r| r.0 == n)
                    .map_or("–".into(), |r| format!("{:.0}–{:.0} %", r.1, r.2)),
            );
            t.push(row);
        }
    }
    md.push_str(&t.render());

    let tracked = TRACKED_ATTEMPTS - 2;
    let later = if usize::from(p.max_retransmit) <= tracked {
        format!("none while MAX_RETRANSMIT is {}", p.max_retransmit)
    } else {
        format!(
            "up to the {}th here, as MAX_RETRANSMIT is {}",
            p.max_retransmit, p.max_retransmit
        )
    };
    let _ = writeln!(
        md,
        "\n## Frequency of transmissions (Table 1)\n\nShare of exchanges that succeeded on the \
         original transmission and after the i-th retransmission. The paper's Table 1 sums {} \
         repetitions ({} exchanges per client), Covey's rows sum the seeds, so both are \
         given as percentages of the exchanges that ended. The engine counts up to the \
         {tracked}th retransmission separately, as the paper's table does; its last column \
         holds any later ones ({later}; the paper has no such column). Failed exchanges (retry \
         limit reached) are counted apart.\n",
        paper::REPETITIONS,
        paper::REPETITIONS * paper::EXCHANGES_PER_CLIENT,
    );
    let labels = after_labels();
    let mut header = vec!["clients", "workload", "algorithm", "source"];
    header.extend(labels.iter().map(String::as_str));
    header.push("failed");
    let mut t = MarkdownTable::new(&header);
    let share = |x: u64, total: u64| {
        if total == 0 {
            "–".to_string()
        } else {
            format!("{:.2}", 100.0 * x as f64 / total as f64)
        }
    };
    for &n in &s.clients {
        for &w in &s.workloads {
            for alg in &algs {
                let Some(a) = own(aggs, w, alg, n) else {
                    continue;
                };
                let total = a.completed_after.iter().sum::<u64>() + a.failed;
                let mut row = vec![
                    n.to_string(),
                    w.name().to_string(),
                    alg.to_string(),
                    "Covey %".to_string(),
                ];
                row.extend(a.completed_after.iter().map(|&x| share(x, total)));
                row.push(share(a.failed, total));
                t.push(row);
                if let Some(r) = paper::table_1(n, w.name(), alg) {
                    let expected = paper::REPETITIONS * paper::EXCHANGES_PER_CLIENT * n as u64;
                    let mut row = vec![
                        String::new(),
                        String::new(),
                        String::new(),
                        "paper %".to_string(),
                    ];
                    // The paper reports the original and retransmissions 1-8: one column
                    // each, and nothing for the engine's "9th+" bucket.
                    row.extend(
                        (0..TRACKED_ATTEMPTS)
                            .map(|i| r.counts.get(i).map_or("–".into(), |&x| share(x, expected))),
                    );
                    let total: u64 = r.counts.iter().sum();
                    row.push(share(expected.saturating_sub(total), expected));
                    t.push(row);
                }
            }
        }
    }
    md.push_str(&t.render());

    let _ = writeln!(
        md,
        "\n## Client completion time and RTOmax\n\nMedian (10th–90th percentile) of the time \
         a client takes for its {} exchanges, and the median client RTOmax (longest \
         retransmission timeout that expired; 0 when none did).\n",
        p.exchanges
    );
    let mut t = MarkdownTable::new(&[
        "workload",
        "clients",
        "algorithm",
        "clients' algorithm",
        "completion median s",
        "p10–p90 s",
        "RTOmax median s",
        "RTOmax max s",
        "mean time to ACK s",
        "unfinished",
    ]);
    for a in aggs {
        t.push(vec![
            a.workload.name().to_string(),
            a.clients.to_string(),
            a.run_algorithm.to_string(),
            a.client_algorithm.to_string(),
            format!("{:.1}", a.completion_s.median),
            format!("{:.1}–{:.1}", a.completion_s.p10, a.completion_s.p90),
            format!("{:.2}", a.rto_max_s.median),
            format!("{:.2}", a.rto_max_s.max),
            format!("{:.2}", a.rtt_mean_s),
            a.unfinished.to_string(),
        ]);
    }
    md.push_str(&t.render());

    competing(outcome, &mut md);

    let _ = writeln!(md, "\n## Against the paper's conclusions\n");
    let _ = writeln!(md, "Paper: {}\n", paper::COMPLETION_CLAIM);
    for &w in &s.workloads {
        for &n in &s.clients {
            let ranking = completion_ranking(aggs, w, n);
            if ranking.is_empty() {
                continue;
            }
            let order = ranking
                .iter()
                .map(|(a, m)| format!("{a} {m:.0} s"))
                .collect::<Vec<_>>()
                .join(" > ");
            let _ = writeln!(
                md,
                "- {} clients, {}: median completion, longest first: {}.",
                n,
                w.name(),
                order
            );
        }
    }
    let high = s.clients.iter().copied().max().unwrap_or(0);
    let ranking = completion_ranking(aggs, Workload::Continuous, high);
    if let Some((slowest, _)) = ranking.first() {
        let verdict = if *slowest == "default" {
            "Covey agrees: default CoAP is slowest under the highest congestion.".to_string()
        } else {
            format!(
                "Covey differs: under the highest congestion ({high} continuous clients) \
                 `{slowest}` is slowest, not default CoAP."
            )
        };
        let _ = writeln!(md, "\n{verdict}");
    }
    let shares: Vec<(usize, f64, f64)> = s
        .clients
        .iter()
        .filter_map(|&n| {
            let v: Vec<f64> = algs
                .iter()
                .filter_map(|alg| own(aggs, Workload::Continuous, alg, n))
                .map(|a| 100.0 * a.retransmitted_share)
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (!v.is_empty()).then_some((n, lo, hi))
        })
        .collect();
    for (n, lo, hi) in shares {
        let paper = RETRANSMITTED_SHARE.iter().find(|r| r.0 == n);
        let _ = write!(
            md,
            "\n- {n} continuous clients: {lo:.1}–{hi:.1} % of CONs retransmitted"
        );
        if let Some(&(_, plo, phi)) = paper {
            let verdict = if lo >= plo && hi <= phi {
                "within the paper's range"
            } else if lo <= phi && hi >= plo {
                "overlapping the paper's range but spread wider across the algorithms"
            } else {
                "outside the paper's range"
            };
            let _ = write!(md, " (paper {plo:.0}–{phi:.0} %: {verdict})");
        }
        md.push('.');
    }
    md.push_str("\n\n### Why Covey's numbers come out as they do\n\n");
    mechanisms(outcome, &mut md);
    sensitivity(outcome, &mut md);
    md.push_str(
        "\n### Where the model differs from the testbed\n\n\
         - The paper ran Californium (Java) clients and server over netem on real hosts; Covey \
         runs its own engine with the estimators of covey-proto's `cc` module on virtual time. \
         Host scheduling, JVM pauses and netem's timer granularity add RTT variance the model \
         does not have, so the estimators that adapt to the RTT (linux, peakhopper, cocoa) see \
         smoother samples here than on the testbed.\n\
         - Queue size, client start times, message sizes (token, URI, payload), the IP version \
         and the retry limit are not given in the paper; the values above are ours (see the \
         scenario's documentation). Message sizes set the bottleneck's service time per \
         exchange and so the client count at which the queueing RTT reaches ACK_TIMEOUT.\n\
         - The paper's figures give completion times only as plots; the comparison above is of \
         the ranking and of Table 1, not of absolute completion times.\n",
    );
    super::retx_report::markdown(outcome, &mut md);
    md
}

/// Default CoAP's smallest and largest initial timeout in seconds, from the clients'
/// configuration (ACK_TIMEOUT and ACK_TIMEOUT × ACK_RANDOM_FACTOR).
fn default_initial_timeouts(p: &Params) -> (f64, f64) {
    let t = run::client_config(Algorithm::Default, p.max_retransmit).transmission;
    let low = t.ack_timeout.as_secs_f64();
    (low, low * t.ack_random_factor.as_f64())
}

/// Explains the outcome from what the runs measured: the bottleneck's service time per
/// frame, the queueing RTT it implies, queue drops, and the time to ACK per algorithm.
fn mechanisms(outcome: &Outcome, md: &mut String) {
    let p = &outcome.params;
    let (bytes, frames, drops) = outcome.runs.iter().fold((0u64, 0u64, 0u64), |acc, r| {
        (
            acc.0 + r.bytes_on_wire,
            acc.1 + r.frames_on_wire,
            acc.2 + r.queue_drops,
        )
    });
    if frames == 0 {
        return;
    }
    let frame = bytes as f64 / frames as f64;
    let service = frame * 8.0 / p.rate as f64;
    let delay = p.one_way_delay().as_secs_f64();
    let (ack_timeout, ack_timeout_max) = default_initial_timeouts(p);
    let threshold = (ack_timeout - 2.0 * delay) / service;
    let _ = writeln!(
        md,
        "- Every datagram on the bottleneck is {frame:.0} B with headers on average, so it \
         holds the link for {:.1} ms. With NSTART 1 each client has one request in the \
         upstream queue or one response in the downstream one, so N clients see a queueing \
         RTT of about N × {:.1} ms + {:.0} ms. That reaches default CoAP's smallest initial \
         timeout (ACK_TIMEOUT = {ack_timeout} s) at about {threshold:.0} clients: below it \
         default CoAP never times out, above it most of its first timeouts (uniform in \
         {ack_timeout}–{ack_timeout_max} s) expire before the response, and the spurious \
         retransmissions load the link further.",
        1000.0 * service,
        1000.0 * service,
        1000.0 * 2.0 * delay,
    );
    let _ = writeln!(
        md,
        "- The drop-tail queues ({} packets per direction) dropped {drops} packets over all \
         {} runs{}",
        p.queue,
        outcome.runs.len(),
        if drops == 0 {
            ": every retransmission in Covey is spurious (a timeout shorter than the \
             queueing RTT), none repairs a loss. The paper's 3–14 % at 10 clients, where the \
             RTT is far below every initial RTO, needs losses the paper does not describe \
             (a shorter netem limit, or losses on the hosts), which Covey does not invent."
        } else {
            "."
        }
    );
    let high = outcome.sweep.clients.iter().copied().max().unwrap_or(0);
    let rows: Vec<String> = algorithms(outcome)
        .into_iter()
        .filter_map(|alg| own(&outcome.aggregates, Workload::Continuous, alg, high))
        .map(|a| {
            format!(
                "{} {:.2} s / {:.2} s",
                a.client_algorithm, a.rtt_mean_s, a.rto_max_s.median
            )
        })
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(
            md,
            "- At {high} continuous clients, mean time from first transmission to ACK / median \
             RTOmax: {}. Default CoAP draws every initial timeout from [{ack_timeout} s, \
             {ack_timeout_max} s] whatever the path, so once the queueing RTT passes \
             {ack_timeout} s almost every exchange times out once and its spurious \
             retransmission queues behind the original. The adaptive estimators follow the \
             RTT: Linux RTO, Peak-Hopper and RFC 6298 apply Karn's rule (no sample from a \
             retransmitted exchange) and keep their backoff for later exchanges until a valid \
             sample, so an RTO that starts below the queueing RTT grows past it; CoCoA also \
             learns from retransmitted exchanges through its weak estimator.",
            rows.join(", ")
        );
    }
}

/// The sensitivity study as a table.
fn sensitivity(outcome: &Outcome, md: &mut String) {
    if outcome.sensitivity.is_empty() {
        return;
    }
    let p = &outcome.params;
    let _ = writeln!(
        md,
        "\n### Sensitivity to what the paper leaves open\n\nContinuous clients, the same \
         seeds, one setting changed at a time: IPv4 instead of {} headers (shorter \
         datagrams, so a shorter queueing RTT), and a router buffer of {} packets (Contiki's \
         default QUEUEBUF_NUM) instead of {}. Not a fit: the main results keep \
         the configured values.\n",
        p.header.short_name(),
        super::sensitivity::SHORT_QUEUE,
        if p.queue == NETEM_LIMIT {
            format!("netem's {NETEM_LIMIT}")
        } else {
            format!("the configured {}", p.queue)
        },
    );
    let mut t = MarkdownTable::new(&[
        "variant",
        "clients",
        "algorithm",
        "retransmitted",
        "completion median s",
        "queue drops per run",
    ]);
    for r in &outcome.sensitivity {
        t.push(vec![
            r.variant.clone(),
            r.clients.to_string(),
            r.algorithm.to_string(),
            pct(r.retransmitted_share),
            format!("{:.1}", r.completion_median_s),
            format!("{:.1}", r.queue_drops_per_run),
        ]);
    }
    md.push_str(&t.render());
}

/// The competing workload (the paper's Figs 3a and 3b): the default half against the half
/// running the algorithm under test, in the same runs.
fn competing(outcome: &Outcome, md: &mut String) {
    let aggs = &outcome.aggregates;
    let mut t = MarkdownTable::new(&[
        "clients",
        "algorithm under test",
        "its clients: median completion s",
        "default clients: median completion s",
        "its clients: retransmitted",
        "default clients: retransmitted",
    ]);
    for &n in &outcome.sweep.clients {
        for alg in algorithms(outcome) {
            if alg == "default" {
                continue;
            }
            let class = |client: &str| {
                aggs.iter().find(|a| {
                    a.workload == Workload::Competing
                        && a.run_algorithm == alg
                        && a.client_algorithm == client
                        && a.clients == n
                })
            };
            if let (Some(own), Some(default)) = (class(alg), class("default")) {
                t.push(vec![
                    n.to_string(),
                    alg.to_string(),
                    format!("{:.1}", own.completion_s.median),
                    format!("{:.1}", default.completion_s.median),
                    pct(own.retransmitted_share),
                    pct(default.retransmitted_share),
                ]);
            }
        }
    }
    if t.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "\n## Competing workload\n\nHalf the clients run default CoAP, half the algorithm \
         under test, in the same runs (the paper's Figs 3a and 3b).\n"
    );
    md.push_str(&t.render());
}
