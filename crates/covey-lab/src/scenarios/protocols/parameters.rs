//! The parameters `--set` overrides, described for `covey lab params`.

use std::path::PathBuf;

use super::{Params, NAME};
use crate::scenarios::ParamInfo;
use crate::LabError;

impl Params {
    /// The defaults with `overrides` applied. Names: `messages`, `rate_hz`, `size`, `cc`,
    /// `drain_s`, `dds_venv`.
    pub fn with_overrides(overrides: &[(String, String)]) -> Result<Params, LabError> {
        let mut p = Params::default();
        for (name, value) in overrides {
            let bad =
                || LabError::InvalidOption(format!("{NAME}: bad value `{value}` for `{name}`"));
            let int = || value.trim().parse::<u64>().map_err(|_| bad());
            let float = || {
                value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(bad)
            };
            match name.as_str() {
                "messages" => p.messages = int()?.clamp(1, 100_000),
                "rate_hz" => p.rate_hz = float()?.clamp(0.01, 1000.0),
                "size" => {
                    p.size = usize::try_from(int()?)
                        .map_err(|_| bad())?
                        .clamp(96, 60_000)
                }
                "cc" => {
                    covey_emu::stacks::coap::config(value)?;
                    p.cc = value.clone();
                }
                "drain_s" => p.drain_s = float()?.clamp(0.0, 600.0),
                "dds_venv" => p.dds_venv = PathBuf::from(value),
                _ => {
                    return Err(LabError::InvalidOption(format!(
                        "{NAME} has no parameter `{name}` (messages, rate_hz, size, cc, \
                         drain_s, dds_venv)"
                    )))
                }
            }
        }
        Ok(p)
    }

    /// Every parameter [`Params::with_overrides`] knows, with its default.
    pub fn describe() -> Vec<ParamInfo> {
        let d = Params::default();
        vec![
            ParamInfo {
                name: "messages",
                default: d.messages.to_string(),
                accepts: "1 to 100000 (clamped)".into(),
                help: "telemetry messages per trial (12 in --quick)",
            },
            ParamInfo {
                name: "rate_hz",
                default: d.rate_hz.to_string(),
                accepts: "0.01 to 1000 (clamped)".into(),
                help: "messages per second",
            },
            ParamInfo {
                name: "size",
                default: d.size.to_string(),
                accepts: "bytes, 96 to 60000 (clamped)".into(),
                help: "bytes of JSON per message",
            },
            ParamInfo {
                name: "cc",
                default: d.cc.clone(),
                accepts: "default, cocoa, cocoa-strong, linux, peakhopper, rfc6298".into(),
                help: "CoAP congestion control of the CON and Observe runs",
            },
            ParamInfo {
                name: "drain_s",
                default: d.drain_s.to_string(),
                accepts: "0 to 600 (clamped)".into(),
                help: "seconds the caregiver may still receive after the last send (8 in --quick)",
            },
            ParamInfo {
                name: "dds_venv",
                default: d.dds_venv.display().to_string(),
                accepts: "a path".into(),
                help: "virtual environment with Cyclone DDS for Python",
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_checked() {
        let set = |k: &str, v: &str| Params::with_overrides(&[(k.into(), v.into())]);
        assert_eq!(set("messages", "30").unwrap().messages, 30);
        assert_eq!(set("cc", "linux").unwrap().cc, "linux");
        assert!(set("cc", "reno").is_err());
        assert!(set("rate_hz", "-1").is_err());
        assert!(set("colour", "blue")
            .unwrap_err()
            .to_string()
            .contains("no parameter"));
    }
}
