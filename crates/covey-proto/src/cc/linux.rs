//! The Linux TCP RTO estimator (`tcp_rtt_estimator` / `tcp_set_rto`), with exact arithmetic
//! and the once-per-window step taken after every sample (NSTART = 1 flights).

use super::{abs, backoff, duration, secs, RtoEstimator};
use crate::time::{Duration, Instant};

/// SRTT gain.
const SRTT_GAIN: f64 = 1.0 / 8.0;
/// MDEV gain for ordinary samples.
const MDEV_GAIN: f64 = 1.0 / 4.0;
/// MDEV gain when the RTT fell by more than MDEV.
const MDEV_FALLING_GAIN: f64 = 1.0 / 32.0;

/// Linux-kernel RTO state: SRTT, MDEV, the per-window maximum MDEV_MAX and RTTVAR.
#[derive(Debug, Clone, PartialEq)]
pub struct LinuxRto {
    /// (SRTT, MDEV, MDEV_MAX, RTTVAR) in seconds, unscaled; `None` before the first sample.
    state: Option<LinuxState>,
    /// The RTO in seconds.
    rto: f64,
    /// The RTO backed off by timeouts since the last valid sample, in seconds: the kernel
    /// keeps its backoff until an unambiguous RTT sample arrives, as RFC 6298 does.
    backed_off: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct LinuxState {
    srtt: f64,
    mdev: f64,
    mdev_max: f64,
    rttvar: f64,
}

impl Default for LinuxRto {
    fn default() -> Self {
        LinuxRto::new()
    }
}

impl LinuxRto {
    /// TCP_RTO_MIN: the floor of the deviation term is RTO_MIN/4.
    pub const RTO_MIN: Duration = Duration::from_millis(200);
    /// TCP_RTO_MAX: cap on the RTO and on backed-off timers.
    pub const RTO_MAX: Duration = Duration::from_secs(120);
    /// The RTO before any sample (kernels since about 3.1).
    pub const INITIAL_RTO: Duration = Duration::from_secs(1);

    /// An estimator with no samples yet.
    pub fn new() -> LinuxRto {
        LinuxRto {
            state: None,
            rto: secs(LinuxRto::INITIAL_RTO),
            backed_off: None,
        }
    }

    fn update(&mut self, m: f64) -> LinuxState {
        let floor = secs(LinuxRto::RTO_MIN) / 4.0;
        let Some(mut s) = self.state else {
            let mdev = m / 2.0;
            let rttvar = mdev.max(floor);
            return LinuxState {
                srtt: m,
                mdev,
                mdev_max: rttvar,
                rttvar,
            };
        };
        let err = m - s.srtt;
        s.srtt += SRTT_GAIN * err;
        let gain = if err < 0.0 && abs(err) > s.mdev {
            MDEV_FALLING_GAIN
        } else {
            MDEV_GAIN
        };
        s.mdev += (abs(err) - s.mdev) * gain;
        if s.mdev > s.mdev_max {
            s.mdev_max = s.mdev;
            if s.mdev_max > s.rttvar {
                s.rttvar = s.mdev_max;
            }
        }
        // End of the window: with NSTART = 1 every sample closes a flight.
        if s.mdev_max < s.rttvar {
            s.rttvar -= (s.rttvar - s.mdev_max) / 4.0;
        }
        s.mdev_max = floor;
        s
    }
}

impl RtoEstimator for LinuxRto {
    fn base_rto(&mut self, _now: Instant, _ongoing: usize) -> Duration {
        self.current_rto()
    }

    fn next_timeout(&self, _base: Duration, previous: Duration) -> Duration {
        backoff(previous, 2.0, Some(LinuxRto::RTO_MAX))
    }

    fn on_timeout(&mut self, _now: Instant) {
        // The backoff persists for later exchanges until a valid sample (Karn's algorithm):
        // without it an RTO below the path's RTT would never get a sample to grow from.
        let doubled = 2.0 * self.backed_off.unwrap_or(self.rto);
        self.backed_off = Some(doubled.min(secs(LinuxRto::RTO_MAX)));
    }

    fn on_sample(&mut self, _now: Instant, rtt: Duration, retransmissions: u8) {
        // Karn's rule (no timestamps in CoAP): retransmitted exchanges give no sample.
        if retransmissions != 0 {
            return;
        }
        let s = self.update(secs(rtt));
        self.state = Some(s);
        self.rto = (s.srtt + 4.0 * s.rttvar).min(secs(LinuxRto::RTO_MAX));
        self.backed_off = None;
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

    /// Feeds samples (ms) and checks (SRTT, MDEV, RTTVAR, RTO) after each, in ms (NaN = skip).
    fn run(e: &mut LinuxRto, rows: &[(f64, f64, f64, f64, f64)]) {
        for &(r, srtt, mdev, rttvar, rto) in rows {
            let got = sample(e, Instant::ZERO, ms(r), 0);
            if !rto.is_nan() {
                assert_ms(got, rto);
            }
            let st = e.state.unwrap();
            for (got, want) in [(st.srtt, srtt), (st.mdev, mdev), (st.rttvar, rttvar)] {
                if !want.is_nan() {
                    // The spec prints 4 decimals of ms.
                    assert!(
                        abs(got * 1000.0 - want) <= 0.000_05 + 1e-9,
                        "{got} vs {want}"
                    );
                }
            }
        }
    }

    const N: f64 = f64::NAN;

    #[test]
    fn l1_mixed() {
        run(
            &mut LinuxRto::new(),
            &[
                (100.0, 100.0, 50.0, 50.0, 300.0),
                (120.0, 102.5, 42.5, 50.0, 302.5),
                (80.0, 99.6875, 37.5, 50.0, 299.6875),
                (300.0, 124.7266, 78.2031, 78.2031, 437.5391),
                (100.0, 121.6357, 64.8340, 74.8608, 421.0791),
                (100.0, 118.9313, 54.0344, 69.6542, 397.5482),
            ],
        );
    }

    fn l2(e: &mut LinuxRto) {
        run(
            e,
            &[
                (1000.0, 1000.0, 500.0, 500.0, 3000.0),
                (1000.0, 1000.0, 375.0, 500.0, 3000.0),
                (1000.0, 1000.0, 281.25, 445.3125, 2781.25),
                (1000.0, 1000.0, 210.9375, 386.71875, 2546.875),
            ],
        );
    }

    #[test]
    fn l2_constant() {
        l2(&mut LinuxRto::new());
    }

    #[test]
    fn l3_sharp_drop() {
        let mut e = LinuxRto::new();
        l2(&mut e);
        run(&mut e, &[(200.0, 900.0, 229.3457, 347.3755, N)]);
        let rto = e.current_rto().as_secs_f64() * 1000.0;
        assert!(abs(rto - 2289.50) < 0.005, "{rto}");
    }

    #[test]
    fn l4_spike_raises_rttvar_at_once() {
        run(
            &mut LinuxRto::new(),
            &[
                (500.0, N, N, N, 1500.0),
                (2000.0, N, 562.5, 562.5, 2937.5),
                (500.0, N, N, N, 2820.3125),
                (500.0, N, N, N, 2653.3203),
            ],
        );
    }

    #[test]
    fn rto_min_floor_and_initial() {
        let mut e = LinuxRto::new();
        assert_ms(e.base_rto(Instant::ZERO, 0), 1000.0);
        // m + max(2m, RTO_MIN): a 10-ms sample gives 210 ms.
        assert_ms(sample(&mut e, Instant::ZERO, ms(10.0), 0), 210.0);
        for _ in 0..100 {
            e.on_sample(Instant::ZERO, ms(10.0), 0);
        }
        assert_ms(e.current_rto(), 210.0);
    }

    #[test]
    fn karn_and_binary_backoff() {
        let mut e = LinuxRto::new();
        assert_ms(sample(&mut e, Instant::ZERO, ms(5000.0), 1), 1000.0);
        e.on_timeout(Instant::ZERO);
        // The backoff persists for the next exchange (see backoff_persists_until_a_valid_sample).
        assert_ms(e.current_rto(), 2000.0);
        assert_ms(e.next_timeout(ms(1000.0), ms(1000.0)), 2000.0);
        assert_ms(e.next_timeout(ms(1000.0), ms(100_000.0)), 120_000.0);
        // A huge sample is capped at RTO_MAX.
        assert_ms(sample(&mut e, Instant::ZERO, Duration::MAX, 0), 120_000.0);
    }

    #[test]
    fn backoff_persists_until_a_valid_sample() {
        let mut e = LinuxRto::new();
        e.on_timeout(Instant::ZERO);
        e.on_timeout(Instant::ZERO);
        assert_eq!(e.base_rto(Instant::ZERO, 0), Duration::from_secs(4));
        // Karn: the retransmitted exchange's RTT is no sample, the backoff stays.
        sample(&mut e, Instant::ZERO, ms(3000.0), 2);
        assert_eq!(e.current_rto(), Duration::from_secs(4));
        for _ in 0..10 {
            e.on_timeout(Instant::ZERO);
        }
        assert_eq!(e.current_rto(), LinuxRto::RTO_MAX, "capped");
        assert_ms(sample(&mut e, Instant::ZERO, ms(100.0), 0), 300.0);
    }
}
