//! The protocols report: CSV of every trial, the outcome as JSON, SVG plots (latency CDF at
//! the low-quality point; latency, loss and bytes along each sweep), and a Markdown page
//! that sets Covey's numbers beside the paper's and says where each protocol wins.

use std::fmt::Write as _;
use std::path::Path;

use super::condition::{Axis, Condition};
use super::paper;
use super::results::{Metrics, TrialRow};
use super::{Outcome, NAME};
use crate::report::csv::CsvTable;
use crate::report::folder::ReportFolder;
use crate::report::markdown::MarkdownTable;
use crate::report::svg::{LineChart, Series};
use crate::scenarios::Summary;
use crate::LabError;

/// Writes every report file of `outcome` into `dir`.
pub fn write(outcome: &Outcome, dir: &Path) -> Result<Summary, LabError> {
    let mut folder = ReportFolder::create(dir, NAME)?;
    folder.csv("trials", &trials_csv(outcome))?;
    folder.json(outcome)?;
    if let Some(chart) = latency_cdf(outcome) {
        folder.svg(Some("low-quality-latency"), &chart)?;
    }
    folder.svg(Some("low-quality-tradeoff"), &tradeoff(outcome))?;
    for (axis, suffix, x_label) in [
        (Axis::Loss, "loss", "network loss (%)"),
        (Axis::Latency, "latency", "one-way network latency (ms)"),
        (Axis::Bandwidth, "bandwidth", "bandwidth cap (kB/s)"),
    ] {
        let charts = [
            (
                "latency",
                "median latency (ms)",
                latency_ms as fn(&Metrics) -> f64,
            ),
            ("lost", "telemetry lost (%)", |m: &Metrics| m.loss_pct),
            ("bytes", "bytes on the wire (kB)", |m: &Metrics| {
                m.wire_bytes as f64 / 1000.0
            }),
        ];
        for (what, y_label, metric) in charts {
            if let Some(chart) = axis_chart(outcome, axis, x_label, y_label, metric) {
                folder.svg(Some(&format!("{suffix}-{what}")), &chart)?;
            }
        }
    }
    folder.finish(outcome.rows.len(), outcome.wall_s, markdown(outcome))
}

fn latency_ms(m: &Metrics) -> f64 {
    m.latency_median_s * 1000.0
}

fn cell(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "–".into()
    }
}

fn trials_csv(outcome: &Outcome) -> CsvTable {
    let mut t = CsvTable::new(&[
        "axis",
        "loss",
        "delay_s",
        "rate_bytes_per_s",
        "protocol",
        "repetition",
        "sent",
        "received",
        "loss_pct",
        "latency_mean_s",
        "latency_median_s",
        "latency_p95_s",
        "wire_bytes",
        "wire_packets",
        "data_bytes",
        "repeated_messages",
        "overhead_per_100",
        "error",
        "setup_failures",
    ]);
    for r in &outcome.rows {
        let l = r.condition.link;
        let mut row = vec![
            format!("{:?}", r.condition.axis).to_lowercase(),
            l.loss.to_string(),
            l.delay_s.to_string(),
            l.rate_bytes_per_s.map_or(String::new(), |v| v.to_string()),
            r.protocol.clone(),
            r.repetition.to_string(),
        ];
        match &r.metrics {
            Some(m) => row.extend([
                m.sent.to_string(),
                m.received.to_string(),
                cell(m.loss_pct, 2),
                cell(m.latency_mean_s, 4),
                cell(m.latency_median_s, 4),
                cell(m.latency_p95_s, 4),
                m.wire_bytes.to_string(),
                m.wire_packets.to_string(),
                m.data_bytes.to_string(),
                m.repeated_messages.to_string(),
                cell(m.overhead_per_100, 1),
                String::new(),
            ]),
            None => {
                row.extend(std::iter::repeat_n(String::new(), 11));
                row.push(r.error.clone().unwrap_or_default());
            }
        }
        row.push(r.setup_failures.len().to_string());
        t.push(row);
    }
    t
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

/// The mean of `metric` over the repetitions of `protocol` at `condition`.
fn mean_at(
    outcome: &Outcome,
    condition: &Condition,
    protocol: &str,
    metric: impl Fn(&Metrics) -> f64,
) -> Option<f64> {
    let values: Vec<f64> = outcome
        .rows
        .iter()
        .filter(|r| r.condition == *condition && r.protocol == protocol)
        .filter_map(|r| r.metrics.as_ref().map(&metric))
        .filter(|v| v.is_finite())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
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
    metric: fn(&Metrics) -> f64,
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
                .filter_map(|c| Some((c.x(), mean_at(outcome, c, &p, metric)?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name: p, points }
        })
        .collect();
    Some(LineChart {
        title: format!("{y_label} against {x_label}"),
        x_label: x_label.into(),
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

fn latency_cdf(outcome: &Outcome) -> Option<LineChart> {
    let lq = low_quality(outcome)?;
    let mut series = Vec::new();
    for p in protocols(outcome) {
        let Some(row) = outcome
            .rows
            .iter()
            .find(|r| r.condition == lq && r.protocol == p && r.metrics.is_some())
        else {
            continue;
        };
        let sent = row.metrics.as_ref().map_or(0, |m| m.sent).max(1) as f64;
        let mut l = row.latencies_s.clone();
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
        y_label: "messages delivered (% of sent)".into(),
        series,
    })
}

/// Latency against control overhead at the low-quality point: each protocol one point, the
/// paper's DDS and MQTT beside them (the paper's alone when the sweep did not run).
fn tradeoff(outcome: &Outcome) -> LineChart {
    let mut series = vec![
        Series {
            name: "paper: DDS".into(),
            points: vec![(paper::DDS_OVERHEAD_PER_100, paper::DDS_LATENCY_S * 1000.0)],
        },
        Series {
            name: "paper: MQTT".into(),
            points: vec![(paper::MQTT_OVERHEAD_PER_100, paper::MQTT_LATENCY_S * 1000.0)],
        },
    ];
    if let Some(lq) = low_quality(outcome) {
        for p in protocols(outcome) {
            let overhead = mean_at(outcome, &lq, &p, |m| m.overhead_per_100);
            let latency = mean_at(outcome, &lq, &p, |m| m.latency_mean_s * 1000.0);
            if let (Some(x), Some(y)) = (overhead, latency) {
                series.push(Series {
                    name: p,
                    points: vec![(x, y)],
                });
            }
        }
    }
    LineChart {
        title: "Latency against overhead, low-quality network".into(),
        x_label: "control bytes per 100 bytes of data".into(),
        y_label: "mean latency (ms)".into(),
        series,
    }
}

fn paper_beside(protocol: &str) -> String {
    if protocol == "DDS reliable" {
        format!(
            "{:.0} ms, {:.0} B",
            paper::DDS_LATENCY_S * 1000.0,
            paper::DDS_OVERHEAD_PER_100
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

/// The metrics of every protocol at `condition`; with the paper's numbers beside them at the
/// low-quality point, the only one the paper gives numbers for.
fn condition_table(outcome: &Outcome, condition: &Condition) -> MarkdownTable {
    let with_paper = condition.axis == Axis::LowQuality;
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
        let m = |f: fn(&Metrics) -> f64, d| {
            mean_at(outcome, condition, &p, f).map_or("–".into(), |v| cell(v, d))
        };
        let mut row = vec![
            p.clone(),
            m(|m| m.latency_mean_s * 1000.0, 0),
            m(|m| m.latency_median_s * 1000.0, 0),
            m(|m| m.latency_p95_s * 1000.0, 0),
            m(|m| m.loss_pct, 1),
            m(|m| m.wire_bytes as f64, 0),
            m(|m| m.data_bytes as f64, 0),
            m(|m| m.overhead_per_100, 0),
        ];
        if with_paper {
            row.push(paper_beside(&p));
        }
        t.push(row);
    }
    t
}

/// The protocol in `pool` with the lowest `metric` at `condition`, and its value.
fn best_at(
    outcome: &Outcome,
    condition: &Condition,
    metric: fn(&Metrics) -> f64,
    pool: &[String],
) -> Option<(String, f64)> {
    pool.iter()
        .filter_map(|p| Some((p.clone(), mean_at(outcome, condition, p, metric)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The protocols that delivered every message at `condition`.
fn lossless_at(outcome: &Outcome, condition: &Condition) -> Vec<String> {
    protocols(outcome)
        .into_iter()
        .filter(|p| mean_at(outcome, condition, p, |m| m.loss_pct) == Some(0.0))
        .collect()
}

/// Bytes on the wire per message the caregiver got: a protocol that carried fewer messages
/// does not win on bytes for that (none delivered: not a number, left out).
fn bytes_per_delivered(m: &Metrics) -> f64 {
    m.wire_bytes as f64 / m.received as f64
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
    if let Some((p, v)) = best_at(outcome, condition, |m| m.overhead_per_100, &all) {
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
         after the gateway's last send counts as lost.\n",
        p.size, p.rate_hz, p.messages, p.cc, p.drain_s
    );
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
    let failed: Vec<&TrialRow> = outcome.rows.iter().filter(|r| r.error.is_some()).collect();
    if !failed.is_empty() {
        let _ = writeln!(md, "## Trials that did not run\n");
        for r in failed {
            let _ = writeln!(
                md,
                "- {} at {}: {}",
                r.protocol,
                r.condition.label(),
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
                "- {} at {}: {} failed attempt(s) ({})",
                r.protocol,
                r.condition.label(),
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
         draws than about the loss rate (`--runs 3` averages over more). Observe \
         loses telemetry without losing packets for good: RFC 7641 lets a newer notification \
         replace one still being retransmitted, which suits state (the latest reading) more \
         than a stream of samples.\n\
         - Without recovery, a message crosses two links, so CoAP NON and JSON/UDP lose about \
         1 - (1 - p)^2 of the telemetry at loss p per link (19 % at 10 %); the paper reports \
         about the network's rate.\n\n\
         Wall time: {:.0} s for {} trials.",
        covey_sim::paper_config().max_queued_per_peer,
        outcome.wall_s,
        outcome.rows.len()
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::protocols::condition::Condition;
    use crate::scenarios::protocols::Params;

    fn outcome_with(setup_failures: Vec<String>, error: Option<String>) -> Outcome {
        let condition = Condition::low_quality();
        Outcome {
            params: Params::default(),
            conditions: vec![condition],
            rows: vec![TrialRow {
                condition,
                protocol: "DDS reliable".into(),
                reliable: true,
                repetition: 0,
                metrics: None,
                latencies_s: Vec::new(),
                error,
                setup_failures,
            }],
            skipped: None,
            wall_s: 1.0,
        }
    }

    #[test]
    fn trials_started_again_are_listed_on_the_page_and_counted_in_the_csv() {
        let why = "stack: DDS subscriber did not become ready within 30 s".to_string();
        let o = outcome_with(vec![why.clone(), why.clone()], Some("later".into()));
        let md = markdown(&o);
        assert!(md.contains("## Trials started again"), "{md}");
        assert!(md.contains("DDS reliable at "), "{md}");
        assert!(md.contains("2 failed attempt(s)"), "{md}");
        let table = trials_csv(&o);
        let csv = table.as_str();
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
            repetition: 0,
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
        let mut o = outcome_with(Vec::new(), None);
        // Lossy carried 40 messages in 40 000 B (1 000 B each); whole carried 100 in
        // 90 000 B (900 B each): whole wins on bytes although it sent more of them.
        o.rows = vec![
            measured("lossy", 40, 40_000),
            measured("whole", 100, 90_000),
            measured("nothing", 0, 5_000),
        ];
        let lines = winners(&o, &Condition::low_quality());
        assert!(
            lines
                .iter()
                .any(|l| l == "fewest bytes on the wire per delivered message: whole (900 B)"),
            "{lines:?}"
        );
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
