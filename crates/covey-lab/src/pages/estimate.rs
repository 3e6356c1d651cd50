//! How long a report will take, said before it starts: each scenario to run with its trials
//! and an estimate from the times an earlier report recorded for it in the index, else from
//! the scenario's declared cost per trial ([`crate::framework::Scenario::trial_seconds`]).

use crate::framework::LabScenario;

use super::index_page;

/// A run longer than this is named with how to leave it out.
const LONG_S: f64 = 600.0;

/// What one scenario of a report will take.
#[derive(Debug, Clone)]
pub struct ScenarioEstimate {
    /// The scenario.
    pub name: &'static str,
    /// Trials in its sweep.
    pub trials: usize,
    /// About how many wall-clock seconds they take.
    pub seconds: f64,
    /// Whether the estimate comes from times an earlier report recorded.
    pub recorded: bool,
    /// What the machine needs for it to run.
    pub needs: Option<&'static str>,
}

/// What a report will run and about how long it takes.
#[derive(Debug, Clone)]
pub struct Estimate {
    /// The full sweeps or the quick ones.
    pub quick: bool,
    /// The scenarios to run, in order.
    pub scenarios: Vec<ScenarioEstimate>,
}

/// The estimate for `scenario` in a report of the `quick` or full sweeps; `row`: its row
/// in the existing index, if any.
pub fn of(scenario: &dyn LabScenario, quick: bool, row: Option<&str>) -> ScenarioEstimate {
    let trials = scenario.planned_trials(quick);
    let recorded = row
        .and_then(index_page::recorded)
        .filter(|r| r.runs > 0)
        .map(|r| r.wall_s / r.runs as f64);
    ScenarioEstimate {
        name: scenario.info().name,
        trials,
        seconds: trials as f64 * recorded.unwrap_or(scenario.trial_seconds()),
        recorded: recorded.is_some(),
        needs: scenario.needs(),
    }
}

impl Estimate {
    /// The plan as printed before the report starts.
    pub fn render(&self) -> String {
        let total: f64 = self.scenarios.iter().map(|s| s.seconds).sum();
        let sweep = if self.quick { "quick" } else { "full" };
        let mut text = format!(
            "The report runs {} scenario{} ({sweep} sweeps), {} in all:\n",
            self.scenarios.len(),
            if self.scenarios.len() == 1 { "" } else { "s" },
            about(total)
        );
        let width = self.scenarios.iter().map(|s| s.name.len()).max();
        let width = width.unwrap_or(0);
        for s in &self.scenarios {
            let source = if s.recorded {
                "as the index recorded it"
            } else {
                "from its cost per trial"
            };
            text += &format!(
                "  {:width$}  {:>5} trials  {} ({source})\n",
                s.name,
                s.trials,
                about(s.seconds)
            );
        }
        for s in &self.scenarios {
            if s.needs.is_some() || s.seconds > LONG_S {
                let needs = s.needs.map_or(String::new(), |n| format!(" and needs {n}"));
                text += &format!(
                    "{} takes {}{needs}: leave it out with --skip {}.\n",
                    s.name,
                    about(s.seconds),
                    s.name
                );
            }
        }
        text
    }
}

/// An estimate of `seconds`: "about 40 s", or "under 1 s".
fn about(seconds: f64) -> String {
    match duration(seconds) {
        under if seconds < 0.5 => under,
        rounded => format!("about {rounded}"),
    }
}

/// `seconds` for people: "under 1 s", "40 s", "12 min", "1 h 9 min".
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0 => "under 1 s".to_string(),
        1..=99 => format!("{s} s"),
        100..=3599 => format!("{} min", s.div_ceil(60)),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::registry;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(0.2), "under 1 s");
        assert_eq!(duration(42.0), "42 s");
        assert_eq!(duration(700.0), "12 min");
        assert_eq!(duration(4137.0), "1 h 8 min");
        assert_eq!(
            (about(0.2).as_str(), about(42.0).as_str()),
            ("under 1 s", "about 42 s")
        );
    }

    #[test]
    fn recorded_times_beat_the_declared_cost() {
        let protocols = registry::find("protocols").unwrap();
        let declared = of(protocols, false, None);
        assert!(
            !declared.recorded && declared.seconds > 3000.0,
            "{declared:?}"
        );
        let row = "| [protocols](protocols/README.md) | t | p | 10 | 20 s | full, seed 1 |";
        let recorded = of(protocols, false, Some(row));
        assert!(recorded.recorded);
        assert_eq!(recorded.seconds, 2.0 * recorded.trials as f64);
    }

    #[test]
    fn a_scenario_that_needs_root_or_long_is_named_with_how_to_skip_it() {
        let plan = Estimate {
            quick: false,
            scenarios: vec![of(registry::find("protocols").unwrap(), false, None)],
        };
        let text = plan.render();
        assert!(
            text.contains("needs root") && text.contains("--skip protocols"),
            "{text}"
        );
    }
}
