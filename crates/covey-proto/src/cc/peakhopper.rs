//! The Peak-Hopper RTO (Ekström & Ludwig 2004), as reconstructed in spec §5 with the canonical
//! R_prev (the previous sample).

use super::{abs, backoff, duration, secs, RtoEstimator};
use crate::time::{Duration, Instant};
use crate::transmission_parameters::TransmissionParameters;

/// Decay horizon F, in samples.
const F: f64 = 24.0;
/// Per-sample decay factor D = 1 − 1/F.
const D: f64 = 1.0 - 1.0 / F;
/// Cap on the headroom B.
const B_MAX: f64 = 1.0;
/// Timer granularity / margin G, in seconds.
const G: f64 = 0.050;
/// Multiplier of the first sample.
const FIRST_FACTOR: f64 = 1.75;
/// Cap of the persistent backoff in seconds (RFC 6298 §2.5's maximum).
const PERSISTENT_BACKOFF_CAP: f64 = 60.0;

/// Peak-Hopper per-peer state: a decaying long history and a two-sample short history.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakHopper {
    /// The previous sample R_prev in seconds; `None` before the first sample.
    r_prev: Option<f64>,
    /// The adaptive headroom B.
    headroom: f64,
    /// The RTO in seconds.
    rto: f64,
    /// The RTO backed off by timeouts since the last valid sample, in seconds ("binary, as in
    /// RFC 6298": it persists until an unambiguous sample).
    backed_off: Option<f64>,
}

impl PeakHopper {
    /// An estimator with no samples; until the first one the RTO is ACK_TIMEOUT (spec silent).
    pub fn new(params: &TransmissionParameters) -> PeakHopper {
        PeakHopper {
            r_prev: None,
            headroom: 0.0,
            rto: secs(params.ack_timeout),
            backed_off: None,
        }
    }

    fn update(&mut self, r: f64) {
        let Some(r_prev) = self.r_prev else {
            // Floored at 2·G like every later RTO (RTO_short), so a zero sample gives no zero RTO.
            self.rto = (FIRST_FACTOR * r).max(2.0 * G);
            self.r_prev = Some(r);
            return;
        };
        // Relative change; a zero sample after a non-zero one counts as the largest change.
        let delta = if r > 0.0 {
            abs(r - r_prev) / r
        } else if r_prev > 0.0 {
            B_MAX
        } else {
            0.0
        };
        self.headroom = (2.0 * delta).max(D * self.headroom).min(B_MAX);
        // The short history is the last two samples, so its maximum is R_max.
        let r_max = r.max(r_prev);
        let long = (D * self.rto).max((1.0 + self.headroom) * r_max);
        let short = r_max + 2.0 * G;
        self.rto = long.max(short);
        self.r_prev = Some(r);
    }
}

impl RtoEstimator for PeakHopper {
    fn base_rto(&mut self, _now: Instant, _ongoing: usize) -> Duration {
        self.current_rto()
    }

    fn next_timeout(&self, _base: Duration, previous: Duration) -> Duration {
        backoff(previous, 2.0, None)
    }

    fn on_timeout(&mut self, _now: Instant) {
        // As in RFC 6298 the backoff persists until a valid sample, capped at its 60 s.
        let doubled = 2.0 * self.backed_off.unwrap_or(self.rto);
        self.backed_off = Some(doubled.min(PERSISTENT_BACKOFF_CAP));
    }

    fn on_sample(&mut self, _now: Instant, rtt: Duration, retransmissions: u8) {
        // Only unambiguous (non-retransmitted) samples are used.
        if retransmissions == 0 {
            self.update(secs(rtt));
            self.backed_off = None;
        }
    }

    fn current_rto(&self) -> Duration {
        duration(self.backed_off.unwrap_or(self.rto))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{assert_ms, sample};

    fn ms(v: f64) -> Duration {
        crate::cc::test_support::s(v / 1000.0)
    }

    /// Feeds samples (ms) and checks the RTO (ms) and, unless NaN, B after each.
    fn run(rows: &[(f64, f64, f64)]) {
        let mut e = PeakHopper::new(&TransmissionParameters::default());
        for &(r, b, rto) in rows {
            assert_ms(sample(&mut e, Instant::ZERO, ms(r), 0), rto);
            if !b.is_nan() {
                // The spec prints 4 decimals.
                assert!(abs(e.headroom - b) <= 0.000_05, "B {} vs {b}", e.headroom);
            }
        }
    }

    #[test]
    fn h1_peak_hop_and_decay() {
        run(&[
            (1000.0, 0.0, 1750.0),
            (1000.0, 0.0, 1677.083),
            (2000.0, 1.0, 4000.0),
            (1000.0, 1.0, 4000.0),
            (1000.0, 0.9583, 3833.333),
            (1000.0, 0.9184, 3673.611),
            (1000.0, 0.8801, 3520.544),
        ]);
    }

    #[test]
    fn h3_small_jitter() {
        run(&[
            (100.0, f64::NAN, 175.0),
            (110.0, 0.1818, 210.0),
            (90.0, 0.4444, 210.0),
            (100.0, 0.4259, 201.25),
            (300.0, 1.0, 600.0),
            (100.0, 1.0, 600.0),
        ]);
    }

    #[test]
    fn initial_rto_karn_and_backoff() {
        let mut e = PeakHopper::new(&TransmissionParameters::default());
        assert_ms(e.base_rto(Instant::ZERO, 0), 2000.0);
        assert_ms(sample(&mut e, Instant::ZERO, ms(100.0), 1), 2000.0);
        e.on_timeout(Instant::ZERO);
        // The backoff persists for the next exchange (see backoff_persists_until_a_valid_sample).
        assert_ms(e.current_rto(), 4000.0);
        assert_ms(e.next_timeout(ms(2000.0), ms(2000.0)), 4000.0);
        assert_ms(e.next_timeout(ms(2000.0), ms(64_000.0)), 128_000.0);
        // Zero samples never give a zero RTO.
        assert_ms(sample(&mut e, Instant::ZERO, Duration::ZERO, 0), 100.0);
        assert_ms(sample(&mut e, Instant::ZERO, Duration::ZERO, 0), 100.0);
    }

    #[test]
    fn backoff_persists_until_a_valid_sample() {
        let mut e = PeakHopper::new(&TransmissionParameters::default());
        sample(&mut e, Instant::ZERO, Duration::from_millis(400), 0);
        let rto = e.current_rto();
        e.on_timeout(Instant::ZERO);
        e.on_timeout(Instant::ZERO);
        assert_eq!(
            e.base_rto(Instant::ZERO, 0),
            rto * 4,
            "a later exchange starts backed off"
        );
        // A retransmitted exchange gives no sample and keeps the backoff.
        sample(&mut e, Instant::ZERO, Duration::from_millis(400), 2);
        assert_eq!(e.current_rto(), rto * 4);
        for _ in 0..10 {
            e.on_timeout(Instant::ZERO);
        }
        assert_eq!(e.current_rto(), Duration::from_secs(60), "capped");
        sample(&mut e, Instant::ZERO, Duration::from_millis(400), 0);
        assert!(
            e.current_rto() < Duration::from_secs(2),
            "a valid sample ends it"
        );
    }
}
