//! The network conditions of the sweep: loss, latency and bandwidth each varied alone, as the
//! paper did, plus its low-quality network.

use covey_emu::stacks::network::LinkCondition;
use serde::Serialize;

use super::paper;

/// Which sweep a condition belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Loss varied, no delay, no cap.
    Loss,
    /// Delay varied, no loss, no cap.
    Latency,
    /// Cap varied, no loss, no delay.
    Bandwidth,
    /// The paper's low-quality network (10 %, 100 ± 20 ms, 6.25 kB/s).
    LowQuality,
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Condition {
    /// The sweep it belongs to.
    pub axis: Axis,
    /// The link condition (every link, both directions).
    pub link: LinkCondition,
}

impl Axis {
    /// The name `--set conditions=` gives the axis.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Loss => "loss",
            Axis::Latency => "latency",
            Axis::Bandwidth => "bandwidth",
            Axis::LowQuality => "low-quality",
        }
    }
}

impl Condition {
    /// The value on its axis: loss in %, delay in ms, cap in kB/s (0 for the low-quality
    /// point).
    pub fn x(&self) -> f64 {
        match self.axis {
            Axis::Loss => self.link.loss * 100.0,
            Axis::Latency => self.link.delay_s * 1000.0,
            Axis::Bandwidth => self.link.rate_bytes_per_s.map_or(0.0, |r| r / 1000.0),
            Axis::LowQuality => 0.0,
        }
    }

    /// A short label.
    pub fn label(&self) -> String {
        match self.axis {
            Axis::Loss => format!("loss {:.0} %", self.x()),
            Axis::Latency => format!("latency {:.0} ms", self.x()),
            Axis::Bandwidth => format!("cap {} kB/s", self.x()),
            Axis::LowQuality => "low quality (10 %, 100 ± 20 ms, 6.25 kB/s)".into(),
        }
    }

    /// The paper's low-quality network.
    pub fn low_quality() -> Condition {
        Condition {
            axis: Axis::LowQuality,
            link: LinkCondition {
                loss: paper::LOW_QUALITY_LOSS,
                delay_s: paper::LOW_QUALITY_DELAY_S,
                rate_bytes_per_s: Some(paper::LOW_QUALITY_RATE),
            },
        }
    }

    /// The full sweep: loss 0–25 % in 5 % steps, latency 100–400 ms, caps 50 to 6.25 kB/s,
    /// and the low-quality point.
    pub fn full() -> Vec<Condition> {
        let clean = LinkCondition::CLEAN;
        let mut all = Vec::new();
        for loss in [0.0, 0.05, 0.10, 0.15, 0.20, 0.25] {
            all.push(Condition {
                axis: Axis::Loss,
                link: LinkCondition { loss, ..clean },
            });
        }
        for delay_s in [0.1, 0.2, 0.3, 0.4] {
            all.push(Condition {
                axis: Axis::Latency,
                link: LinkCondition { delay_s, ..clean },
            });
        }
        for rate in [50_000.0, 25_000.0, 12_500.0, 6_250.0] {
            all.push(Condition {
                axis: Axis::Bandwidth,
                link: LinkCondition {
                    rate_bytes_per_s: Some(rate),
                    ..clean
                },
            });
        }
        all.push(Condition::low_quality());
        all
    }

    /// The CI-sized sweep: the low-quality point alone.
    pub fn quick() -> Vec<Condition> {
        vec![Condition::low_quality()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_sweep_varies_one_thing_at_a_time() {
        let all = Condition::full();
        assert_eq!(all.len(), 15);
        for c in &all {
            let l = c.link;
            let varied = [l.loss > 0.0, l.delay_s > 0.0, l.rate_bytes_per_s.is_some()];
            let n = varied.iter().filter(|v| **v).count();
            match c.axis {
                Axis::LowQuality => assert_eq!(n, 3),
                Axis::Loss if l.loss == 0.0 => assert_eq!(n, 0),
                _ => assert_eq!(n, 1, "{}", c.label()),
            }
        }
        assert_eq!(
            Condition::low_quality().label(),
            "low quality (10 %, 100 ± 20 ms, 6.25 kB/s)"
        );
    }
}
