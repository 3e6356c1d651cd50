//! `--set name=value`: scenario parameters, checked against the names the scenario
//! describes before anything runs.

use covey_lab::scenarios;

use super::lab_failure;
use crate::exit::{ExitKind, Failure};

/// Splits every `name=value` of `sets` and checks the names against `scenario`'s
/// parameters; values are checked by the scenario itself.
pub fn parse(scenario: &str, sets: &[String]) -> Result<Vec<(String, String)>, Failure> {
    let described = scenarios::params(scenario).map_err(lab_failure)?;
    let names: Vec<&str> = described.iter().map(|p| p.name).collect();
    let choices = || {
        if names.is_empty() {
            format!("{scenario} does not describe its parameters")
        } else {
            format!("choose from {}", names.join(", "))
        }
    };
    sets.iter()
        .map(|set| {
            let Some((name, value)) = set.split_once('=').filter(|(n, _)| !n.trim().is_empty())
            else {
                return Err(Failure::new(
                    ExitKind::Usage,
                    format!("`--set {set}` is not name=value ({})", choices()),
                ));
            };
            let name = name.trim();
            // A scenario that describes no parameters still gets to reject names itself.
            if !names.is_empty() && !names.contains(&name) {
                return Err(Failure::new(
                    ExitKind::Usage,
                    format!("{scenario} has no parameter `{name}` ({})", choices()),
                ));
            }
            Ok((name.to_string(), value.to_string()))
        })
        .collect()
}
