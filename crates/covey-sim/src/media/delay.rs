//! Propagation delay of a link, fixed or with uniform jitter.

use covey_proto::Duration;
use rand::Rng;

use crate::sim::SimRng;

/// How long a frame takes from the end of its serialisation to its arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagationDelay {
    /// Always the same.
    Fixed(Duration),
    /// Uniform in [`min`, `max`] (as netem's `delay d jitter j` without correlation:
    /// min = d − j, max = d + j).
    Uniform {
        /// Shortest delay.
        min: Duration,
        /// Longest delay.
        max: Duration,
    },
}

impl PropagationDelay {
    /// The delay of the next frame.
    pub fn sample(&self, rng: &mut SimRng) -> Duration {
        match *self {
            PropagationDelay::Fixed(d) => d,
            PropagationDelay::Uniform { min, max } => {
                let lo = min.as_nanos() as u64;
                let hi = max.as_nanos() as u64;
                if hi <= lo {
                    return min;
                }
                Duration::from_nanos(rng.random_range(lo..=hi))
            }
        }
    }

    /// The mean delay.
    pub fn mean(&self) -> Duration {
        match *self {
            PropagationDelay::Fixed(d) => d,
            PropagationDelay::Uniform { min, max } => (min + max.max(min)) / 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{stream_rng, Stream};

    #[test]
    fn uniform_delay_stays_in_bounds_and_centres_on_its_mean() {
        let d = PropagationDelay::Uniform {
            min: Duration::from_millis(16),
            max: Duration::from_millis(24),
        };
        let mut rng = stream_rng(1, Stream::Link(0));
        let samples: Vec<Duration> = (0..50_000).map(|_| d.sample(&mut rng)).collect();
        let lo = samples.iter().min().copied().unwrap_or_default();
        let hi = samples.iter().max().copied().unwrap_or_default();
        assert!(lo >= Duration::from_millis(16) && hi <= Duration::from_millis(24));
        assert!(lo < Duration::from_micros(16_100) && hi > Duration::from_micros(23_900));
        let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
        let error = mean.as_secs_f64() - d.mean().as_secs_f64();
        assert!(error.abs() < 50e-6, "mean off by {error} s");
        let fixed = PropagationDelay::Fixed(Duration::from_millis(20));
        assert_eq!(fixed.sample(&mut rng), Duration::from_millis(20));
    }
}
