//! Every scenario describes the parameters `--set` overrides, and each accepts its own
//! described defaults, so `covey lab params` never shows a name or value a run refuses.

use covey_lab::scenarios::{
    self, cc_bottleneck, fading_goodput, group_delay, group_interference, group_nested,
    mac_contention, object_download, protocols, server_workload,
};

/// Sets every described parameter of `name` to its described default.
fn defaults(name: &str) -> Vec<(String, String)> {
    scenarios::params(name)
        .unwrap()
        .into_iter()
        .map(|p| (p.name.to_string(), p.default))
        .collect()
}

#[test]
fn every_scenario_describes_its_parameters_once_each() {
    for s in scenarios::list() {
        let described = scenarios::params(s.name).unwrap();
        assert!(!described.is_empty(), "{} describes no parameter", s.name);
        let mut names: Vec<&str> = described.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), described.len(), "{}: a name twice", s.name);
    }
}

#[test]
fn every_scenario_accepts_its_described_defaults() {
    for s in scenarios::list() {
        let set = defaults(s.name);
        let accepted = match s.name {
            cc_bottleneck::NAME
            | fading_goodput::NAME
            | server_workload::NAME
            | group_delay::NAME
            | group_interference::NAME
            | group_nested::NAME
            | mac_contention::NAME
            | object_download::NAME
            | protocols::NAME => scenarios::all()
                .iter()
                .find(|x| x.info().name == s.name)
                .map(|x| x.table_problems().is_empty())
                .unwrap_or(false),
            other => panic!("no check for scenario {other}: add it here"),
        };
        assert!(
            accepted,
            "{} refuses its described defaults {set:?}",
            s.name
        );
    }
}
