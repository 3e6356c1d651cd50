//! `cc-bottleneck`: CoAP congestion control algorithms behind a Zigbee-like bottleneck
//! (Järvinen, Daniel, Kojo, WF-IoT 2015; seed 003, spec `lab-experiments.md` §1).
//!
//! Method, as the paper's: N CoAP clients fetch a small resource from one server across a
//! bottleneck of 20 kbit/s, 20 ms one-way delay and 128-byte MTU (the paper used netem;
//! we model netem's rate, delay and drop-tail `limit`, counting IPv6 and UDP headers).
//! Every client sends CON GETs with NSTART 1. A *continuous* client runs 50 exchanges back
//! to back; a *random* client runs 1–10, then a fresh client (fresh RTO state) continues
//! until 50. Workloads: continuous, random, mixed (half each), competing (half default
//! CoAP, half the algorithm under test, continuous clients). N ∈ {10, 20, 30, 40, 80}.
//! Metrics: client completion time, client RTOmax (the longest retransmission timeout that
//! expired), and how many exchanges succeeded after 0, 1, 2 … retransmissions, read from
//! the engines' `Stats`.
//!
//! Modelling choices the paper leaves open, stated here: the retry limit is 8 (its Table 1
//! reaches the 8th retransmission), failures are reported apart; the drop-tail queue holds
//! 1000 packets per direction (netem's default `limit`, the paper names none); clients start
//! at uniform random times within the first second (separate client processes); the
//! response carries a 6-byte payload.
//!
//! What a netem set-up can add, as parameters that default to none of it (so the main
//! results are the loss-free ones): random loss (`loss`, netem's `loss random PERCENT`,
//! which tc-netem(8) describes as "an independent loss probability to the packets outgoing
//! from the chosen network interface": Bernoulli per packet, here per IP fragment, on the
//! directions `loss_direction` names), the response's payload size (`payload`; the paper
//! says its objects were 10 to 1000 bytes) and how a datagram over the MTU is cut
//! (`fragmentation`: RFC 4944 fragments queued as one datagram, or IP fragments that each
//! take a queue slot and meet the loss on their own, as a Linux host in front of netem
//! sends them). [`retx_sweep`] sweeps them for the share of retransmitted CONs.

pub mod client;
pub mod node;
pub mod paper;
pub mod report;
pub mod results;
pub mod retx_report;
pub mod retx_sweep;
pub mod run;
pub mod sensitivity;
pub mod server;

use covey_proto::cc::Algorithm;
use covey_proto::Duration;
use covey_sim::media::{Fragmentation, HeaderModel, LossSpec};
use serde::{Deserialize, Serialize};

use crate::framework::{Accepts, Param, Plan, Scenario, ScenarioInfo, Trial};
use crate::report::folder::ReportFolder;
use crate::LabError;
pub use results::{aggregate, Aggregate, ClientResult, RunResult};
pub use sensitivity::Variant;

/// The scenario's name.
pub const NAME: &str = "cc-bottleneck";

/// The scenario, for the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct CcBottleneck;

/// The client mixes of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Every client continuous.
    Continuous,
    /// Every client random.
    Random,
    /// Half continuous, half random.
    Mixed,
    /// Half default CoAP, half the algorithm under test (continuous clients).
    Competing,
}

impl Workload {
    /// All four workloads.
    pub const ALL: [Workload; 4] = [
        Workload::Continuous,
        Workload::Random,
        Workload::Mixed,
        Workload::Competing,
    ];

    /// The workload's name in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Workload::Continuous => "continuous",
            Workload::Random => "random",
            Workload::Mixed => "mixed",
            Workload::Competing => "competing",
        }
    }
}

/// The header bytes counted per datagram, as `--set header=` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Headers {
    /// IPv6 and UDP (48 bytes).
    #[serde(rename = "ipv6")]
    Ipv6,
    /// IPv4 and UDP (28 bytes).
    #[serde(rename = "ipv4")]
    Ipv4,
    /// 6LoWPAN IPHC with NHC-compressed UDP.
    #[serde(rename = "6lowpan")]
    SixLowpan,
}

impl Headers {
    /// The names `--set header=` takes, in the order of the variants.
    pub const NAMES: &'static [&'static str] = &["ipv6", "ipv4", "6lowpan"];

    /// The IP version's name in prose.
    pub const fn short_name(self) -> &'static str {
        match self {
            Headers::Ipv6 => "IPv6",
            Headers::Ipv4 => "IPv4",
            Headers::SixLowpan => "6LoWPAN",
        }
    }

    /// The link's header model.
    pub const fn model(self) -> HeaderModel {
        match self {
            Headers::Ipv6 => HeaderModel::Ipv6Udp,
            Headers::Ipv4 => HeaderModel::Ipv4Udp,
            Headers::SixLowpan => HeaderModel::SixLowpanIphcNhc,
        }
    }
}

/// The bottleneck directions netem's random loss applies to, as `--set loss_direction=`
/// names them. netem acts on the egress of the interface it is attached to, so "up" is
/// netem on the router's server-side interface, "down" on its client-side one, "both" on
/// both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossDirection {
    /// Requests and responses.
    Both,
    /// Client to server (requests) only.
    Up,
    /// Server to client (responses) only.
    Down,
}

impl LossDirection {
    /// The names `--set loss_direction=` takes, in the order of the variants.
    pub const NAMES: &'static [&'static str] = &["both", "up", "down"];

    /// Whether the loss applies to the client-to-server direction.
    pub const fn up(self) -> bool {
        matches!(self, LossDirection::Both | LossDirection::Up)
    }

    /// Whether the loss applies to the server-to-client direction.
    pub const fn down(self) -> bool {
        matches!(self, LossDirection::Both | LossDirection::Down)
    }
}

/// How the bottleneck cuts a datagram over its MTU, as `--set fragmentation=` names it
/// (see [`Fragmentation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fragments {
    /// RFC 4944 fragments; the queue holds whole datagrams.
    Lowpan,
    /// IP fragments, each its own packet in the queue and for the loss.
    Ip,
}

impl Fragments {
    /// The names `--set fragmentation=` takes, in the order of the variants.
    pub const NAMES: &'static [&'static str] = Fragmentation::NAMES;

    /// The link's fragmentation.
    pub const fn model(self) -> Fragmentation {
        match self {
            Fragments::Lowpan => Fragmentation::Lowpan,
            Fragments::Ip => Fragmentation::Ip,
        }
    }
}

/// netem's default `limit`, the drop-tail queue when the paper names none.
pub const NETEM_LIMIT: usize = 1000;

/// The parameters of the experiment, as `--set` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Drop-tail queue per direction, packets.
    pub queue: usize,
    /// MAX_RETRANSMIT of every endpoint.
    pub max_retransmit: u8,
    /// Bottleneck rate, bit/s.
    pub rate: u64,
    /// Bottleneck one-way delay, ms.
    pub delay_ms: u64,
    /// Bottleneck MTU, bytes.
    pub mtu: usize,
    /// Header bytes counted per datagram.
    pub header: Headers,
    /// Exchanges per client.
    pub exchanges: u32,
    /// Clients start within this time of the run's start, ms.
    pub start_spread_ms: u64,
    /// Virtual time after which a run is stopped, ms.
    pub time_limit_ms: u64,
    /// netem random loss on the bottleneck, percent per packet (IP fragment).
    pub loss: f64,
    /// The bottleneck directions the random loss applies to.
    pub loss_direction: LossDirection,
    /// The response's payload, bytes.
    pub payload: usize,
    /// How a datagram over the MTU is fragmented and queued.
    pub fragmentation: Fragments,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            queue: NETEM_LIMIT,
            max_retransmit: 8,
            rate: 20_000,
            delay_ms: 20,
            mtu: 128,
            header: Headers::Ipv6,
            exchanges: 50,
            start_spread_ms: 1000,
            time_limit_ms: 6 * 3600 * 1000,
            loss: 0.0,
            loss_direction: LossDirection::Both,
            payload: server::REPRESENTATION.len(),
            fragmentation: Fragments::Lowpan,
        }
    }
}

impl Params {
    /// The bottleneck's one-way delay.
    pub fn one_way_delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms)
    }

    /// Clients start at uniform random times within this of the run's start.
    pub fn start_spread(&self) -> Duration {
        Duration::from_millis(self.start_spread_ms)
    }

    /// Virtual time after which a run is stopped.
    pub fn time_limit(&self) -> Duration {
        Duration::from_millis(self.time_limit_ms)
    }

    /// The header bytes counted per datagram.
    pub fn header_model(&self) -> HeaderModel {
        self.header.model()
    }

    /// The loss model of the client-to-server (`up`) or server-to-client direction.
    pub fn loss_spec(&self, up: bool) -> LossSpec {
        let applies = if up {
            self.loss_direction.up()
        } else {
            self.loss_direction.down()
        };
        if applies && self.loss > 0.0 {
            LossSpec::Bernoulli {
                p: self.loss / 100.0,
            }
        } else {
            LossSpec::None
        }
    }
}

/// The parameter table.
const PARAMS: &[Param] = &[
    Param {
        name: "queue",
        help: "drop-tail queue per direction (netem's default limit; the paper names none)",
        accepts: Accepts::Integer {
            min: 0,
            max: 1_000_000,
            unit: "packets",
        },
    },
    Param {
        name: "max_retransmit",
        help: "MAX_RETRANSMIT of every endpoint (the paper's Table 1 reaches the 8th)",
        accepts: Accepts::Integer {
            min: 0,
            max: 20,
            unit: "",
        },
    },
    Param {
        name: "rate",
        help: "bottleneck rate",
        accepts: Accepts::Integer {
            min: 1,
            max: 1_000_000_000,
            unit: "bit/s",
        },
    },
    Param {
        name: "delay_ms",
        help: "bottleneck one-way delay",
        accepts: Accepts::Integer {
            min: 0,
            max: 60_000,
            unit: "ms",
        },
    },
    Param {
        name: "mtu",
        help: "bottleneck MTU",
        accepts: Accepts::Integer {
            min: 16,
            max: 65_535,
            unit: "bytes",
        },
    },
    Param {
        name: "header",
        help: "header bytes counted per datagram",
        accepts: Accepts::OneOf(Headers::NAMES),
    },
    Param {
        name: "exchanges",
        help: "exchanges per client",
        accepts: Accepts::Integer {
            min: 1,
            max: 100_000,
            unit: "",
        },
    },
    Param {
        name: "start_spread_ms",
        help: "clients start at random times within this",
        accepts: Accepts::Integer {
            min: 0,
            max: 3_600_000,
            unit: "ms",
        },
    },
    Param {
        name: "time_limit_ms",
        help: "virtual time after which a run is stopped",
        accepts: Accepts::Integer {
            min: 1,
            max: 7 * 24 * 3_600_000,
            unit: "ms",
        },
    },
    Param {
        name: "loss",
        help: "netem random loss on the bottleneck, independent per packet (IP fragment); \
               the paper names none",
        accepts: Accepts::Number {
            min: 0.0,
            max: 100.0,
            unit: "%",
        },
    },
    Param {
        name: "loss_direction",
        help: "bottleneck directions the random loss applies to (up: client to server)",
        accepts: Accepts::OneOf(LossDirection::NAMES),
    },
    Param {
        name: "payload",
        help: "the response's payload (the paper: objects of 10 to 1000 bytes)",
        accepts: Accepts::Integer {
            min: 0,
            max: 1024,
            unit: "bytes",
        },
    },
    Param {
        name: "fragmentation",
        help: "datagrams over the MTU: lowpan (RFC 4944, queued whole) or ip (each fragment \
               queued and lost on its own, as before netem)",
        accepts: Accepts::OneOf(Fragments::NAMES),
    },
];

/// The points and seeds of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Algorithms under test.
    #[serde(serialize_with = "serialize_algorithms")]
    pub algorithms: Vec<Algorithm>,
    /// Client counts.
    pub clients: Vec<usize>,
    /// Workloads.
    pub workloads: Vec<Workload>,
    /// Seeds per point.
    pub seeds: usize,
}

fn serialize_algorithms<S: serde::Serializer>(a: &[Algorithm], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(a.iter().map(|a| a.name()))
}

impl Sweep {
    /// The paper's full sweep: 6 algorithms × {10, 20, 30, 40, 80} clients × 4 workloads.
    pub fn full(seeds: usize) -> Sweep {
        Sweep {
            algorithms: Algorithm::ALL.to_vec(),
            clients: vec![10, 20, 30, 40, 80],
            workloads: Workload::ALL.to_vec(),
            seeds,
        }
    }

    /// A CI-sized sweep that still shows the paper's conclusions: every algorithm, 10, 40
    /// and 80 clients, the two workloads of the paper's Table 1.
    pub fn quick(seeds: usize) -> Sweep {
        Sweep {
            algorithms: Algorithm::ALL.to_vec(),
            clients: vec![10, 40, 80],
            workloads: vec![Workload::Continuous, Workload::Random],
            seeds,
        }
    }

    /// The quick or the full sweep.
    pub fn of(quick: bool, seeds: usize) -> Sweep {
        if quick {
            Sweep::quick(seeds)
        } else {
            Sweep::full(seeds)
        }
    }

    /// The sweep's points in report order: workloads, then client counts, then algorithms.
    pub fn points(&self) -> Vec<Point> {
        let mut points = Vec::new();
        for &workload in &self.workloads {
            for &clients in &self.clients {
                for &algorithm in &self.algorithms {
                    points.push(Point {
                        variant: Variant::Configured,
                        algorithm,
                        workload,
                        clients,
                    });
                }
            }
        }
        points
    }

    /// Where `run` comes in report order (the sweep's points, each point's seeds in turn).
    fn order(&self, run: &RunResult) -> (usize, usize, usize, usize) {
        let at = |found: Option<usize>| found.unwrap_or(usize::MAX);
        (
            at(self.workloads.iter().position(|&w| w == run.workload)),
            at(self.clients.iter().position(|&n| n == run.clients)),
            at(self.algorithms.iter().position(|&a| a == run.algorithm)),
            run.seed_index,
        )
    }
}

/// One point of the sweep: the main sweep's (variant [`Variant::Configured`]) or the
/// sensitivity study's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// The parameters as configured, or one changed for the sensitivity study.
    pub variant: Variant,
    /// The algorithm under test.
    #[serde(serialize_with = "results::algorithm_name")]
    pub algorithm: Algorithm,
    /// The workload.
    pub workload: Workload,
    /// Number of clients.
    pub clients: usize,
}

/// One run of a sweep.
#[derive(Debug, Clone, Copy)]
pub struct RunPoint {
    /// The algorithm under test.
    pub algorithm: Algorithm,
    /// The workload.
    pub workload: Workload,
    /// Number of clients.
    pub clients: usize,
    /// Which seed of the point.
    pub seed_index: usize,
    /// The run seed.
    pub run_seed: u64,
}

/// What one run carries between processes: the run, and its clients, which the run's own serde form leaves out so that the JSON stays small.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    /// The run's own measurements.
    pub run: RunResult,
    /// Its clients' measurements.
    pub clients: Vec<ClientResult>,
}

/// Everything a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The experiment's parameters.
    pub params: Params,
    /// The sweep.
    pub sweep: Sweep,
    /// The base seed.
    pub seed: u64,
    /// Every run of the main sweep, in sweep order.
    pub runs: Vec<RunResult>,
    /// Aggregates per class.
    pub aggregates: Vec<Aggregate>,
    /// The sensitivity study.
    pub sensitivity: Vec<sensitivity::SensitivityRow>,
    /// The retransmission sweep over netem's loss, queue and message size.
    pub retransmissions: Vec<retx_sweep::RetxRow>,
}

impl Scenario for CcBottleneck {
    type Params = Params;
    type Point = Point;
    type RunResult = Measured;
    type Outcome = Outcome;

    fn info(&self) -> ScenarioInfo {
        ScenarioInfo {
            name: NAME,
            title: "CoAP congestion control algorithms behind a 20 kbit/s bottleneck",
            paper: "Järvinen, Daniel, Kojo: Experimental Evaluation of Alternative Congestion \
                    Control Algorithms for CoAP (WF-IoT 2015)",
        }
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn defaults(&self, _quick: bool) -> Params {
        Params::default()
    }

    fn default_seeds(&self, quick: bool) -> usize {
        if quick {
            2
        } else {
            10
        }
    }

    /// The sensitivity study's changed settings run [`sensitivity::SEEDS`] seeds at most.
    fn seeds_at(&self, point: &Point, seeds: usize) -> usize {
        if point.variant == Variant::Configured {
            seeds
        } else {
            seeds.min(sensitivity::SEEDS)
        }
    }

    /// The main sweep, then the sensitivity study's variants, largest runs first so that
    /// the last runs to finish are short and every core stays busy to the end (the
    /// aggregate puts the runs back in report order).
    fn points(&self, _: &Params, quick: bool) -> Vec<Point> {
        let mut points = Sweep::of(quick, 0).points();
        points.extend(sensitivity::points());
        points.extend(retx_sweep::points(quick));
        points.sort_by_key(|p| std::cmp::Reverse(p.clients));
        points
    }

    fn run_point(&self, params: &Params, trial: &Trial<Point>) -> Result<Measured, LabError> {
        let point = trial.point;
        let run_point = RunPoint {
            algorithm: point.algorithm,
            workload: point.workload,
            clients: point.clients,
            seed_index: trial.seed_index,
            run_seed: trial.seed,
        };
        let mut run = run::run_point(&run_point, &point.variant.params(params));
        let clients = std::mem::take(&mut run.results);
        Ok(Measured { run, clients })
    }

    fn aggregate(&self, plan: &Plan<'_, Self>, runs: Vec<Measured>) -> Result<Outcome, LabError> {
        let sweep = Sweep::of(plan.quick, plan.seeds);
        let mut main = Vec::new();
        let mut variants = Vec::new();
        let mut netem = Vec::new();
        for (trial, measured) in plan.trials.iter().zip(runs) {
            let Measured { mut run, clients } = measured;
            run.results = clients;
            match trial.point.variant {
                Variant::Configured => main.push(run),
                Variant::Netem(setting) => netem.push((setting, run)),
                variant => variants.push((variant, run)),
            }
        }
        main.sort_by_key(|r| sweep.order(r));
        Ok(Outcome {
            params: plan.params.clone(),
            aggregates: aggregate(&main),
            sensitivity: sensitivity::study(&main, &variants),
            retransmissions: retx_sweep::study(&netem),
            sweep,
            seed: plan.seed,
            runs: main,
        })
    }

    fn report(&self, outcome: &Outcome, folder: &mut ReportFolder) -> Result<String, LabError> {
        report::write(outcome, folder)
    }
}
