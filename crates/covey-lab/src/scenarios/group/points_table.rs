//! The CSV every group scenario writes of its merged points, and the number formats of their
//! Markdown tables.

use super::outcome::GroupPoint;
use crate::report::csv::CsvTable;

/// One row per point: what was swept, and every metric and counter.
pub fn points_csv(points: &[GroupPoint], x_name: &str) -> CsvTable {
    let mut t = CsvTable::new(&[
        "members",
        "variant",
        x_name,
        "runs",
        "creation_failures",
        "queries",
        "unanswered_queries",
        "mean_response_s",
        "min_response_s",
        "max_response_s",
        "member_reliability",
        "group_reliability",
        "collisions_per_query",
        "queue_drops_per_query",
        "channel_access_failures_per_query",
        "mac_retries_exhausted_per_query",
        "channel_errors_per_query",
        "mac_retries_per_query",
        "coap_retransmissions_per_query",
    ]);
    for p in points {
        let o = &p.outcome;
        t.push([
            p.members.to_string(),
            p.variant.clone(),
            format!("{}", p.x),
            o.runs.to_string(),
            o.creation_failures.to_string(),
            o.queries.to_string(),
            o.unanswered_queries.to_string(),
            format!("{:.4}", o.mean_response_s()),
            format!("{:.4}", o.min_response_s()),
            format!("{:.4}", o.max_response_s()),
            format!("{:.5}", o.member_reliability()),
            format!("{:.4}", o.group_reliability()),
            format!("{:.3}", o.per_query(o.collisions)),
            format!("{:.3}", o.per_query(o.queue_drops)),
            format!("{:.3}", o.per_query(o.channel_access_failures)),
            format!("{:.3}", o.per_query(o.retries_exhausted)),
            format!("{:.3}", o.per_query(o.channel_errors)),
            format!("{:.3}", o.per_query(o.mac_retries)),
            format!("{:.3}", o.per_query(o.coap_retransmissions)),
        ]);
    }
    t
}

/// Seconds with two decimals, or "–" for no value.
pub fn secs(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2} s")
    } else {
        "–".into()
    }
}

/// A share as a percentage with one decimal, or "–".
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1} %", 100.0 * x)
    } else {
        "–".into()
    }
}
