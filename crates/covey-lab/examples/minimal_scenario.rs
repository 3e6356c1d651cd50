//! A complete lab scenario in one file: delivery ratio on one 802.15.4 channel as the number
//! of senders grows, run by the lab's runner (parameters, seeds, parallel runs, shards, CSV,
//! JSON and Markdown). Registering it for `covey lab run` is one more line in
//! `covey_lab::scenarios::all()`.
//!
//! `cargo run --release -p covey-lab --example minimal_scenario [-- rate=20]`

use covey_lab::framework::{
    runner, Accepts, Param, Plan, RunOptions, Scenario, ScenarioInfo, Trial,
};
use covey_lab::report::folder::ReportFolder;
use covey_lab::{stats, LabError};
use covey_proto::Instant;
use covey_sim::media::ieee802154::{
    Flow, Ieee802154Config, Ieee802154Medium, MacExperiment, PoissonSource, Topology,
};
use serde::{Deserialize, Serialize};

struct Contention;

#[derive(Clone, Serialize, Deserialize)]
struct Params {
    rate: f64,
    seconds: u64,
}

#[derive(Serialize, Deserialize)]
struct Run {
    senders: usize,
    ratio: f64,
}

#[derive(Serialize)]
struct Row {
    senders: usize,
    delivery_ratio: f64,
    ci95_low: f64,
    ci95_high: f64,
}

const PARAMS: &[Param] = &[
    Param {
        name: "rate",
        help: "frames per second per sender",
        accepts: Accepts::Number {
            min: 0.1,
            max: 100.0,
            unit: "frames/s",
        },
    },
    Param {
        name: "seconds",
        help: "simulated seconds per run",
        accepts: Accepts::Integer {
            min: 1,
            max: 3600,
            unit: "s",
        },
    },
];

impl Scenario for Contention {
    type Params = Params;
    type Point = usize;
    type RunResult = Run;
    type Outcome = Vec<Row>;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: "contention",
            title: "Delivery ratio against senders",
            paper: "none",
        }
    }
    fn params(&self) -> &'static [Param] {
        PARAMS
    }
    fn defaults(&self, _quick: bool) -> Params {
        Params {
            rate: 5.0,
            seconds: 60,
        }
    }
    fn default_seeds(&self, _quick: bool) -> usize {
        5
    }
    fn points(&self, _: &Params, _quick: bool) -> Vec<usize> {
        vec![1, 5, 10, 20, 40]
    }
    fn run_point(&self, p: &Params, trial: &Trial<usize>) -> Result<Run, LabError> {
        let config = Ieee802154Config {
            seed: trial.seed,
            ..Ieee802154Config::default()
        };
        let mut experiment = MacExperiment::new(Ieee802154Medium::new(
            config,
            Topology::full_mesh(trial.point + 1),
        ));
        for sender in 1..=trial.point {
            let flow = Flow::unicast(sender, 0, 50);
            experiment.add_source(PoissonSource::new(flow, p.rate, trial.seed ^ sender as u64));
        }
        experiment.run_until(Instant::from_secs(p.seconds));
        experiment.finish();
        Ok(Run {
            senders: trial.point,
            ratio: experiment.delivery_ratio(),
        })
    }
    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<Run>) -> Result<Vec<Row>, LabError> {
        let rows = runs.chunks(plan.seeds).map(|seeds| {
            let ratios: Vec<f64> = seeds.iter().map(|r| r.ratio).collect();
            let ci = stats::mean_ci95(&ratios).unwrap_or(stats::Estimate {
                value: 0.0,
                low: 0.0,
                high: 0.0,
            });
            Row {
                senders: seeds[0].senders,
                delivery_ratio: ci.value,
                ci95_low: ci.low,
                ci95_high: ci.high,
            }
        });
        Ok(rows.collect())
    }
    fn report(&self, rows: &Vec<Row>, folder: &mut ReportFolder) -> Result<String, LabError> {
        folder.rows("points", rows)?;
        let lines: Vec<String> = rows
            .iter()
            .map(|r| format!("| {} | {:.3} |", r.senders, r.delivery_ratio))
            .collect();
        Ok(format!(
            "# contention\n\n| senders | delivery ratio |\n|---|---|\n{}\n",
            lines.join("\n")
        ))
    }
}

fn main() -> Result<(), LabError> {
    let params = std::env::args()
        .skip(1)
        .filter_map(|a| a.split_once('=').map(|(k, v)| (k.into(), v.into())));
    let options = RunOptions {
        out_dir: "target/lab/contention".into(),
        params: params.collect(),
        ..RunOptions::default()
    };
    let summary = runner::run(&Contention, &options)?;
    println!(
        "{}\nfiles in {}",
        summary.markdown,
        options.out_dir.display()
    );
    Ok(())
}
