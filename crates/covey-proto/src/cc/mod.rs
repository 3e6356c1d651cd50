//! Congestion control: RTO estimators (see `spec/coap-algorithms.md` §1, §3–6).
//!
//! Each estimator holds the retransmission-timeout state of one peer. The engine keeps one
//! [`PeerEstimator`] per peer, asks it for the base RTO of each new exchange, dithers that base
//! itself (see [`TransmissionParameters::dither`]), and backs off with
//! [`RtoEstimator::next_timeout`].

use core::fmt;
use core::str::FromStr;

use crate::time::{Duration, Instant};
use crate::transmission_parameters::TransmissionParameters;

#[cfg(feature = "rto-estimators")]
pub mod cocoa;
pub mod default;
#[cfg(feature = "rto-estimators")]
pub mod linux;
#[cfg(feature = "rto-estimators")]
pub mod peakhopper;
#[cfg(feature = "rto-estimators")]
pub mod rfc6298;

#[cfg(feature = "rto-estimators")]
pub use cocoa::Cocoa;
pub use default::DefaultRto;
#[cfg(feature = "rto-estimators")]
pub use linux::LinuxRto;
#[cfg(feature = "rto-estimators")]
pub use peakhopper::PeakHopper;
#[cfg(feature = "rto-estimators")]
pub use rfc6298::Rfc6298;

/// Per-peer retransmission-timeout state.
pub trait RtoEstimator {
    /// Base RTO for a new exchange starting now (applies idle aging; `ongoing` = exchanges
    /// already in flight to this peer, for CoCoA's blind RTO).
    fn base_rto(&mut self, now: Instant, ongoing: usize) -> Duration;
    /// The timeout after `previous` expired for one exchange (the backoff; `base` is that
    /// exchange's base RTO).
    fn next_timeout(&self, base: Duration, previous: Duration) -> Duration;
    /// A retransmission timer expired for this peer (RFC 6298-style estimators back off
    /// persistently here).
    fn on_timeout(&mut self, now: Instant);
    /// An RTT sample from a completed CON transaction after `retransmissions` retransmissions.
    fn on_sample(&mut self, now: Instant, rtt: Duration, retransmissions: u8);
    /// The current overall RTO, without side effects (for Stats).
    fn current_rto(&self) -> Duration;
}

/// The congestion-control algorithms an endpoint can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    /// RFC 7252: fixed ACK_TIMEOUT base, binary backoff, samples ignored.
    #[default]
    Default,
    /// CoCoA (draft-ietf-core-cocoa-03): strong and weak estimators.
    Cocoa,
    /// CoCoA using the strong estimator only.
    CocoaStrong,
    /// The Linux TCP RTO estimator.
    Linux,
    /// The Peak-Hopper RTO estimator.
    PeakHopper,
    /// The RFC 6298 TCP RTO estimator.
    Rfc6298,
}

impl Algorithm {
    /// Every algorithm, in declaration order.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Default,
        Algorithm::Cocoa,
        Algorithm::CocoaStrong,
        Algorithm::Linux,
        Algorithm::PeakHopper,
        Algorithm::Rfc6298,
    ];

    /// The algorithm's name as used on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Default => "default",
            Algorithm::Cocoa => "cocoa",
            Algorithm::CocoaStrong => "cocoa-strong",
            Algorithm::Linux => "linux",
            Algorithm::PeakHopper => "peakhopper",
            Algorithm::Rfc6298 => "rfc6298",
        }
    }

    /// The algorithm called `name` (ASCII case-insensitive), if any.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
    }

    /// Whether this build has the algorithm (all but the default need the
    /// `rto-estimators` feature).
    pub const fn is_built(self) -> bool {
        matches!(self, Algorithm::Default) || cfg!(feature = "rto-estimators")
    }

    /// A fresh estimator of this algorithm for a new peer; RFC 7252's default for an
    /// algorithm this build lacks, which `Config::validate` refuses.
    pub fn estimator(self, params: &TransmissionParameters) -> PeerEstimator {
        match self {
            Algorithm::Default => PeerEstimator::Default(DefaultRto::new(params)),
            #[cfg(not(feature = "rto-estimators"))]
            _ => PeerEstimator::Default(DefaultRto::new(params)),
            #[cfg(feature = "rto-estimators")]
            Algorithm::Cocoa => PeerEstimator::Cocoa(Cocoa::new(params, false)),
            #[cfg(feature = "rto-estimators")]
            Algorithm::CocoaStrong => PeerEstimator::Cocoa(Cocoa::new(params, true)),
            #[cfg(feature = "rto-estimators")]
            Algorithm::Linux => PeerEstimator::Linux(LinuxRto::new()),
            #[cfg(feature = "rto-estimators")]
            Algorithm::PeakHopper => PeerEstimator::PeakHopper(PeakHopper::new(params)),
            #[cfg(feature = "rto-estimators")]
            Algorithm::Rfc6298 => PeerEstimator::Rfc6298(Rfc6298::new()),
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown algorithm name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnknownAlgorithm;

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "unknown congestion-control algorithm \
             (expected default, cocoa, cocoa-strong, linux, peakhopper or rfc6298)",
        )
    }
}

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Algorithm, UnknownAlgorithm> {
        Algorithm::from_name(s).ok_or(UnknownAlgorithm)
    }
}

/// The RTO state of one peer, for whichever algorithm the endpoint uses.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerEstimator {
    /// RFC 7252 default.
    Default(DefaultRto),
    /// CoCoA or CoCoA-strong.
    #[cfg(feature = "rto-estimators")]
    Cocoa(Cocoa),
    /// Linux TCP RTO.
    #[cfg(feature = "rto-estimators")]
    Linux(LinuxRto),
    /// Peak-Hopper.
    #[cfg(feature = "rto-estimators")]
    PeakHopper(PeakHopper),
    /// RFC 6298.
    #[cfg(feature = "rto-estimators")]
    Rfc6298(Rfc6298),
}

impl PeerEstimator {
    /// The algorithm this estimator implements.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            PeerEstimator::Default(_) => Algorithm::Default,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::Cocoa(c) if c.is_strong_only() => Algorithm::CocoaStrong,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::Cocoa(_) => Algorithm::Cocoa,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::Linux(_) => Algorithm::Linux,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::PeakHopper(_) => Algorithm::PeakHopper,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::Rfc6298(_) => Algorithm::Rfc6298,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $e:ident => $call:expr) => {
        match $self {
            PeerEstimator::Default($e) => $call,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::Cocoa($e) => $call,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::Linux($e) => $call,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::PeakHopper($e) => $call,
            #[cfg(feature = "rto-estimators")]
            PeerEstimator::Rfc6298($e) => $call,
        }
    };
}

impl RtoEstimator for PeerEstimator {
    fn base_rto(&mut self, now: Instant, ongoing: usize) -> Duration {
        dispatch!(self, e => e.base_rto(now, ongoing))
    }

    fn next_timeout(&self, base: Duration, previous: Duration) -> Duration {
        dispatch!(self, e => e.next_timeout(base, previous))
    }

    fn on_timeout(&mut self, now: Instant) {
        dispatch!(self, e => e.on_timeout(now))
    }

    fn on_sample(&mut self, now: Instant, rtt: Duration, retransmissions: u8) {
        dispatch!(self, e => e.on_sample(now, rtt, retransmissions))
    }

    fn current_rto(&self) -> Duration {
        dispatch!(self, e => e.current_rto())
    }
}

/// `d` in seconds, for the estimators' floating-point arithmetic.
#[cfg(feature = "rto-estimators")]
fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

#[cfg(feature = "rto-estimators")]
/// `s` seconds as a duration: zero for negative or NaN, `Duration::MAX` beyond its range.
fn duration(s: f64) -> Duration {
    if s.is_nan() || s <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}

#[cfg(feature = "rto-estimators")]
/// `|x|` (`f64::abs` is not in `core` at this crate's MSRV).
fn abs(x: f64) -> f64 {
    if x < 0.0 {
        -x
    } else {
        x
    }
}

#[cfg(feature = "rto-estimators")]
/// `max(previous, min(factor·previous, cap))`: back off by `factor`, truncated at `cap`
/// but never shorter than `previous`.
fn backoff(previous: Duration, factor: f64, cap: Option<Duration>) -> Duration {
    let next = duration(secs(previous) * factor);
    let next = match cap {
        Some(cap) => next.min(cap),
        None => next,
    };
    next.max(previous)
}

#[cfg(test)]
// Most of it serves the estimators' own tests.
#[cfg_attr(not(feature = "rto-estimators"), allow(dead_code))]
pub(crate) mod test_support {
    use super::*;

    /// Asserts that `d` is `expected` seconds within 1 µs.
    #[track_caller]
    pub fn assert_secs(d: Duration, expected: f64) {
        let got = d.as_secs_f64();
        assert!(
            (got - expected).abs() <= 1e-6,
            "got {got} s, expected {expected} s"
        );
    }

    /// Asserts that `d` is `expected` milliseconds within 1 µs.
    #[track_caller]
    pub fn assert_ms(d: Duration, expected: f64) {
        assert_secs(d, expected / 1000.0);
    }

    /// `s` seconds, exactly enough for tests.
    pub fn s(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// Feeds `rtt` to `e` as a sample taken at `now` and returns the resulting RTO.
    pub fn sample(e: &mut impl RtoEstimator, now: Instant, rtt: Duration, n: u8) -> Duration {
        e.on_sample(now, rtt, n);
        e.current_rto()
    }

    /// Hostile inputs every estimator must survive without panicking.
    pub fn torture(e: &mut impl RtoEstimator) {
        let extremes = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_secs(1),
            Duration::MAX,
            Duration::from_nanos(1),
            Duration::ZERO,
            Duration::ZERO,
        ];
        let mut now = Instant::ZERO;
        for (i, rtt) in extremes.into_iter().enumerate() {
            for n in [0u8, 1, 2, 3, u8::MAX] {
                e.on_sample(now, rtt, n);
                let _ = e.base_rto(now, usize::MAX);
                let _ = e.base_rto(now, i);
                let _ = e.next_timeout(rtt, rtt);
                let _ = e.next_timeout(Duration::MAX, Duration::MAX);
                let _ = e.next_timeout(Duration::ZERO, Duration::ZERO);
                e.on_timeout(now);
                let _ = e.current_rto();
            }
            now = now + Duration::from_secs(1000);
        }
        for _ in 0..300 {
            e.on_timeout(now);
        }
        let _ = e.base_rto(Instant::from_nanos(u64::MAX), 0);
        let _ = e.base_rto(Instant::ZERO, 0);
        for _ in 0..3000 {
            e.on_sample(now, Duration::ZERO, 0);
        }
        let _ = e.base_rto(Instant::from_nanos(u64::MAX), 0);
        for _ in 0..3000 {
            e.on_sample(now, Duration::MAX, 0);
        }
        let _ = e.base_rto(Instant::from_nanos(u64::MAX), 0);
        let _ = e.current_rto();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()), Some(a));
            assert_eq!(a.name().parse::<Algorithm>(), Ok(a));
            assert_eq!(std::format!("{a}"), a.name());
        }
        assert_eq!(
            "CoCoA-Strong".parse::<Algorithm>(),
            Ok(Algorithm::CocoaStrong)
        );
        assert_eq!("tcp".parse::<Algorithm>(), Err(UnknownAlgorithm));
        assert_eq!(Algorithm::from_name(""), None);
        assert_eq!(Algorithm::default(), Algorithm::Default);
    }

    #[test]
    #[cfg(feature = "rto-estimators")]
    fn estimators_report_their_algorithm() {
        let p = TransmissionParameters::default();
        for a in Algorithm::ALL {
            assert_eq!(a.estimator(&p).algorithm(), a);
        }
    }

    #[test]
    #[cfg(feature = "rto-estimators")]
    fn initial_rtos() {
        let p = TransmissionParameters::default();
        let expected = [2.0, 2.0, 2.0, 1.0, 2.0, 1.0];
        for (a, want) in Algorithm::ALL.into_iter().zip(expected) {
            let mut e = a.estimator(&p);
            test_support::assert_secs(e.current_rto(), want);
            test_support::assert_secs(e.base_rto(Instant::ZERO, 0), want);
        }
    }

    #[test]
    fn no_estimator_panics_on_extreme_input() {
        let p = TransmissionParameters::default();
        for a in Algorithm::ALL {
            test_support::torture(&mut a.estimator(&p));
        }
        let zero = TransmissionParameters {
            ack_timeout: Duration::ZERO,
            ack_random_factor: crate::transmission_parameters::RandomFactor::ONE,
            ..p
        };
        for a in Algorithm::ALL {
            test_support::torture(&mut a.estimator(&zero));
        }
    }

    #[test]
    #[cfg(feature = "rto-estimators")]
    fn duration_conversion_saturates() {
        assert_eq!(duration(f64::NAN), Duration::ZERO);
        assert_eq!(duration(-1.0), Duration::ZERO);
        assert_eq!(duration(f64::INFINITY), Duration::MAX);
        assert_eq!(duration(1e300), Duration::MAX);
        assert_eq!(duration(2.5), Duration::from_millis(2500));
        assert_eq!(backoff(Duration::MAX, 2.0, None), Duration::MAX);
        assert_eq!(
            backoff(Duration::from_secs(40), 2.0, Some(Duration::from_secs(32))),
            Duration::from_secs(40)
        );
    }
}
