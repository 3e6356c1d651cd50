//! The parameters every group scenario shares, and the one table `--set` checks them against.

use covey_proto::Duration;
use serde::{Deserialize, Serialize};

use covey_sim::media::ieee802154::ReceptionModel;

use super::testbed::sinr_reception;
use crate::framework::{Accepts, Param};

/// The fixed parameters of a group experiment, named as `--set` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupParams {
    /// Queries per point (the paper's 50).
    pub queries: u32,
    /// Frames each node's MAC queue holds (Contiki's 8).
    pub queue: usize,
    /// Pause between a reply and the next query, ms.
    pub gap_ms: u64,
    /// CoAP ACK_TIMEOUT on every node, ms (RFC 7252's 2 s).
    pub ack_timeout_ms: u64,
    /// How receivers judge overlapping frames.
    #[serde(default)]
    pub reception: Reception,
}

/// How the radio networks judge a frame that overlaps others or a Wi-Fi burst.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reception {
    /// Any overlap destroys every frame involved; Wi-Fi bursts corrupt frames by their
    /// Rayleigh-averaged SINR (the default the pages were written with).
    #[default]
    Overlap,
    /// Each receiver locks onto the first frame and keeps it while its SINR allows, the Wi-Fi
    /// bursts in the same interference sum (capture).
    Sinr,
}

impl Reception {
    /// The names `--set reception=` accepts.
    pub const NAMES: &'static [&'static str] = &["overlap", "sinr"];

    /// The medium's reception model.
    pub fn model(self) -> ReceptionModel {
        match self {
            Reception::Overlap => ReceptionModel::Overlap,
            Reception::Sinr => sinr_reception(),
        }
    }
}

impl Default for GroupParams {
    fn default() -> GroupParams {
        GroupParams {
            queries: 50,
            queue: 8,
            gap_ms: 1000,
            ack_timeout_ms: 2000,
            reception: Reception::Overlap,
        }
    }
}

impl GroupParams {
    /// The paper's parameters, or the quick run's (20 queries per point).
    pub fn defaults(quick: bool) -> GroupParams {
        GroupParams {
            queries: if quick { 20 } else { 50 },
            ..GroupParams::default()
        }
    }

    /// Pause between a reply and the next query.
    pub fn gap(&self) -> Duration {
        Duration::from_millis(self.gap_ms)
    }

    /// CoAP ACK_TIMEOUT on every node.
    pub fn ack_timeout(&self) -> Duration {
        Duration::from_millis(self.ack_timeout_ms)
    }
}

/// Seeds per point when the run does not say: one, as the paper ran each point once.
pub const DEFAULT_SEEDS: usize = 1;

/// The parameter table of every group scenario.
pub const PARAMS: &[Param] = &[
    Param {
        name: "queries",
        help: "queries per sweep point (the quick run makes 20)",
        accepts: Accepts::Integer {
            min: 1,
            max: 100_000,
            unit: "",
        },
    },
    Param {
        name: "queue",
        help: "frames each node's MAC queue holds",
        accepts: Accepts::Integer {
            min: 1,
            max: 1024,
            unit: "frames",
        },
    },
    Param {
        name: "gap_ms",
        help: "pause between a reply and the client's next query",
        accepts: Accepts::Integer {
            min: 0,
            max: 3_600_000,
            unit: "ms",
        },
    },
    Param {
        name: "ack_timeout_ms",
        help: "CoAP ACK_TIMEOUT on every node",
        accepts: Accepts::Integer {
            min: 100,
            max: 60_000,
            unit: "ms",
        },
    },
    Param {
        name: "reception",
        help: "overlap: any overlap destroys the frames; sinr: capture by SINR, Wi-Fi in the sum",
        accepts: Accepts::OneOf(Reception::NAMES),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::param_table;

    fn apply(pairs: &[(&str, &str)]) -> Result<GroupParams, String> {
        let sets: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        param_table::apply("group-delay", PARAMS, &GroupParams::defaults(true), &sets)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_table_matches_the_parameters_and_sets_reach_their_fields() {
        for quick in [false, true] {
            let problems = param_table::table_problems(PARAMS, &GroupParams::defaults(quick));
            assert!(problems.is_empty(), "{problems:?}");
        }
        let p = apply(&[
            ("queue", "4"),
            ("ack_timeout_ms", "500"),
            ("gap_ms", "0"),
            ("reception", "sinr"),
        ])
        .unwrap();
        assert_eq!(
            p,
            GroupParams {
                queries: 20,
                queue: 4,
                gap_ms: 0,
                ack_timeout_ms: 500,
                reception: Reception::Sinr,
            }
        );
        assert!(matches!(p.reception.model(), ReceptionModel::Sinr(_)));
        assert!(apply(&[("reception", "ideal")])
            .unwrap_err()
            .contains("is not one of overlap, sinr"));
        assert_eq!(p.ack_timeout(), Duration::from_millis(500));
        assert_eq!(p.gap(), Duration::ZERO);
    }

    #[test]
    fn values_out_of_range_are_refused_not_clamped() {
        assert_eq!(
            apply(&[("ack_timeout_ms", "50")]).unwrap_err(),
            "invalid option: group-delay: `ack_timeout_ms=50` is out of range (ms, 100 to 60000)"
        );
        assert!(apply(&[("queue", "0")])
            .unwrap_err()
            .contains("is out of range (frames, 1 to 1024)"));
        assert!(apply(&[("queries", "100001")])
            .unwrap_err()
            .contains("is out of range"));
        assert!(apply(&[("delay", "5")])
            .unwrap_err()
            .contains("choose from queries, queue, gap_ms, ack_timeout_ms"));
    }
}
