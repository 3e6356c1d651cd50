//! The CSV every group scenario writes of its merged points, and the number formats of their
//! Markdown tables.

use serde::Serialize;

use super::outcome::GroupPoint;
use crate::report::rows::{Fixed, Plain};

/// Defines `$row`, one row of `<scenario>-points.csv` per merged point: what was swept (the
/// column `$x`, the one that differs between scenarios), and every metric and counter.
macro_rules! points_row {
    ($(#[$doc:meta])* $row:ident, $x:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize)]
        pub struct $row {
            members: usize,
            variant: String,
            $x: Plain,
            runs: usize,
            creation_failures: usize,
            queries: u64,
            unanswered_queries: u64,
            mean_response_s: Fixed<4>,
            min_response_s: Fixed<4>,
            max_response_s: Fixed<4>,
            member_reliability: Fixed<5>,
            group_reliability: Fixed<4>,
            collisions_per_query: Fixed<3>,
            queue_drops_per_query: Fixed<3>,
            channel_access_failures_per_query: Fixed<3>,
            mac_retries_exhausted_per_query: Fixed<3>,
            channel_errors_per_query: Fixed<3>,
            mac_retries_per_query: Fixed<3>,
            coap_retransmissions_per_query: Fixed<3>,
        }

        impl $row {
            /// The rows of `points`, in their order.
            pub fn of(points: &[GroupPoint]) -> Vec<$row> {
                points
                    .iter()
                    .map(|p| {
                        let o = &p.outcome;
                        $row {
                            members: p.members,
                            variant: p.variant.clone(),
                            $x: Plain(p.x),
                            runs: o.runs,
                            creation_failures: o.creation_failures,
                            queries: o.queries,
                            unanswered_queries: o.unanswered_queries,
                            mean_response_s: Fixed(o.mean_response_s()),
                            min_response_s: Fixed(o.min_response_s()),
                            max_response_s: Fixed(o.max_response_s()),
                            member_reliability: Fixed(o.member_reliability()),
                            group_reliability: Fixed(o.group_reliability()),
                            collisions_per_query: Fixed(o.per_query(o.collisions)),
                            queue_drops_per_query: Fixed(o.per_query(o.queue_drops)),
                            channel_access_failures_per_query: Fixed(
                                o.per_query(o.channel_access_failures),
                            ),
                            mac_retries_exhausted_per_query: Fixed(
                                o.per_query(o.retries_exhausted),
                            ),
                            channel_errors_per_query: Fixed(o.per_query(o.channel_errors)),
                            mac_retries_per_query: Fixed(o.per_query(o.mac_retries)),
                            coap_retransmissions_per_query: Fixed(
                                o.per_query(o.coap_retransmissions),
                            ),
                        }
                    })
                    .collect()
            }
        }
    };
}

points_row!(
    /// A point of a sweep over the delay between the EM's requests (group-delay).
    DelayRow,
    delay_ms
);

points_row!(
    /// A point of a sweep over the Wi-Fi load (group-interference, group-nested).
    LoadRow,
    wifi_load_mbps
);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::rows::to_csv;
    use crate::scenarios::group::RunOutcome;

    const METRICS: &str = "runs,creation_failures,queries,unanswered_queries,\
        mean_response_s,min_response_s,max_response_s,member_reliability,group_reliability,\
        collisions_per_query,queue_drops_per_query,channel_access_failures_per_query,\
        mac_retries_exhausted_per_query,channel_errors_per_query,mac_retries_per_query,\
        coap_retransmissions_per_query";

    #[test]
    fn rows_keep_the_columns_and_number_formats_of_the_points_csv() {
        let point = |x: f64, variant: &str| GroupPoint {
            members: 10,
            x,
            variant: variant.into(),
            outcome: RunOutcome {
                members: 10,
                runs: 1,
                queries: 4,
                response_times_s: vec![0.5, 0.25, 1.0],
                unanswered_queries: 1,
                member_replies: 39,
                member_requests: 40,
                complete_queries: 3,
                collisions: 5,
                ..RunOutcome::default()
            },
        };
        let delay = to_csv(&DelayRow::of(&[point(f64::NAN, "auto")])).unwrap();
        assert_eq!(
            delay,
            format!(
                "members,variant,delay_ms,{METRICS}\n\
                 10,auto,NaN,1,0,4,1,0.5833,0.2500,1.0000,0.97500,0.7500,1.250,0.000,0.000,\
                 0.000,0.000,0.000,0.000\n"
            )
        );
        let load = to_csv(&LoadRow::of(&[point(28.5, "unicast, ACK_TIMEOUT 0.5 s")])).unwrap();
        assert!(
            load.starts_with(&format!("members,variant,wifi_load_mbps,{METRICS}\n")),
            "{load}"
        );
        assert!(
            load.contains("\n10,\"unicast, ACK_TIMEOUT 0.5 s\",28.5,1,"),
            "{load}"
        );
    }
}
