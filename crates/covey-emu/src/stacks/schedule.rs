//! The publisher's pacing: `count` messages of `size` bytes at `rate_hz`, each reported as
//! sent when it leaves the application.

use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::telemetry::{message, now_ns, AgentEvent};

/// How many messages a publisher sends, how fast and how big.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Messages in the run.
    pub count: u64,
    /// Messages per second (the paper's 4).
    pub rate_hz: f64,
    /// Bytes of JSON per message (the paper's 409).
    pub size: usize,
}

impl Schedule {
    /// The time between two messages (at least 1 µs, for a rate of any size).
    pub fn interval(&self) -> Duration {
        let rate = if self.rate_hz.is_finite() && self.rate_hz > 0.0 {
            self.rate_hz
        } else {
            1.0
        };
        Duration::from_secs_f64((1.0 / rate).max(1e-6))
    }

    /// How long the run takes to send every message.
    pub fn duration(&self) -> Duration {
        self.interval()
            .saturating_mul(u32::try_from(self.count).unwrap_or(u32::MAX))
    }

    /// Calls `send(seq, payload)` for each message on time, reporting it as sent first; a
    /// `send` that falls behind delays the next ones rather than bunching them up.
    pub async fn run<F, Fut>(&self, mut send: F)
    where
        F: FnMut(u64, Vec<u8>) -> Fut,
        Fut: Future<Output = ()>,
    {
        let mut ticks = tokio::time::interval(self.interval());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for seq in 0..self.count {
            ticks.tick().await;
            AgentEvent::Sent {
                seq,
                t_ns: now_ns(),
            }
            .emit();
            send(seq, message(seq, self.size)).await;
        }
    }
}

/// Reports `payload` as received now when it is a telemetry message.
pub fn report_received(payload: &[u8]) {
    if let Some(seq) = super::telemetry::sequence_of(payload) {
        AgentEvent::Received {
            seq,
            t_ns: now_ns(),
        }
        .emit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_and_duration_follow_the_rate() {
        let s = Schedule {
            count: 8,
            rate_hz: 4.0,
            size: 409,
        };
        assert_eq!(s.interval(), Duration::from_millis(250));
        assert_eq!(s.duration(), Duration::from_secs(2));
        let bad = Schedule { rate_hz: 0.0, ..s };
        assert_eq!(bad.interval(), Duration::from_secs(1));
    }
}
