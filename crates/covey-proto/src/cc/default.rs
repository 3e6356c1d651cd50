//! RFC 7252 §4.2: a fixed base of ACK_TIMEOUT and binary exponential backoff.

use super::RtoEstimator;
use crate::time::{Duration, Instant};
use crate::transmission_parameters::TransmissionParameters;

/// The RFC 7252 default: every exchange starts at ACK_TIMEOUT and doubles per expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultRto {
    ack_timeout: Duration,
}

impl DefaultRto {
    /// The default estimator for ACK_TIMEOUT of `params`.
    pub fn new(params: &TransmissionParameters) -> DefaultRto {
        DefaultRto {
            ack_timeout: params.ack_timeout,
        }
    }
}

impl RtoEstimator for DefaultRto {
    fn base_rto(&mut self, _now: Instant, _ongoing: usize) -> Duration {
        self.ack_timeout
    }

    fn next_timeout(&self, _base: Duration, previous: Duration) -> Duration {
        // Doubled as a sum: `saturating_mul` divides 64 bits.
        previous.saturating_add(previous)
    }

    fn on_timeout(&mut self, _now: Instant) {}

    fn on_sample(&mut self, _now: Instant, _rtt: Duration, _retransmissions: u8) {}

    fn current_rto(&self) -> Duration {
        self.ack_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transmission_parameters::retransmission_schedule;
    use std::vec::Vec;

    #[test]
    fn fixed_base_and_binary_backoff() {
        let p = TransmissionParameters::default();
        let mut e = DefaultRto::new(&p);
        let now = Instant::from_secs(10);
        e.on_sample(now, Duration::from_millis(100), 0);
        e.on_timeout(now);
        assert_eq!(e.base_rto(now, 3), Duration::from_secs(2));
        assert_eq!(e.current_rto(), Duration::from_secs(2));
        let base = Duration::from_secs(3);
        let mut timers = Vec::new();
        let mut t = base;
        for _ in 0..5 {
            timers.push(t);
            t = e.next_timeout(base, t);
        }
        assert_eq!(timers, [3, 6, 12, 24, 48].map(Duration::from_secs));
        assert_eq!(e.next_timeout(base, Duration::MAX), Duration::MAX);
    }

    #[test]
    fn backoff_matches_p4_schedule() {
        let p = TransmissionParameters::default();
        let e = DefaultRto::new(&p);
        let initial = Duration::from_secs(3);
        let mut sent = Duration::ZERO;
        let mut timer = initial;
        let mut times = Vec::new();
        for _ in 0..=p.max_retransmit {
            times.push(sent);
            sent += timer;
            timer = e.next_timeout(initial, timer);
        }
        let schedule = retransmission_schedule(initial, &p);
        assert_eq!(sent, schedule.give_up_at());
        assert_eq!(times, schedule.collect::<Vec<_>>());
    }
}
