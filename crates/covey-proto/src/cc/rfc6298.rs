//! The RFC 6298 TCP retransmission timer, with Karn's rule and persistent backoff.

use super::{abs, backoff, duration, secs, RtoEstimator};
use crate::time::{Duration, Instant};

/// SRTT gain α of RFC 6298 (also CoCoA's).
pub(crate) const ALPHA: f64 = 1.0 / 8.0;
/// RTTVAR gain β of RFC 6298 (also CoCoA's).
pub(crate) const BETA: f64 = 1.0 / 4.0;

/// RFC 6298 §2 smoothed RTT and variation, in seconds (shared with CoCoA's estimators).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SmoothedRtt {
    srtt: f64,
    rttvar: f64,
}

impl SmoothedRtt {
    /// The state after the first sample `r`: SRTT = R, RTTVAR = R/2.
    pub(crate) fn first(r: f64) -> SmoothedRtt {
        SmoothedRtt {
            srtt: r,
            rttvar: r / 2.0,
        }
    }

    /// Folds in sample `r` (RTTVAR from the old SRTT, then SRTT).
    pub(crate) fn update(&mut self, r: f64) {
        self.rttvar = (1.0 - BETA) * self.rttvar + BETA * abs(self.srtt - r);
        self.srtt = (1.0 - ALPHA) * self.srtt + ALPHA * r;
    }

    /// Folds in `r`, starting the filter if there is none yet.
    pub(crate) fn sample(this: &mut Option<SmoothedRtt>, r: f64) -> SmoothedRtt {
        let next = match *this {
            Some(mut s) => {
                s.update(r);
                s
            }
            None => SmoothedRtt::first(r),
        };
        *this = Some(next);
        next
    }

    /// `SRTT + max(G, K·RTTVAR)`.
    pub(crate) fn rto(&self, k: f64, granularity: f64) -> f64 {
        self.srtt + (k * self.rttvar).max(granularity)
    }

    /// The smoothed RTT in seconds.
    #[cfg(test)]
    pub(crate) fn srtt(&self) -> f64 {
        self.srtt
    }

    /// The RTT variation in seconds.
    #[cfg(test)]
    pub(crate) fn rttvar(&self) -> f64 {
        self.rttvar
    }
}

/// The RFC 6298 estimator: 1-s initial RTO, 1-s floor, 60-s cap, Karn's rule, persistent backoff.
#[derive(Debug, Clone, PartialEq)]
pub struct Rfc6298 {
    smoothed: Option<SmoothedRtt>,
    /// The RTO in effect, in seconds, including any backoff since the last valid sample.
    rto: f64,
}

impl Default for Rfc6298 {
    fn default() -> Self {
        Rfc6298::new()
    }
}

impl Rfc6298 {
    /// RTO before any sample (§2.1).
    pub const INITIAL_RTO: Duration = Duration::from_secs(1);
    /// Lower bound on the RTO (§2.4).
    pub const MIN_RTO: Duration = Duration::from_secs(1);
    /// Upper bound on the RTO, for computed and backed-off values alike (§2.5).
    pub const MAX_RTO: Duration = Duration::from_secs(60);
    /// Clock granularity G (the engine's clock is fine-grained; the 1-s floor dominates).
    const GRANULARITY: f64 = 0.0;
    /// K, the RTTVAR multiplier.
    const K: f64 = 4.0;

    /// An estimator with no samples yet.
    pub fn new() -> Rfc6298 {
        Rfc6298 {
            smoothed: None,
            rto: secs(Rfc6298::INITIAL_RTO),
        }
    }

    fn clamp(rto: f64) -> f64 {
        rto.max(secs(Rfc6298::MIN_RTO)).min(secs(Rfc6298::MAX_RTO))
    }
}

impl RtoEstimator for Rfc6298 {
    fn base_rto(&mut self, _now: Instant, _ongoing: usize) -> Duration {
        self.current_rto()
    }

    fn next_timeout(&self, _base: Duration, previous: Duration) -> Duration {
        backoff(previous, 2.0, Some(Rfc6298::MAX_RTO))
    }

    fn on_timeout(&mut self, _now: Instant) {
        self.rto = (2.0 * self.rto).min(secs(Rfc6298::MAX_RTO));
    }

    fn on_sample(&mut self, _now: Instant, rtt: Duration, retransmissions: u8) {
        // Karn's rule: a sample from a retransmitted CON is ambiguous.
        if retransmissions != 0 {
            return;
        }
        let s = SmoothedRtt::sample(&mut self.smoothed, secs(rtt));
        self.rto = Rfc6298::clamp(s.rto(Rfc6298::K, Rfc6298::GRANULARITY));
    }

    fn current_rto(&self) -> Duration {
        duration(self.rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{assert_ms, assert_secs, s, sample};

    fn run(samples: &[f64], expected: &[f64]) -> Rfc6298 {
        let mut e = Rfc6298::new();
        for (i, (&r, &want)) in samples.iter().zip(expected).enumerate() {
            let now = Instant::from_secs(i as u64);
            assert_secs(sample(&mut e, now, s(r), 0), want);
        }
        e
    }

    #[test]
    fn r1_mixed() {
        let e = run(
            &[1.0, 1.5, 0.8, 3.0, 1.0],
            &[3.0, 3.0625, 2.792188, 4.568164, 3.986597],
        );
        let sm = e.smoothed.unwrap();
        assert_secs(s(sm.srtt()), 1.241479);
        assert_secs(s(sm.rttvar()), 0.686279);
    }

    #[test]
    fn r2_constant() {
        run(&[2.0; 4], &[6.0, 5.0, 4.25, 3.6875]);
    }

    #[test]
    fn r3_one_second_floor() {
        let mut e = run(&[0.1; 4], &[1.0; 4]);
        let raw = e.smoothed.unwrap().rto(Rfc6298::K, 0.0);
        assert_ms(s(raw), 184.375);
        assert_secs(e.base_rto(Instant::ZERO, 0), 1.0);
    }

    #[test]
    fn r4_falling_rtt_raises_rto() {
        run(
            &[1.0, 1.0, 1.0, 1.0, 0.2],
            &[3.0, 2.5, 2.125, 1.84375, 2.332813],
        );
    }

    #[test]
    fn r5_persistent_backoff_capped() {
        let mut e = Rfc6298::new();
        let mut seen = std::vec::Vec::new();
        for _ in 0..8 {
            seen.push(e.base_rto(Instant::ZERO, 0).as_secs());
            e.on_timeout(Instant::ZERO);
        }
        assert_eq!(seen, [1, 2, 4, 8, 16, 32, 60, 60]);
        // Per-exchange backoff has the same shape.
        let mut t = Rfc6298::INITIAL_RTO;
        let mut timers = std::vec::Vec::new();
        for _ in 0..8 {
            timers.push(t.as_secs());
            t = e.next_timeout(Rfc6298::INITIAL_RTO, t);
        }
        assert_eq!(timers, [1, 2, 4, 8, 16, 32, 60, 60]);
        // A valid sample ends the backoff.
        assert_secs(sample(&mut e, Instant::ZERO, s(2.0), 0), 6.0);
    }

    #[test]
    fn karn_ignores_retransmitted_samples() {
        let mut e = Rfc6298::new();
        e.on_timeout(Instant::ZERO);
        for n in [1, 2, 3, u8::MAX] {
            assert_secs(sample(&mut e, Instant::ZERO, s(5.0), n), 2.0);
        }
        assert!(e.smoothed.is_none());
        assert_secs(sample(&mut e, Instant::ZERO, s(0.5), 0), 1.5);
    }
}
