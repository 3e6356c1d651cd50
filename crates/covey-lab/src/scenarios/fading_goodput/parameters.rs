//! The parameters `--set` overrides, described for `covey lab params`.

use super::{ErrorModel, Params};
use crate::scenarios::ParamInfo;

impl Params {
    /// Every parameter [`Params::with_overrides`] and [`super::models_from`] know, with
    /// their defaults.
    pub fn describe() -> Vec<ParamInfo> {
        let d = Params::default();
        let models: Vec<&str> = ErrorModel::ALL.iter().map(|m| m.name()).collect();
        vec![
            ParamInfo {
                name: "models",
                default: models.join(","),
                accepts: "comma-separated paper, independent, rayleigh".into(),
                help: "the error models to sweep",
            },
            ParamInfo {
                name: "transactions",
                default: d.transactions.to_string(),
                accepts: "1 to 100000 (clamped)".into(),
                help: "consecutive CON GETs per run",
            },
            ParamInfo {
                name: "ack_timeout_ms",
                default: d.ack_timeout.as_millis().to_string(),
                accepts: "1 to 60000 (clamped)".into(),
                help: "ACK_TIMEOUT, the fixed initial retransmission timeout",
            },
            ParamInfo {
                name: "max_retransmit",
                default: d.max_retransmit.to_string(),
                accepts: "0 to 20 (clamped)".into(),
                help: "MAX_RETRANSMIT",
            },
            ParamInfo {
                name: "queue",
                default: d.queue_frames.to_string(),
                accepts: "frames, 1 to 1024 (clamped)".into(),
                help: "frames each node's MAC queue holds",
            },
            ParamInfo {
                name: "probe",
                default: d.probe_datagrams.to_string(),
                accepts: "0 to 1000000 (clamped)".into(),
                help: "datagrams per Table 4 cell in the Monte-Carlo measurement",
            },
        ]
    }
}
