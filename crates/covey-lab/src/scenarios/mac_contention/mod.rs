//! `mac-contention`: N senders offering Poisson traffic to one sink on one IEEE 802.15.4
//! channel, with receptions judged by SINR (capture) and, beside it on the same geometry,
//! seeds and traffic, by the old any-overlap-destroys model.
//!
//! Method: the sink stands at the centre of a disc of radius [`Params::radius_m`] (15 m), the
//! N senders uniformly at random in it (a fresh layout per seed, the same for every cell of a
//! seed). Each sender offers 50-byte datagrams to the sink as a Poisson process of R a second
//! (unicast, link-layer ACKs, 3 retries, the medium's default CSMA/CA and 8-frame queues) for
//! [`Params::seconds`] of simulated time, then the queues drain. N ∈ {1, 2, 5, 10, 20, 30, 40},
//! R ∈ {1, 2, 5, 10, 20} frames/s.
//!
//! Why this geometry: every pair is at most 30 m apart, where a 0 dBm signal arrives at
//! −84.5 dBm or more (log-distance, n = 3), above the −95 dBm sensitivity, so every node's
//! carrier sense hears every other: a star without hidden terminals. Collisions come only
//! from senders whose backoffs end within one CCA-plus-turnaround of each other, which is the
//! case capture decides; the distances within the disc spread the received powers at the
//! sink over about 35 dB, so some collisions have a clear winner and some do not.
//!
//! Capture: the sink locks onto the first frame whose preamble it detects while idle. A frame
//! starting during it adds its power to the interference; the locked frame survives with the
//! O-QPSK bit error curve of IEEE 802.15.4-2006 Annex E applied bit by bit at the SINR of each
//! stretch of the overlap. When the first frame is the stronger by a few dB it survives (and
//! is ACKed); the later frame is always lost at the sink. Under the Overlap model both are
//! lost. ACKs obey the same rule at their sender. See
//! `covey_sim::media::ieee802154::reception`.

use covey_proto::Instant;
use covey_sim::media::ieee802154::{
    CcaMode, Flow, Ieee802154Config, Ieee802154Medium, MacExperiment, PathLoss, PoissonSource,
    Position, RadioParams, ReceptionModel, Topology,
};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::framework::{Accepts, Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::report::svg::{AxisKind, LineChart, Series};
use crate::stats;
use crate::LabError;

/// The scenario's name.
pub const NAME: &str = "mac-contention";

/// Payload of every datagram, bytes.
pub const PAYLOAD_BYTES: usize = 50;

/// Senders per cell.
pub const SENDERS: [usize; 7] = [1, 2, 5, 10, 20, 30, 40];

/// Offered frames per second per sender.
pub const RATES: [f64; 5] = [1.0, 2.0, 5.0, 10.0, 20.0];

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct MacContention;

/// The parameters, as `--set` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Simulated seconds of offered traffic per run.
    pub seconds: u64,
    /// Radius of the disc the senders stand in, metres.
    pub radius_m: f64,
    /// Log-distance path loss exponent.
    pub path_loss_exponent: f64,
    /// CCA mode under SINR.
    pub cca: String,
}

const CCA_WORDS: &[&str] = &["cs-or-ed", "cs-and-ed", "cs", "ed"];

fn cca_mode(word: &str) -> Option<CcaMode> {
    match word {
        "cs-or-ed" => Some(CcaMode::CarrierSenseOrEnergy),
        "cs-and-ed" => Some(CcaMode::CarrierSenseAndEnergy),
        "cs" => Some(CcaMode::CarrierSense),
        "ed" => Some(CcaMode::EnergyDetection),
        _ => None,
    }
}

const PARAMS: &[Param] = &[
    Param {
        name: "seconds",
        help: "simulated seconds of offered traffic per run",
        accepts: Accepts::Integer {
            min: 1,
            max: 3600,
            unit: "s",
        },
    },
    Param {
        name: "radius_m",
        help: "radius of the disc of senders around the sink",
        accepts: Accepts::Number {
            min: 1.0,
            max: 1000.0,
            unit: "m",
        },
    },
    Param {
        name: "path_loss_exponent",
        help: "log-distance path loss exponent (2 = free space)",
        accepts: Accepts::Number {
            min: 1.5,
            max: 6.0,
            unit: "",
        },
    },
    Param {
        name: "cca",
        help: "CCA mode under SINR: carrier sense or energy (CC2420 default), and, \
               carrier sense only, energy only",
        accepts: Accepts::OneOf(CCA_WORDS),
    },
];

/// One cell of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Senders.
    pub senders: usize,
    /// Frames per second per sender.
    pub rate: f64,
}

/// What one reception model gave in one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelRun {
    /// Delivered / offered.
    pub delivery: f64,
    /// Mean delay of delivered datagrams, offer to confirm, ms.
    pub delay_ms: f64,
    /// Delivered payload, kbit/s.
    pub throughput_kbps: f64,
}

/// One run: both models on the same layout and traffic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The cell.
    pub cell: Cell,
    /// Under SINR.
    pub sinr: ModelRun,
    /// Under Overlap.
    pub overlap: ModelRun,
}

/// One cell's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Senders.
    pub senders: usize,
    /// Frames per second per sender.
    pub rate: f64,
    /// Delivery ratio under SINR, mean over seeds.
    pub sinr_delivery: f64,
    /// Its 95 % interval, low.
    pub sinr_ci_low: f64,
    /// Its 95 % interval, high.
    pub sinr_ci_high: f64,
    /// Mean delay under SINR, ms.
    pub sinr_delay_ms: f64,
    /// Throughput under SINR, kbit/s.
    pub sinr_throughput_kbps: f64,
    /// Delivery ratio under Overlap, mean over seeds.
    pub overlap_delivery: f64,
    /// Its 95 % interval, low.
    pub overlap_ci_low: f64,
    /// Its 95 % interval, high.
    pub overlap_ci_high: f64,
    /// Mean delay under Overlap, ms.
    pub overlap_delay_ms: f64,
    /// Throughput under Overlap, kbit/s.
    pub overlap_throughput_kbps: f64,
}

/// The sweep's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The parameters.
    pub params: Params,
    /// Seeds per cell.
    pub seeds: usize,
    /// One row per cell.
    pub rows: Vec<Row>,
}

/// The sink at the origin and `senders` senders uniformly in the disc of `radius_m`.
pub fn layout(senders: usize, radius_m: f64, seed: u64) -> Vec<Position> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6c61_796f_7574);
    let mut positions = vec![Position { x: 0.0, y: 0.0 }];
    for _ in 0..senders {
        let r = radius_m * rng.random::<f64>().sqrt();
        let angle = 2.0 * std::f64::consts::PI * rng.random::<f64>();
        positions.push(Position {
            x: r * angle.cos(),
            y: r * angle.sin(),
        });
    }
    positions
}

/// One run of `cell` with `seed` under `reception`.
pub fn run_model(params: &Params, cell: Cell, seed: u64, reception: ReceptionModel) -> ModelRun {
    // The senders' layout depends on the seed only, so cells of one seed share it (each cell
    // takes the first N senders of the 40).
    let mut positions = layout(*SENDERS.iter().max().unwrap_or(&40), params.radius_m, seed);
    positions.truncate(cell.senders + 1);
    let topology = Topology::from_positions(positions, 2.0 * params.radius_m + 1.0);
    let config = Ieee802154Config {
        seed,
        reception,
        ..Ieee802154Config::default()
    };
    let mut experiment = MacExperiment::new(Ieee802154Medium::new(config, topology));
    for sender in 1..=cell.senders {
        let flow = Flow::unicast(sender, 0, PAYLOAD_BYTES);
        let stream = seed.wrapping_mul(1_000_003) ^ sender as u64;
        experiment.add_source(PoissonSource::new(flow, cell.rate, stream));
    }
    experiment.run_until(Instant::from_secs(params.seconds));
    experiment.finish();
    let delays: Vec<f64> = experiment
        .outcomes()
        .iter()
        .filter(|o| o.delivered())
        .map(|o| o.delay().as_secs_f64() * 1e3)
        .collect();
    let bits = (delays.len() * PAYLOAD_BYTES * 8) as f64;
    ModelRun {
        delivery: experiment.delivery_ratio(),
        delay_ms: stats::mean(&delays).unwrap_or(0.0),
        throughput_kbps: bits / params.seconds as f64 / 1e3,
    }
}

/// The SINR model of a run with `params`.
pub fn sinr_model(params: &Params) -> Result<ReceptionModel, LabError> {
    let cca = cca_mode(&params.cca)
        .ok_or_else(|| LabError::InvalidOption(format!("{NAME}: no CCA mode {}", params.cca)))?;
    Ok(ReceptionModel::Sinr(RadioParams {
        path_loss: PathLoss::log_distance(params.path_loss_exponent),
        cca,
        ..RadioParams::default()
    }))
}

impl Scenario for MacContention {
    type Params = Params;
    type Point = Cell;
    type RunResult = Run;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "Delivery, delay and throughput of N Poisson senders to one sink, with \
                    capture (SINR reception) and without (any overlap destroys)",
            paper: "none (model validation: IEEE 802.15.4-2006 Annex E, ns-3 lr-wpan)",
        }
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn defaults(&self, quick: bool) -> Params {
        Params {
            seconds: if quick { 10 } else { 60 },
            radius_m: 15.0,
            path_loss_exponent: 3.0,
            cca: "cs-or-ed".into(),
        }
    }

    fn check(&self, params: &Params) -> Result<(), LabError> {
        sinr_model(params).map(|_| ())
    }

    fn default_seeds(&self, quick: bool) -> usize {
        if quick {
            2
        } else {
            5
        }
    }

    fn points(&self, _: &Params, quick: bool) -> Vec<Cell> {
        let senders: &[usize] = if quick { &[1, 10, 40] } else { &SENDERS };
        let rates: &[f64] = if quick { &[2.0, 20.0] } else { &RATES };
        senders
            .iter()
            .flat_map(|&senders| rates.iter().map(move |&rate| Cell { senders, rate }))
            .collect()
    }

    fn run_point(&self, params: &Params, trial: &Trial<Cell>) -> Result<Run, LabError> {
        let sinr = sinr_model(params)?;
        Ok(Run {
            cell: trial.point,
            sinr: run_model(params, trial.point, trial.seed, sinr),
            overlap: run_model(params, trial.point, trial.seed, ReceptionModel::Overlap),
        })
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<Run>) -> Result<Outcome, LabError> {
        let seeds = plan.seeds.max(1);
        let rows = runs
            .chunks(seeds)
            .filter_map(|runs| {
                let cell = runs.first()?.cell;
                let estimate = |f: &dyn Fn(&Run) -> f64| {
                    let values: Vec<f64> = runs.iter().map(f).collect();
                    stats::mean_ci95(&values).unwrap_or(stats::Estimate {
                        value: 0.0,
                        low: 0.0,
                        high: 0.0,
                    })
                };
                let sinr = estimate(&|r| r.sinr.delivery);
                let overlap = estimate(&|r| r.overlap.delivery);
                Some(Row {
                    senders: cell.senders,
                    rate: cell.rate,
                    sinr_delivery: sinr.value,
                    sinr_ci_low: sinr.low,
                    sinr_ci_high: sinr.high,
                    sinr_delay_ms: estimate(&|r| r.sinr.delay_ms).value,
                    sinr_throughput_kbps: estimate(&|r| r.sinr.throughput_kbps).value,
                    overlap_delivery: overlap.value,
                    overlap_ci_low: overlap.low,
                    overlap_ci_high: overlap.high,
                    overlap_delay_ms: estimate(&|r| r.overlap.delay_ms).value,
                    overlap_throughput_kbps: estimate(&|r| r.overlap.throughput_kbps).value,
                })
            })
            .collect();
        Ok(Outcome {
            params: plan.params.clone(),
            seeds,
            rows,
        })
    }

    fn report(&self, outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
        folder.rows("cells", &outcome.rows)?;
        folder.svg(None, &delivery_chart(outcome))?;
        let mut page = String::from(PAGE_HEAD);
        page.push_str(&format!("![delivery ratio against senders]({NAME}.svg)\n"));
        page.push_str(&format!(
            "\n{} seeds per cell, {} s of offered traffic each, senders in a disc of {} m, \
             path loss exponent {}, CCA `{}`.\n\n",
            outcome.seeds,
            outcome.params.seconds,
            outcome.params.radius_m,
            outcome.params.path_loss_exponent,
            outcome.params.cca
        ));
        page.push_str(
            "| N | R /s | delivery SINR [95 % CI] | delivery Overlap [95 % CI] | delay SINR ms | \
             delay Overlap ms | throughput SINR kbit/s | throughput Overlap kbit/s |\n\
             |---:|---:|---|---|---:|---:|---:|---:|\n",
        );
        for r in &outcome.rows {
            page.push_str(&format!(
                "| {} | {} | {:.4} [{:.4}, {:.4}] | {:.4} [{:.4}, {:.4}] | {:.1} | {:.1} | {:.2} \
                 | {:.2} |\n",
                r.senders,
                r.rate,
                r.sinr_delivery,
                r.sinr_ci_low,
                r.sinr_ci_high,
                r.overlap_delivery,
                r.overlap_ci_low,
                r.overlap_ci_high,
                r.sinr_delay_ms,
                r.overlap_delay_ms,
                r.sinr_throughput_kbps,
                r.overlap_throughput_kbps
            ));
        }
        Ok(page)
    }
}

/// Delivery ratio against the number of senders, one line per rate and reception model.
fn delivery_chart(outcome: &Outcome) -> LineChart {
    let mut rates: Vec<f64> = outcome.rows.iter().map(|r| r.rate).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let mut series = Vec::new();
    for rate in rates {
        for (model, pick) in [
            ("SINR", (|r: &Row| r.sinr_delivery) as fn(&Row) -> f64),
            ("Overlap", |r: &Row| r.overlap_delivery),
        ] {
            series.push(Series {
                name: format!("{rate} frames/s, {model}"),
                points: outcome
                    .rows
                    .iter()
                    .filter(|r| r.rate == rate)
                    .map(|r| (r.senders as f64, pick(r)))
                    .collect(),
            });
        }
    }
    LineChart {
        title: "Delivery ratio against senders, SINR capture and any-overlap loss".into(),
        x_label: "senders".into(),
        x_kind: AxisKind::Count,
        y_label: "delivery ratio".into(),
        series,
    }
}

/// The page's explanation, before the table.
const PAGE_HEAD: &str = "# mac-contention\n\n\
N senders offer 50-byte datagrams to one sink as Poisson processes of R frames/s each, with \
link-layer ACKs, over one IEEE 802.15.4 channel. The sink stands at the centre of a disc, \
the senders uniformly at random inside it; every pair is close enough to hear each other \
(carrier sense reaches −95 dBm, the farthest pair arrives at −84.5 dBm), so there are no \
hidden terminals and a collision happens only when two backoffs end within a CCA and a \
turnaround of each other.\n\n\
It reproduces no paper's figure: it checks the medium the papers' scenarios run on against \
the standard's reception rule (IEEE 802.15.4-2006 Annex E, as ns-3's lr-wpan model applies \
it), with the earlier any-overlap model beside it.\n\n\
## Capture\n\n\
Receptions are judged by signal to interference (`ReceptionModel::Sinr`). A receiver locks \
onto the first frame it detects while idle (at or above its −95 dBm sensitivity, the \
CC2420's); a frame starting while it is locked is not received there and only adds its power \
to the interference. The locked frame survives with the product, over the stretches of \
constant interference, of (1 − BER)^bits, where BER is the O-QPSK curve of IEEE 802.15.4-2006 \
Annex E at that stretch's SINR (noise: −174 dBm/Hz over 2 MHz plus a 15.6 dB noise figure). \
So when two senders collide the earlier frame gets through if it arrives a few dB stronger \
than the later one, and the ACK that follows obeys the same rule at its sender; a later, \
stronger frame does not take over. The Overlap columns run the same layouts, seeds and \
offers under the old model, in which any overlap destroys both frames: the difference is \
what capture is worth.\n";
