//! The parameters every group scenario shares, overridable with `--set name=value`.

use covey_proto::Duration;
use serde::Serialize;

use crate::scenarios::{ParamInfo, RunOptions};
use crate::LabError;

/// The fixed parameters of a group experiment.
#[derive(Debug, Clone, Serialize)]
pub struct GroupParams {
    /// Queries per point (the paper's 50).
    pub queries: u32,
    /// Frames each node's MAC queue holds (Contiki's 8).
    pub queue_frames: usize,
    /// Pause between a reply and the next query.
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub gap: Duration,
    /// CoAP ACK_TIMEOUT (RFC 7252's 2 s).
    #[serde(serialize_with = "crate::report::json::serialize_secs")]
    pub ack_timeout: Duration,
}

impl Default for GroupParams {
    fn default() -> GroupParams {
        GroupParams {
            queries: 50,
            queue_frames: 8,
            gap: Duration::from_secs(1),
            ack_timeout: Duration::from_secs(2),
        }
    }
}

impl GroupParams {
    /// The defaults with `overrides` applied. Names: `queries`, `queue` (frames), `gap_ms`,
    /// `ack_timeout_ms`.
    pub fn with_overrides(
        scenario: &str,
        overrides: &[(String, String)],
    ) -> Result<GroupParams, LabError> {
        let mut p = GroupParams::default();
        for (name, value) in overrides {
            let bad =
                || LabError::InvalidOption(format!("{scenario}: bad value `{value}` for `{name}`"));
            let int = || value.trim().parse::<u64>().map_err(|_| bad());
            match name.as_str() {
                "queries" => {
                    p.queries = u32::try_from(int()?.clamp(1, 100_000)).map_err(|_| bad())?
                }
                "queue" => {
                    p.queue_frames = usize::try_from(int()?.clamp(1, 1024)).map_err(|_| bad())?
                }
                "gap_ms" => p.gap = Duration::from_millis(int()?.clamp(0, 3_600_000)),
                "ack_timeout_ms" => {
                    p.ack_timeout = Duration::from_millis(int()?.clamp(100, 60_000))
                }
                _ => {
                    return Err(LabError::InvalidOption(format!(
                    "{scenario} has no parameter `{name}` (queries, queue, gap_ms, ack_timeout_ms)"
                )))
                }
            }
        }
        Ok(p)
    }

    /// The parameters and seeds per point of a run of `scenario` as `options` asks: one
    /// seed unless told, and 20 queries per point in the quick run unless told.
    pub fn for_run(scenario: &str, options: &RunOptions) -> Result<(GroupParams, usize), LabError> {
        let seeds = options.runs.unwrap_or(1);
        if seeds == 0 {
            return Err(LabError::InvalidOption("runs must be at least 1".into()));
        }
        let mut params = GroupParams::with_overrides(scenario, &options.params)?;
        if options.quick && !options.params.iter().any(|(k, _)| k == "queries") {
            params.queries = 20;
        }
        Ok((params, seeds))
    }

    /// Every parameter [`GroupParams::with_overrides`] knows, with its default.
    pub fn describe() -> Vec<ParamInfo> {
        let d = GroupParams::default();
        vec![
            ParamInfo {
                name: "queries",
                default: d.queries.to_string(),
                accepts: "1 to 100000 (clamped)".into(),
                help: "queries per sweep point (the quick run makes 20)",
            },
            ParamInfo {
                name: "queue",
                default: d.queue_frames.to_string(),
                accepts: "frames, 1 to 1024 (clamped)".into(),
                help: "frames each node's MAC queue holds",
            },
            ParamInfo {
                name: "gap_ms",
                default: d.gap.as_millis().to_string(),
                accepts: "0 to 3600000 (clamped)".into(),
                help: "pause between a reply and the client's next query",
            },
            ParamInfo {
                name: "ack_timeout_ms",
                default: d.ack_timeout.as_millis().to_string(),
                accepts: "100 to 60000 (clamped)".into(),
                help: "CoAP ACK_TIMEOUT on every node",
            },
        ]
    }
}
