//! The engine's own clock type: drivers map real or virtual time onto it.

pub use core::time::Duration;

/// A point in time: nanoseconds from an arbitrary origin chosen by the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Instant(u64);

impl Instant {
    /// The origin.
    pub const ZERO: Instant = Instant(0);

    /// The instant `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// The instant `millis` milliseconds after the origin.
    pub const fn from_millis(millis: u64) -> Instant {
        Instant(millis.saturating_mul(1_000_000))
    }

    /// The instant `secs` seconds after the origin.
    pub const fn from_secs(secs: u64) -> Instant {
        Instant(secs.saturating_mul(1_000_000_000))
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        duration_from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating at the far future.
    // One copy called on bare-metal targets: inlined, its 128-bit nanoseconds took 70 B of
    // a node's flash at each of the engine's deadlines.
    #[cfg_attr(target_os = "none", inline(never))]
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(
            self.0
                .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }
}

impl core::ops::Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl core::ops::Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

// Duration arithmetic as `core::time::Duration`'s, to the same results, in 32-bit divisions:
// a 32-bit CPU such as Cortex-M3 divides those in hardware, while Duration's own divide 64
// bits (nanoseconds into seconds) and link a software routine of about 1 KiB.

/// `n / d` and `n % d` for `d` below 2^16 in 32-bit divisions (the engine's and a 32-bit
/// driver's, such as the mote's numbers in text): the high word, then the low word's halves,
/// each after the remainder so far (below 2^16, so the two fit in 32 bits).
pub const fn div_rem_small(n: u64, d: u32) -> (u64, u32) {
    debug_assert!(d != 0 && d < 1 << 16);
    let (high, low) = ((n >> 32) as u32, n as u32);
    let mid = ((high % d) << 16) | (low >> 16);
    let low = ((mid % d) << 16) | (low & 0xffff);
    let q_low = ((mid / d) << 16) | (low / d);
    ((((high / d) as u64) << 32) | q_low as u64, low % d)
}

/// `n / (2^32 − 1)` and `n % (2^32 − 1)`: as 2^32 = (2^32 − 1) + 1, `n = h·2^32 + l` is
/// `h·(2^32 − 1) + h + l`, and `h + l` holds the divisor at most twice.
const fn div_rem_u32_max(n: u64) -> (u64, u32) {
    let (high, low) = ((n >> 32) as u32, n as u32);
    let (sum, carry) = low.overflowing_add(high);
    // A carry is 2^32 = (2^32 − 1) + 1; `sum` is at most 2^32 − 2 then, so no second one.
    let (q, r) = (high as u64 + carry as u64, sum + carry as u32);
    if r == u32::MAX {
        (q + 1, 0)
    } else {
        (q, r)
    }
}

/// `nanos` as whole seconds and the nanoseconds beyond them: 10^9 is 15 625 · 64 000, both
/// below 2^16.
pub(crate) const fn split_nanos(nanos: u64) -> (u64, u32) {
    let (q, r1) = div_rem_small(nanos, 15_625);
    let (secs, r2) = div_rem_small(q, 64_000);
    (secs, r2 * 15_625 + r1)
}

/// [`Duration::from_nanos`] without 64-bit division.
pub(crate) const fn duration_from_nanos(nanos: u64) -> Duration {
    let (secs, nanos) = split_nanos(nanos);
    Duration::new(secs, nanos)
}

/// [`Duration::checked_mul`] without 64-bit division.
pub(crate) fn checked_mul(d: Duration, k: u32) -> Option<Duration> {
    let (carry, nanos) = split_nanos(u64::from(d.subsec_nanos()) * u64::from(k));
    let secs = d.as_secs().checked_mul(u64::from(k))?.checked_add(carry)?;
    Some(Duration::new(secs, nanos))
}

/// [`Duration::saturating_mul`] without 64-bit division.
pub(crate) fn saturating_mul(d: Duration, k: u32) -> Duration {
    checked_mul(d, k).unwrap_or(Duration::MAX)
}

/// `d / 1000` as `Duration`'s `Div<u32>` gives it (rounded down to the nanosecond),
/// without 64-bit division.
pub(crate) fn div_1000(d: Duration) -> Duration {
    let (secs, rest) = div_rem_small(d.as_secs(), 1_000);
    // `rest` seconds are `rest`·10^6 ns once divided by 1000: less than a second with the
    // nanoseconds' share.
    Duration::new(secs, rest * 1_000_000 + d.subsec_micros())
}

/// `d / (2^32 − 1)` as `Duration`'s `Div<u32>` gives it, without 64-bit division.
pub(crate) fn div_u32_max(d: Duration) -> Duration {
    let (secs, rest) = div_rem_u32_max(d.as_secs());
    // Under 2^62: `rest` < 2^32 − 1 seconds of nanoseconds.
    let sub = u64::from(rest) * 1_000_000_000 + u64::from(d.subsec_nanos());
    Duration::new(secs, div_rem_u32_max(sub).0 as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_secs(2);
        assert_eq!(t + Duration::from_millis(500), Instant::from_millis(2500));
        assert_eq!(Instant::ZERO - t, Duration::ZERO);
        assert_eq!(
            Instant::from_nanos(u64::MAX) + Duration::from_secs(1),
            Instant::from_nanos(u64::MAX)
        );
    }

    /// Nanosecond counts at the edges of the helpers' steps.
    fn edge_nanos() -> std::vec::Vec<u64> {
        const W: u64 = u32::MAX as u64;
        let mut v = std::vec![0, 15_624, 15_625, 999_999_999, 1_000_000_000];
        for k in [
            1u64,
            1 << 16,
            1 << 31,
            1 << 32,
            1 << 33,
            1 << 48,
            1 << 63,
            W,
            W * W,
        ] {
            v.extend([k - 1, k, k + 1]);
        }
        // Words summing to 2^32 − 1, and to the most; seconds of 2^32 − 1.
        v.extend([(1 << 33) - 2, W << 32, (W << 32) - 1, W * 1_000_000_000]);
        v.extend([u64::MAX / 2, u64::MAX - 1, u64::MAX]);
        v
    }

    /// Durations at the same edges, in seconds too, up to `Duration::MAX`.
    fn edge_durations() -> std::vec::Vec<Duration> {
        let mut v: std::vec::Vec<Duration> =
            edge_nanos().into_iter().map(Duration::from_nanos).collect();
        for secs in edge_nanos() {
            v.extend([0, 1, 999_999_999].map(|n| Duration::new(secs, n)));
        }
        v
    }

    fn factors() -> [u32; 10] {
        [
            0,
            1,
            2,
            999,
            1_000,
            1_001,
            1_500,
            1_000_000,
            u32::MAX - 1,
            u32::MAX,
        ]
    }

    #[test]
    fn duration_arithmetic_matches_core_at_the_edges() {
        for n in edge_nanos() {
            assert_eq!(duration_from_nanos(n), Duration::from_nanos(n), "{n}");
            assert_eq!(
                split_nanos(n),
                (n / 1_000_000_000, (n % 1_000_000_000) as u32)
            );
            assert_eq!(
                div_rem_u32_max(n),
                (n / u64::from(u32::MAX), (n % u64::from(u32::MAX)) as u32)
            );
            for d in [1, 10, 1_000, 15_625, 64_000, u32::from(u16::MAX)] {
                assert_eq!(
                    div_rem_small(n, d),
                    (n / u64::from(d), (n % u64::from(d)) as u32)
                );
            }
        }
        for d in edge_durations() {
            assert_eq!(div_1000(d), d / 1_000, "{d:?}");
            assert_eq!(div_u32_max(d), d / u32::MAX, "{d:?}");
            for k in factors() {
                assert_eq!(checked_mul(d, k), d.checked_mul(k), "{d:?} * {k}");
                assert_eq!(saturating_mul(d, k), d.saturating_mul(k), "{d:?} * {k}");
            }
        }
        assert_eq!(div_1000(Duration::MAX), Duration::MAX / 1_000);
        assert_eq!(div_u32_max(Duration::MAX), Duration::MAX / u32::MAX);
        assert_eq!(checked_mul(Duration::MAX, 1), Some(Duration::MAX));
        assert_eq!(checked_mul(Duration::MAX, 2), None);
    }

    proptest! {
        #[test]
        fn duration_arithmetic_matches_core(n in any::<u64>(), secs in any::<u64>(), sub in 0u32..1_000_000_000, k in any::<u32>(), shift in 0u32..64) {
            // Small values as often as large ones.
            let n = n >> shift;
            prop_assert_eq!(duration_from_nanos(n), Duration::from_nanos(n));
            prop_assert_eq!(split_nanos(n), (n / 1_000_000_000, (n % 1_000_000_000) as u32));
            let w = u64::from(u32::MAX);
            prop_assert_eq!(div_rem_u32_max(n), (n / w, (n % w) as u32));
            let small = (k >> 16).max(1);
            prop_assert_eq!(div_rem_small(n, small), (n / u64::from(small), (n % u64::from(small)) as u32));
            let d = Duration::new(secs >> shift, sub);
            prop_assert_eq!(div_1000(d), d / 1_000);
            prop_assert_eq!(div_u32_max(d), d / u32::MAX);
            prop_assert_eq!(checked_mul(d, k), d.checked_mul(k));
            prop_assert_eq!(saturating_mul(d, k), d.saturating_mul(k));
            prop_assert_eq!(saturating_mul(d, k >> shift.min(31)), d.saturating_mul(k >> shift.min(31)));
        }
    }
}
