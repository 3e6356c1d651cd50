//! CoCoA (draft-ietf-core-cocoa-03): strong and weak RTT estimators blended into one overall
//! RTO, a blind RTO before the first sample, a variable backoff factor and idle aging.

use super::rfc6298::SmoothedRtt;
use super::{backoff, duration, secs, RtoEstimator};
use crate::time::{Duration, Instant};
use crate::transmission_parameters::TransmissionParameters;

/// K of the strong estimator.
const K_STRONG: f64 = 4.0;
/// K of the weak estimator.
const K_WEAK: f64 = 1.0;
/// Blend weight of a strong sample's estimate into the overall RTO.
const W_STRONG: f64 = 0.5;
/// Blend weight of a weak sample's estimate into the overall RTO.
const W_WEAK: f64 = 0.25;
/// Clock granularity G in `SRTT + max(G, K·RTTVAR)`: 1 ms, the finest timer a driver keeps
/// (the spec's vectors use G = 0; G only matters when K·RTTVAR < 1 ms, and it keeps RTO > 0).
const GRANULARITY: f64 = 0.001;
/// Below this RTO (s) the VBF is 3 and idle aging doubles the RTO (LOW_AGING_RTO_THRESH).
const LOW_THRESH: f64 = 1.0;
/// Above this RTO (s) the VBF is 1.5 and idle aging halves towards 2 s (HIGH_AGING_RTO_THRESH).
const HIGH_THRESH: f64 = 3.0;
/// Idle time, in RTOs, after which a low RTO ages (LOW_AGING_RTO_FACTOR).
const LOW_AGING_FACTOR: f64 = 16.0;
/// Idle time, in RTOs, after which a high RTO ages (HIGH_AGING_RTO_FACTOR).
const HIGH_AGING_FACTOR: f64 = 4.0;
/// Backoff truncation of one exchange's timer.
const MAX_BACKOFF: Duration = Duration::from_secs(32);

/// CoCoA per-peer state with draft-03 semantics; `strong_only` gives `cocoa-strong`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cocoa {
    strong: Option<SmoothedRtt>,
    weak: Option<SmoothedRtt>,
    /// E_strong in seconds (ACK_TIMEOUT until the first strong sample).
    e_strong: f64,
    /// E_weak in seconds (ACK_TIMEOUT until the first weak sample).
    e_weak: f64,
    /// The overall RTO in seconds.
    rto: f64,
    /// t_upd, when the overall RTO last changed; `None` until the first sample (blind RTO).
    updated: Option<Instant>,
    /// The initial RTO and blind-RTO unit: ACK_TIMEOUT (2 s by default, the draft's value).
    initial: f64,
    strong_only: bool,
}

impl Cocoa {
    /// A CoCoA estimator with no samples; `strong_only` ignores weak samples (`cocoa-strong`).
    pub fn new(params: &TransmissionParameters, strong_only: bool) -> Cocoa {
        let initial = secs(params.ack_timeout);
        Cocoa {
            strong: None,
            weak: None,
            e_strong: initial,
            e_weak: initial,
            rto: initial,
            updated: None,
            initial,
            strong_only,
        }
    }

    /// Whether weak samples are ignored (`cocoa-strong`).
    pub fn is_strong_only(&self) -> bool {
        self.strong_only
    }

    /// Whether no RTT sample has been taken yet, so the blind RTO applies.
    pub fn is_blind(&self) -> bool {
        self.updated.is_none()
    }

    /// Ages the overall RTO for the idle time since `t_upd`, cumulatively (§3.6), keeping the
    /// idle time no step consumed.
    fn age(&mut self, now: Instant, updated: Instant) {
        let mut idle = secs(now.saturating_duration_since(updated));
        let mut rto = self.rto;
        let mut stepped = false;
        loop {
            if rto > 0.0 && rto < LOW_THRESH && idle > LOW_AGING_FACTOR * rto {
                idle -= LOW_AGING_FACTOR * rto;
                rto *= 2.0;
            } else if rto > HIGH_THRESH && idle > HIGH_AGING_FACTOR * rto {
                idle -= HIGH_AGING_FACTOR * rto;
                rto = 1.0 + rto / 2.0;
            } else {
                break;
            }
            stepped = true;
        }
        if stepped {
            let left = u64::try_from(duration(idle).as_nanos()).unwrap_or(u64::MAX);
            self.rto = rto;
            self.updated = Some(Instant::from_nanos(now.as_nanos().saturating_sub(left)));
        }
    }
}

impl RtoEstimator for Cocoa {
    fn base_rto(&mut self, now: Instant, ongoing: usize) -> Duration {
        match self.updated {
            // Blind RTO (§3.2): the k-th parallel exchange, k = ongoing + 1, gets k·ACK_TIMEOUT.
            None => duration(self.initial * (ongoing as f64 + 1.0)),
            Some(updated) => {
                self.age(now, updated);
                duration(self.rto)
            }
        }
    }

    fn next_timeout(&self, _base: Duration, previous: Duration) -> Duration {
        // Draft pseudocode: the VBF is re-evaluated on the current timer value.
        let t = secs(previous);
        let vbf = if t < LOW_THRESH {
            3.0
        } else if t > HIGH_THRESH {
            1.5
        } else {
            2.0
        };
        backoff(previous, vbf, Some(MAX_BACKOFF))
    }

    fn on_timeout(&mut self, _now: Instant) {
        // CoCoA never backs off the overall estimate, only the exchange's own timer.
    }

    fn on_sample(&mut self, now: Instant, rtt: Duration, retransmissions: u8) {
        let r = secs(rtt);
        let (estimate, weight) = match retransmissions {
            0 => {
                let s = SmoothedRtt::sample(&mut self.strong, r);
                self.e_strong = s.rto(K_STRONG, GRANULARITY);
                (self.e_strong, W_STRONG)
            }
            1 | 2 if !self.strong_only => {
                let s = SmoothedRtt::sample(&mut self.weak, r);
                self.e_weak = s.rto(K_WEAK, GRANULARITY);
                (self.e_weak, W_WEAK)
            }
            // n ≥ 3 (and weak samples for cocoa-strong) are discarded.
            _ => return,
        };
        self.rto = weight * estimate + (1.0 - weight) * self.rto;
        self.updated = Some(now);
    }

    fn current_rto(&self) -> Duration {
        duration(self.rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{assert_secs, s, sample};
    use std::vec::Vec;

    const T0: Instant = Instant::from_secs(1000);

    fn cocoa() -> Cocoa {
        Cocoa::new(&TransmissionParameters::default(), false)
    }

    /// A CoCoA estimator whose overall RTO is `rto` seconds, last updated at `T0`.
    fn with_rto(rto: f64) -> Cocoa {
        let mut c = cocoa();
        c.rto = rto;
        c.updated = Some(T0);
        c
    }

    #[test]
    fn c1_strong_samples_only() {
        let mut c = cocoa();
        let expected = [
            (0.5, 3.0, 2.5),
            (0.375, 2.5, 2.5),
            (0.28125, 2.125, 2.3125),
            (0.2109375, 1.84375, 2.078125),
        ];
        for (i, (rttvar, e, rto)) in expected.into_iter().enumerate() {
            let got = sample(&mut c, T0 + s(i as f64), s(1.0), 0);
            assert_secs(got, rto);
            let st = c.strong.unwrap();
            assert_secs(s(st.srtt()), 1.0);
            assert_secs(s(st.rttvar()), rttvar);
            assert_secs(s(c.e_strong), e);
        }
        assert!(c.weak.is_none());
    }

    #[test]
    fn c2_mixed_sequence() {
        let mut c = cocoa();
        let steps = [
            (1.0, 0, 2.5),
            (3.0, 1, 3.0),
            (0.8, 0, 2.8375),
            (2.5, 2, 3.175),
            (9.0, 3, 3.175),
            (1.2, 0, 2.8390625),
        ];
        for (i, (r, n, rto)) in steps.into_iter().enumerate() {
            assert_secs(sample(&mut c, T0 + s(i as f64), s(r), n), rto);
        }
        let st = c.strong.unwrap();
        assert_secs(s(st.srtt()), 1.003125);
        assert_secs(s(st.rttvar()), 0.375);
        assert_secs(s(c.e_strong), 2.503125);
        let wk = c.weak.unwrap();
        assert_secs(s(wk.srtt()), 2.9375);
        assert_secs(s(wk.rttvar()), 1.25);
        assert_secs(s(c.e_weak), 4.1875);
        // The discarded sample did not move t_upd.
        assert_eq!(c.updated, Some(T0 + s(5.0)));
    }

    #[test]
    fn c2_cocoa_strong_ignores_weak_samples() {
        let mut c = Cocoa::new(&TransmissionParameters::default(), true);
        assert!(c.is_strong_only());
        let steps = [
            (1.0, 0, 2.5),
            (3.0, 1, 2.5),
            (0.8, 0, 0.5 * 2.675 + 0.5 * 2.5),
            (2.5, 2, 2.5875),
            (9.0, 3, 2.5875),
        ];
        for (i, (r, n, rto)) in steps.into_iter().enumerate() {
            assert_secs(sample(&mut c, T0 + s(i as f64), s(r), n), rto);
        }
        assert!(c.weak.is_none());
    }

    #[test]
    fn c3_draft_example_a1() {
        // Overall RTO 1.5 s; the draft keeps E_weak at 3 s (RTT 2, RTTVAR 1) for both samples.
        // A first weak sample of 2 s gives exactly that state; 8/3 s then keeps E_weak at 3 s.
        let mut c = with_rto(1.5);
        assert_secs(sample(&mut c, T0, s(2.0), 1), 1.875);
        assert_secs(s(c.e_weak), 3.0);
        assert_secs(sample(&mut c, T0, s(8.0 / 3.0), 2), 2.15625);
        assert_secs(s(c.e_weak), 3.0);
    }

    #[test]
    fn c4_sub_second_path() {
        let mut c = cocoa();
        let expected = [1.3, 0.9, 0.6625, 0.515625, 0.421094];
        for (i, rto) in expected.into_iter().enumerate() {
            let now = T0 + s(i as f64 * 0.2);
            assert_secs(sample(&mut c, now, s(0.2), 0), rto);
            let base = c.base_rto(now, 0);
            let vbf = c.next_timeout(base, base).as_secs_f64() / base.as_secs_f64();
            let want = if i == 0 { 2.0 } else { 3.0 };
            assert!((vbf - want) * (vbf - want) < 1e-12, "sample {i}: VBF {vbf}");
        }
    }

    fn timers(c: &Cocoa, base: f64) -> Vec<Duration> {
        let base = s(base);
        let mut t = base;
        let mut out = Vec::new();
        for _ in 0..5 {
            out.push(t);
            t = c.next_timeout(base, t);
        }
        out
    }

    fn assert_all(got: &[Duration], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (&g, &w) in got.iter().zip(want) {
            assert_secs(g, w);
        }
    }

    #[test]
    fn c5_vbf_timer_sequences() {
        let c = cocoa();
        let seq = timers(&c, 0.3);
        assert_all(&seq, &[0.3, 0.9, 2.7, 5.4, 8.1]);
        let mut sent = Duration::ZERO;
        let mut sends = Vec::new();
        for &t in &seq {
            sends.push(sent);
            sent += t;
        }
        assert_all(&sends, &[0.0, 0.3, 1.2, 3.9, 9.3]);
        assert_secs(sent, 17.4);
        assert_all(&timers(&c, 0.9), &[0.9, 2.7, 5.4, 8.1, 12.15]);
        assert_all(&timers(&c, 2.0), &[2.0, 4.0, 6.0, 9.0, 13.5]);
        assert_all(&timers(&c, 4.0), &[4.0, 6.0, 9.0, 13.5, 20.25]);
        // Exactly 1 s and 3 s use 2.
        assert_secs(c.next_timeout(s(1.0), s(1.0)), 2.0);
        assert_secs(c.next_timeout(s(3.0), s(3.0)), 6.0);
    }

    #[test]
    fn c5_backoff_truncated_at_32_s() {
        let c = cocoa();
        assert_all(&timers(&c, 20.0), &[20.0, 30.0, 32.0, 32.0, 32.0]);
        // A base already above 32 s is not shortened.
        assert_secs(c.next_timeout(s(40.0), s(40.0)), 40.0);
    }

    /// The RTO after aging from `rto` for `idle` seconds.
    fn aged(rto: f64, idle: f64) -> (Cocoa, Duration) {
        let mut c = with_rto(rto);
        let got = c.base_rto(T0 + s(idle), 0);
        (c, got)
    }

    #[test]
    fn c6_aging() {
        let (c, got) = aged(0.3, 5.0);
        assert_secs(got, 0.6);
        assert_eq!(c.updated, Some(T0 + s(4.8)));
        assert_secs(aged(0.3, 20.0).1, 1.2);
        let (c, got) = aged(8.0, 40.0);
        assert_secs(got, 5.0);
        assert_eq!(c.updated, Some(T0 + s(32.0)));
        let (c, got) = aged(8.0, 100.0);
        assert_secs(got, 2.75);
        assert_eq!(c.updated, Some(T0 + s(66.0)));
        // Strict comparisons: exactly 16 s idle does not age an RTO of 4 s.
        let (c, got) = aged(4.0, 16.0);
        assert_secs(got, 4.0);
        assert_eq!(c.updated, Some(T0));
        assert_secs(aged(4.0, 17.0).1, 3.0);
        // Between 1 s and 3 s nothing ever ages.
        assert_secs(aged(2.0, 1e6).1, 2.0);
    }

    #[test]
    fn c6_aging_keeps_unconsumed_idle_time() {
        // 0.3 s aged to 0.6 s after 4.8 s; 0.2 s of idle time carries over, so a further
        // 9.4 s (9.6 s idle in total) is not enough but a little more doubles again.
        let mut c = with_rto(0.3);
        assert_secs(c.base_rto(T0 + s(5.0), 0), 0.6);
        assert_secs(c.base_rto(T0 + s(14.4), 0), 0.6);
        assert_secs(c.base_rto(T0 + s(14.41), 0), 1.2);
        // current_rto has no side effects.
        let mut c = with_rto(8.0);
        assert_secs(c.current_rto(), 8.0);
        assert_eq!(c.updated, Some(T0));
        assert_secs(c.base_rto(T0 + s(40.0), 0), 5.0);
        assert_secs(c.current_rto(), 5.0);
    }

    #[test]
    fn c7_blind_rto() {
        let mut c = cocoa();
        assert!(c.is_blind());
        assert_secs(c.base_rto(T0, 0), 2.0);
        assert_secs(c.base_rto(T0, 1), 4.0);
        assert_secs(c.base_rto(T0, 2), 6.0);
        assert_secs(c.current_rto(), 2.0);
        // A discarded sample keeps the RTO blind; any used sample ends it.
        c.on_sample(T0, s(0.5), 3);
        assert_secs(c.base_rto(T0, 2), 6.0);
        c.on_sample(T0, s(1.0), 1);
        assert!(!c.is_blind());
        // E_weak = 1 + 1·0.5 = 1.5; RTO = 0.25·1.5 + 0.75·2.
        assert_secs(c.base_rto(T0, 2), 1.875);
        // cocoa-strong stays blind through weak samples.
        let mut strong = Cocoa::new(&TransmissionParameters::default(), true);
        strong.on_sample(T0, s(1.0), 1);
        assert_secs(strong.base_rto(T0, 1), 4.0);
    }

    #[test]
    fn on_timeout_never_backs_off_the_estimate() {
        let mut c = with_rto(1.5);
        for _ in 0..10 {
            c.on_timeout(T0);
        }
        assert_secs(c.base_rto(T0, 0), 1.5);
    }

    #[test]
    fn zero_samples_keep_a_positive_rto() {
        let mut c = cocoa();
        for _ in 0..10_000 {
            c.on_sample(T0, Duration::ZERO, 0);
        }
        let rto = c.current_rto();
        assert!(rto >= Duration::from_micros(999), "{rto:?}");
        // Aging from there terminates and ends between 1 s and 3 s.
        let got = c.base_rto(Instant::from_nanos(u64::MAX), 0);
        assert!(got >= Duration::from_secs(1) && got <= Duration::from_secs(3));
    }
}
