//! The parameters `--set` overrides, described for `covey lab params`.

use super::Params;
use crate::scenarios::ParamInfo;

impl Params {
    /// Every parameter [`Params::with_overrides`] knows, with its default.
    pub fn describe() -> Vec<ParamInfo> {
        let d = Params::default();
        vec![
            ParamInfo {
                name: "requests",
                default: d.requests.to_string(),
                accepts: "1 to 1000000 (clamped)",
                help: "NON requests per run",
            },
            ParamInfo {
                name: "queue",
                default: d.queue_frames.to_string(),
                accepts: "frames, 1 to 1024 (clamped)",
                help: "frames each node's MAC queue holds",
            },
            ParamInfo {
                name: "response_timeout_ms",
                default: d.response_timeout.as_millis().to_string(),
                accepts: "1 to 3600000 (clamped)",
                help: "how long the client waits for the response to a NON request",
            },
        ]
    }
}
