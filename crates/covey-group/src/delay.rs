//! `delay=auto`: the paper's lower bound D = S·G / (R·(G−1)) on the delay between unicast
//! member requests, with S measured from earlier replies.

use covey_proto::Duration;

/// Longest delay `auto` ever gives.
const MAX_AUTO: Duration = Duration::from_secs(60);

/// The delay that spreads G replies of S bytes over the time a link of R bytes/s needs for
/// them: S·G / (R·(G−1)). Zero for a single member.
pub fn auto_delay(group_size: usize, response_size: f64, target_rate: u32) -> Duration {
    if group_size < 2 || target_rate == 0 || response_size.is_nan() || response_size <= 0.0 {
        return Duration::ZERO;
    }
    let g = group_size as f64;
    let secs = response_size * g / (f64::from(target_rate) * (g - 1.0));
    if !secs.is_finite() {
        return MAX_AUTO;
    }
    Duration::from_secs_f64(secs.clamp(0.0, MAX_AUTO.as_secs_f64()))
}

/// A running estimate of the member reply size S (bytes): an exponentially weighted mean
/// (gain 1/8) of measured replies, starting from a configured value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResponseSize {
    estimate: f64,
    samples: u64,
}

impl ResponseSize {
    /// An estimate of `initial` bytes before any reply.
    pub fn new(initial: u32) -> ResponseSize {
        ResponseSize {
            estimate: f64::from(initial),
            samples: 0,
        }
    }

    /// Takes one measured reply of `bytes`; the first replaces the initial guess.
    pub fn sample(&mut self, bytes: usize) {
        let b = bytes as f64;
        self.estimate = if self.samples == 0 {
            b
        } else {
            self.estimate + (b - self.estimate) / 8.0
        };
        self.samples += 1;
    }

    /// The current estimate in bytes.
    pub fn value(&self) -> f64 {
        self.estimate
    }

    /// Replies measured so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_values_for_g5_and_g40() {
        let d5 = auto_delay(5, 80.0, 1000);
        assert_eq!(d5.as_millis(), 100);
        let d40 = auto_delay(40, 80.0, 1000);
        assert_eq!(d40.as_millis(), 82);
        assert!((d40.as_secs_f64() - 0.082_051).abs() < 1e-6);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(auto_delay(1, 80.0, 1000), Duration::ZERO);
        assert_eq!(auto_delay(0, 80.0, 1000), Duration::ZERO);
        assert_eq!(auto_delay(5, 80.0, 0), Duration::ZERO);
        assert_eq!(auto_delay(5, f64::NAN, 1000), Duration::ZERO);
        assert_eq!(auto_delay(2, 1e12, 1), MAX_AUTO);
    }

    #[test]
    fn size_estimate_starts_at_80_and_follows_replies() {
        let mut s = ResponseSize::new(80);
        assert_eq!(s.value(), 80.0);
        assert_eq!(auto_delay(5, s.value(), 1000).as_millis(), 100);
        s.sample(40);
        assert_eq!(s.value(), 40.0);
        s.sample(120);
        assert_eq!(s.value(), 50.0);
        assert_eq!(s.samples(), 2);
        assert_eq!(auto_delay(5, s.value(), 1000).as_millis(), 62);
    }
}
