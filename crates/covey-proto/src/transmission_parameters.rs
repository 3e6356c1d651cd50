//! CoAP transmission parameters (RFC 7252 §4.8) and the values derived from them (§4.8.2).

use core::fmt;

use crate::time::{checked_mul, div_1000, div_u32_max, saturating_mul, Duration};

/// The RFC 7252 transmission parameters of an endpoint; `Default` gives the RFC defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransmissionParameters {
    /// ACK_TIMEOUT: the base first timeout of a confirmable message (2 s).
    pub ack_timeout: Duration,
    /// ACK_RANDOM_FACTOR: upper factor of the randomised first timeout, at least 1.0 (1.5).
    pub ack_random_factor: RandomFactor,
    /// MAX_RETRANSMIT: maximum retransmissions of one confirmable message (4).
    pub max_retransmit: u8,
    /// NSTART: maximum outstanding interactions per peer (1).
    pub nstart: usize,
    /// DEFAULT_LEISURE: fallback multicast response window (5 s).
    pub default_leisure: Duration,
    /// PROBING_RATE: average rate limit towards a peer that does not respond, in bytes/s (1).
    pub probing_rate: u32,
    /// MAX_LATENCY: assumed worst-case one-way lifetime of a datagram (100 s).
    pub max_latency: Duration,
}

impl Default for TransmissionParameters {
    fn default() -> Self {
        TransmissionParameters {
            ack_timeout: Duration::from_secs(2),
            ack_random_factor: RandomFactor::from_thousandths(1_500),
            max_retransmit: 4,
            nstart: 1,
            default_leisure: Duration::from_secs(5),
            probing_rate: 1,
            max_latency: Duration::from_secs(100),
        }
    }
}

/// ACK_RANDOM_FACTOR in thousandths, as libcoap's `coap_fixed_point_t` holds it: fixed
/// point, so an endpoint dithers its timeouts without floating-point arithmetic, which a
/// node's CPU does in software.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RandomFactor(u32);

impl RandomFactor {
    /// 1.0: every first timeout is the base itself.
    pub const ONE: RandomFactor = RandomFactor(1_000);

    /// `thousandths` / 1000, e.g. 1500 for RFC 7252's 1.5.
    pub const fn from_thousandths(thousandths: u32) -> RandomFactor {
        RandomFactor(thousandths)
    }

    /// The factor in thousandths.
    pub const fn thousandths(self) -> u32 {
        self.0
    }

    /// The factor as a float, for reports.
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 1_000.0
    }
}

impl fmt::Display for RandomFactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, part) = (self.0 / 1_000, self.0 % 1_000);
        match part {
            0 => write!(f, "{whole}.0"),
            p if p % 100 == 0 => write!(f, "{whole}.{}", p / 100),
            p if p % 10 == 0 => write!(f, "{whole}.{:02}", p / 10),
            p => write!(f, "{whole}.{p:03}"),
        }
    }
}

/// Why a set of transmission parameters was rejected by [`TransmissionParameters::validate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InvalidParameter {
    /// ACK_TIMEOUT is zero.
    AckTimeoutZero,
    /// ACK_RANDOM_FACTOR is below 1.0.
    AckRandomFactorBelowOne,
    /// NSTART is zero, so no request could ever be sent.
    NstartZero,
    /// PROBING_RATE is zero, so an unresponsive peer could never be probed.
    ProbingRateZero,
}

impl fmt::Display for InvalidParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InvalidParameter::AckTimeoutZero => "ACK_TIMEOUT must be greater than zero",
            InvalidParameter::AckRandomFactorBelowOne => "ACK_RANDOM_FACTOR must be at least 1.0",
            InvalidParameter::NstartZero => "NSTART must be at least 1",
            InvalidParameter::ProbingRateZero => "PROBING_RATE must be at least 1 byte/s",
        })
    }
}

impl core::error::Error for InvalidParameter {}

impl TransmissionParameters {
    /// Checks the constraints RFC 7252 puts on the parameters.
    pub fn validate(&self) -> Result<(), InvalidParameter> {
        if self.ack_timeout.is_zero() {
            return Err(InvalidParameter::AckTimeoutZero);
        }
        if self.ack_random_factor < RandomFactor::ONE {
            return Err(InvalidParameter::AckRandomFactorBelowOne);
        }
        if self.nstart == 0 {
            return Err(InvalidParameter::NstartZero);
        }
        if self.probing_rate == 0 {
            return Err(InvalidParameter::ProbingRateZero);
        }
        Ok(())
    }

    /// MAX_TRANSMIT_SPAN: from the first transmission to the last retransmission (45 s).
    pub fn max_transmit_span(&self) -> Duration {
        let span = times_pow2_minus_one(self.ack_timeout, u32::from(self.max_retransmit));
        scale(span, self.ack_random_factor.0)
    }

    /// MAX_TRANSMIT_WAIT: from the first transmission until the sender gives up (93 s).
    pub fn max_transmit_wait(&self) -> Duration {
        let wait = times_pow2_minus_one(self.ack_timeout, u32::from(self.max_retransmit) + 1);
        scale(wait, self.ack_random_factor.0)
    }

    /// PROCESSING_DELAY: time a node takes to turn a CON around into its ACK (= ACK_TIMEOUT).
    pub fn processing_delay(&self) -> Duration {
        self.ack_timeout
    }

    /// MAX_RTT: 2·MAX_LATENCY + PROCESSING_DELAY (202 s).
    pub fn max_rtt(&self) -> Duration {
        // Doubled as a sum: `saturating_mul` divides 64 bits.
        self.max_latency
            .saturating_add(self.max_latency)
            .saturating_add(self.processing_delay())
    }

    /// EXCHANGE_LIFETIME: MAX_TRANSMIT_SPAN + 2·MAX_LATENCY + PROCESSING_DELAY (247 s).
    pub fn exchange_lifetime(&self) -> Duration {
        self.max_transmit_span().saturating_add(self.max_rtt())
    }

    /// NON_LIFETIME: MAX_TRANSMIT_SPAN + MAX_LATENCY (145 s).
    pub fn non_lifetime(&self) -> Duration {
        self.max_transmit_span().saturating_add(self.max_latency)
    }

    /// The initial timeout for base `base` at `draw` / (2^32 − 1) of the way from base to
    /// base·ACK_RANDOM_FACTOR: a uniform 32-bit draw makes RFC 7252 §4.2's random choice.
    pub fn dither(&self, base: Duration, draw: u32) -> Duration {
        let spread = scale(base, self.ack_random_factor.0.saturating_sub(1_000));
        base.saturating_add(fraction(spread, draw))
    }
}

/// Transmission times of one CON under RFC 7252 binary backoff, relative to the first one.
#[derive(Debug, Clone)]
pub struct RetransmissionSchedule {
    initial_timeout: Duration,
    max_retransmit: u8,
    next: u16,
}

/// The RFC 7252 schedule for a CON whose first timeout is `initial_timeout`.
pub fn retransmission_schedule(
    initial_timeout: Duration,
    params: &TransmissionParameters,
) -> RetransmissionSchedule {
    RetransmissionSchedule {
        initial_timeout,
        max_retransmit: params.max_retransmit,
        next: 0,
    }
}

impl RetransmissionSchedule {
    /// When the sender gives up if no ACK arrived: `initial_timeout·(2^(MAX_RETRANSMIT+1) − 1)`.
    pub fn give_up_at(&self) -> Duration {
        times_pow2_minus_one(self.initial_timeout, u32::from(self.max_retransmit) + 1)
    }

    fn remaining(&self) -> usize {
        usize::from(u16::from(self.max_retransmit) + 1 - self.next)
    }
}

impl Iterator for RetransmissionSchedule {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.next > u16::from(self.max_retransmit) {
            return None;
        }
        let at = times_pow2_minus_one(self.initial_timeout, u32::from(self.next));
        self.next += 1;
        Some(at)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.remaining();
        (n, Some(n))
    }
}

impl ExactSizeIterator for RetransmissionSchedule {}

/// `d · (2^n − 1)`, saturating at `Duration::MAX`: `d` doubled `n` times, less `d`, in the
/// duration's own checked sums (binary backoff's), without 128-bit products or 64-bit
/// division (which a node's CPU does in software).
fn times_pow2_minus_one(d: Duration, n: u32) -> Duration {
    let mut doubled = d;
    for _ in 0..n {
        match doubled.checked_add(doubled) {
            Some(twice) => doubled = twice,
            None => return Duration::MAX,
        }
    }
    doubled - d
}

/// `d · thousandths / 1000` to the nanosecond, saturating at `Duration::MAX`; in the
/// duration's own 64-bit seconds and 32-bit nanoseconds, so no floating point or 128-bit
/// division is needed (and in 32-bit divisions, see `crate::time`).
fn scale(d: Duration, thousandths: u32) -> Duration {
    match checked_mul(d, thousandths) {
        Some(product) => div_1000(product),
        // Only durations of centuries overflow before the division: divide first.
        None => saturating_mul(div_1000(d), thousandths),
    }
}

/// `d · draw / (2^32 − 1)`, rounded to the nanosecond (within one): `d` at a uniform draw's
/// point of [0, 1].
pub(crate) fn fraction(d: Duration, draw: u32) -> Duration {
    // Evaluated at compile time: `Duration::from_nanos` divides 64 bits.
    const HALF: Duration = Duration::from_nanos(u32::MAX as u64 / 2);
    match checked_mul(d, draw) {
        Some(product) => div_u32_max(product.saturating_add(HALF)),
        None => saturating_mul(div_u32_max(d), draw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;
    use std::vec::Vec;

    /// A duration of `nanos` nanoseconds, saturating at `Duration::MAX`.
    fn from_nanos_u128(nanos: u128) -> Duration {
        if let Ok(n) = u64::try_from(nanos) {
            return Duration::from_nanos(n); // no 128-bit division
        }
        let secs = nanos / 1_000_000_000;
        let sub = (nanos % 1_000_000_000) as u32;
        match u64::try_from(secs) {
            Ok(secs) => Duration::new(secs, sub),
            Err(_) => Duration::MAX,
        }
    }

    /// `d · k / 1000` in 128-bit nanoseconds, saturating.
    fn scale_u128(d: Duration, k: u32) -> Duration {
        from_nanos_u128(d.as_nanos() * u128::from(k) / 1_000)
    }

    #[test]
    fn scale_matches_128_bit_arithmetic() {
        let durations = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(2_000),
            Duration::from_nanos(u64::MAX - 1),
            Duration::from_nanos(u64::MAX),
            Duration::from_secs(u64::MAX / 1_000_000_000 + 1),
            Duration::from_secs(u64::MAX / 2),
            Duration::MAX,
        ];
        for d in durations {
            for k in [0, 1, 999, 1_000, 1_001, 1_500, 2_000, 1_000_000, u32::MAX] {
                let (got, exact) = (scale(d, k), scale_u128(d, k));
                // Exact unless d·k leaves Duration's range before the division.
                match d.checked_mul(k) {
                    Some(_) => assert_eq!(got, exact, "{d:?} * {k}"),
                    None => assert!(exact.abs_diff(got) <= Duration::from_nanos(u64::from(k))),
                }
            }
        }
        for d in durations {
            for n in [
                0, 1, 2, 4, 5, 31, 32, 33, 63, 64, 65, 96, 127, 128, 200, 256,
            ] {
                let k = 1u128.checked_shl(n).map_or(u128::MAX, |p| p - 1);
                let exact = from_nanos_u128(d.as_nanos().saturating_mul(k));
                let got = times_pow2_minus_one(d, n);
                // Exact unless d·2^n leaves Duration's range: then the far future, within
                // d of the exact value.
                let doubled = 1u128
                    .checked_shl(n)
                    .and_then(|p| d.as_nanos().checked_mul(p));
                match doubled.is_none_or(|nanos| nanos > Duration::MAX.as_nanos()) {
                    true if !d.is_zero() => {
                        assert_eq!(got, Duration::MAX, "{d:?} * (2^{n} - 1)");
                        assert!(Duration::MAX - exact <= d, "{d:?} * (2^{n} - 1)");
                    }
                    _ => assert_eq!(got, exact, "{d:?} * (2^{n} - 1)"),
                }
            }
        }
    }

    /// `scale` and `fraction` as they were written in `Duration`'s own operators.
    fn scale_core(d: Duration, k: u32) -> Duration {
        match d.checked_mul(k) {
            Some(product) => product / 1_000,
            None => (d / 1_000).saturating_mul(k),
        }
    }

    fn fraction_core(d: Duration, draw: u32) -> Duration {
        let half = Duration::from_nanos(u64::from(u32::MAX / 2));
        match d.checked_mul(draw) {
            Some(product) => product.saturating_add(half) / u32::MAX,
            None => (d / u32::MAX).saturating_mul(draw),
        }
    }

    #[test]
    fn scale_and_fraction_match_durations_own_operators() {
        let mut durations = std::vec![
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(2_000),
            Duration::from_nanos(u64::MAX),
            Duration::new(u64::MAX / 1_000, 999_999_999),
            Duration::new(u64::from(u32::MAX), 999_999_999),
            Duration::new(u64::MAX / u64::from(u32::MAX), 1),
            Duration::MAX,
        ];
        durations.extend((0..64).map(|b| Duration::new(1 << b, (1 << (b % 30)) - 1)));
        for d in durations {
            for k in [
                0,
                1,
                2,
                999,
                1_000,
                1_001,
                1_500,
                2_000,
                1_000_000,
                u32::MAX / 2,
                u32::MAX,
            ] {
                assert_eq!(scale(d, k), scale_core(d, k), "{d:?} * {k} / 1000");
                assert_eq!(
                    fraction(d, k),
                    fraction_core(d, k),
                    "{d:?} * {k} / (2^32 - 1)"
                );
            }
        }
    }

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn params(ack_timeout_ms: u64, arf: u32, mr: u8) -> TransmissionParameters {
        TransmissionParameters {
            ack_timeout: ms(ack_timeout_ms),
            ack_random_factor: RandomFactor::from_thousandths(arf),
            max_retransmit: mr,
            ..TransmissionParameters::default()
        }
    }

    #[test]
    fn p1_defaults() {
        let p = TransmissionParameters::default();
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(p.max_transmit_span(), ms(45_000));
        assert_eq!(p.max_transmit_wait(), ms(93_000));
        assert_eq!(p.processing_delay(), ms(2_000));
        assert_eq!(p.max_rtt(), ms(202_000));
        assert_eq!(p.exchange_lifetime(), ms(247_000));
        assert_eq!(p.non_lifetime(), ms(145_000));
        assert_eq!(p.default_leisure, ms(5_000));
        assert_eq!(p.nstart, 1);
        assert_eq!(p.probing_rate, 1);
    }

    #[test]
    fn p2_ack_timeout_one_second() {
        let p = params(1_000, 1_500, 4);
        assert_eq!(p.max_transmit_span(), ms(22_500));
        assert_eq!(p.max_transmit_wait(), ms(46_500));
        assert_eq!(p.processing_delay(), ms(1_000));
        assert_eq!(p.max_rtt(), ms(201_000));
        assert_eq!(p.exchange_lifetime(), ms(223_500));
        assert_eq!(p.non_lifetime(), ms(122_500));
    }

    #[test]
    fn p3_random_factor_two_three_retransmissions() {
        let p = params(2_000, 2_000, 3);
        assert_eq!(p.max_transmit_span(), ms(28_000));
        assert_eq!(p.max_transmit_wait(), ms(60_000));
        assert_eq!(p.max_rtt(), ms(202_000));
        assert_eq!(p.exchange_lifetime(), ms(230_000));
        assert_eq!(p.non_lifetime(), ms(128_000));
    }

    /// The 32-bit draw `unit` of the way through [0, 1].
    fn draw(unit: f64) -> u32 {
        (unit * f64::from(u32::MAX)).round() as u32
    }

    #[test]
    fn p4_schedule_maximum_draw() {
        let p = TransmissionParameters::default();
        let initial = p.dither(p.ack_timeout, u32::MAX);
        assert_eq!(initial, ms(3_000));
        let s = retransmission_schedule(initial, &p);
        assert_eq!(s.len(), 5);
        assert_eq!(s.give_up_at(), ms(93_000));
        assert_eq!(s.give_up_at(), p.max_transmit_wait());
        let times: Vec<Duration> = s.collect();
        assert_eq!(times, [ms(0), ms(3_000), ms(9_000), ms(21_000), ms(45_000)]);
        assert_eq!(times[4], p.max_transmit_span());
    }

    #[test]
    fn p5_schedule_intermediate_draw() {
        let p = TransmissionParameters::default();
        let initial = p.dither(p.ack_timeout, draw(0.4));
        assert_eq!(initial, ms(2_400));
        let s = retransmission_schedule(initial, &p);
        assert_eq!(s.give_up_at(), ms(74_400));
        let times: Vec<Duration> = s.collect();
        assert_eq!(times, [ms(0), ms(2_400), ms(7_200), ms(16_800), ms(36_000)]);
    }

    #[test]
    fn validate_rejects_bad_values() {
        let ok = TransmissionParameters::default();
        let cases = [
            (
                TransmissionParameters {
                    ack_random_factor: RandomFactor::from_thousandths(999),
                    ..ok
                },
                InvalidParameter::AckRandomFactorBelowOne,
            ),
            (
                TransmissionParameters {
                    ack_random_factor: RandomFactor::from_thousandths(0),
                    ..ok
                },
                InvalidParameter::AckRandomFactorBelowOne,
            ),
            (
                TransmissionParameters {
                    ack_timeout: Duration::ZERO,
                    ..ok
                },
                InvalidParameter::AckTimeoutZero,
            ),
            (
                TransmissionParameters { nstart: 0, ..ok },
                InvalidParameter::NstartZero,
            ),
            (
                TransmissionParameters {
                    probing_rate: 0,
                    ..ok
                },
                InvalidParameter::ProbingRateZero,
            ),
        ];
        for (p, err) in cases {
            assert_eq!(p.validate(), Err(err));
        }
        let exactly_one = TransmissionParameters {
            ack_random_factor: RandomFactor::ONE,
            ..ok
        };
        assert_eq!(exactly_one.validate(), Ok(()));
    }

    #[test]
    fn extreme_values_saturate() {
        let p = TransmissionParameters {
            ack_timeout: Duration::MAX,
            ack_random_factor: RandomFactor::from_thousandths(u32::MAX),
            max_retransmit: u8::MAX,
            max_latency: Duration::MAX,
            ..TransmissionParameters::default()
        };
        assert_eq!(p.max_transmit_span(), Duration::MAX);
        assert_eq!(p.max_transmit_wait(), Duration::MAX);
        assert_eq!(p.max_rtt(), Duration::MAX);
        assert_eq!(p.exchange_lifetime(), Duration::MAX);
        assert_eq!(p.non_lifetime(), Duration::MAX);
        let s = retransmission_schedule(Duration::MAX, &p);
        assert_eq!(s.len(), 256);
        assert_eq!(s.give_up_at(), Duration::MAX);
        assert_eq!(s.last(), Some(Duration::MAX));
        assert_eq!(p.dither(Duration::MAX, u32::MAX), Duration::MAX);
        let defaults = TransmissionParameters::default();
        assert_eq!(defaults.dither(ms(1), 0), ms(1));
        assert_eq!(defaults.dither(ms(2), u32::MAX), ms(3));
        assert_eq!(defaults.dither(Duration::MAX, u32::MAX), Duration::MAX);
        assert_eq!(
            retransmission_schedule(Duration::ZERO, &p).give_up_at(),
            Duration::ZERO
        );
    }

    #[test]
    fn dithering_spreads_uniformly_without_floating_point() {
        let p = TransmissionParameters::default();
        let base = ms(2_000);
        // Draws at 0, ¼, ½, ¾ and 1 of the way land at those points of [2 s, 3 s].
        for (unit, want) in [
            (0.0, 2_000),
            (0.25, 2_250),
            (0.5, 2_500),
            (0.75, 2_750),
            (1.0, 3_000),
        ] {
            let got = p.dither(base, draw(unit));
            assert!(
                got.abs_diff(ms(want)) <= Duration::from_nanos(1),
                "{unit}: {got:?}"
            );
        }
        // Every draw stays inside [base, base·ACK_RANDOM_FACTOR].
        for d in [0, 1, 12_345, u32::MAX / 2, u32::MAX - 1, u32::MAX] {
            let got = p.dither(base, d);
            assert!((ms(2_000)..=ms(3_000)).contains(&got), "{d}: {got:?}");
        }
        assert_eq!(RandomFactor::ONE.to_string(), "1.0");
        assert_eq!(RandomFactor::from_thousandths(1_500).to_string(), "1.5");
        assert_eq!(RandomFactor::from_thousandths(1_250).to_string(), "1.25");
        assert_eq!(RandomFactor::from_thousandths(2_001).to_string(), "2.001");
        assert_eq!(RandomFactor::from_thousandths(1_500).as_f64(), 1.5);
    }
}
