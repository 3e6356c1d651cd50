//! Each node's Contiki clock (`core/sys/clock.h`, `cpu/msp430/f5xxx/clock.c`): a 128 Hz tick
//! interrupt driven by the node's own crystal, so every node ticks at its own phase. Timers
//! count ticks (`core/sys/timer.c`: `timer_set()` records `start = clock_time()`, and
//! `timer_expired()` is `clock_time() - start >= interval`), and etimers and ctimers are
//! checked from the tick interrupt: a timer of k ≥ 1 ticks set between two ticks expires on
//! the k-th tick after it was set, so 0 to 1 tick earlier than k ticks from now. A 0-tick
//! timer (csma.c's "send asap") has expired when set and runs at once.
//!
//! Two nodes that heard the same frame and draw the same number of ticks therefore do not fire
//! together: they are apart by the difference of their clocks' phases.

use covey_proto::{Duration, Instant};
use rand::Rng;

/// One node's tick phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeClock {
    tick_ns: u64,
    phase_ns: u64,
}

impl NodeClock {
    /// A clock of `tick` whose ticks fall at `phase` + m · tick.
    pub fn new(tick: Duration, phase: Duration) -> Self {
        let tick_ns = tick.as_nanos().max(1) as u64;
        NodeClock {
            tick_ns,
            phase_ns: phase.as_nanos() as u64 % tick_ns,
        }
    }

    /// A clock with a phase drawn uniformly over one tick.
    pub fn random(tick: Duration, rng: &mut impl Rng) -> Self {
        let tick_ns = tick.as_nanos().max(1) as u64;
        NodeClock::new(tick, Duration::from_nanos(rng.random_range(0..tick_ns)))
    }

    /// When a timer of `ticks` set at `now` expires.
    pub fn expiry(&self, now: Instant, ticks: u32) -> Instant {
        if ticks == 0 {
            return now;
        }
        let t = i128::from(now.as_nanos());
        let tick = i128::from(self.tick_ns);
        // The last tick at or before now (before time 0 in the first tick): the tick the
        // timer's start is counted from.
        let last_tick = t - (t - i128::from(self.phase_ns)).rem_euclid(tick);
        let at = last_tick + tick * i128::from(ticks);
        Instant::from_nanos(u64::try_from(at.max(t)).unwrap_or(u64::MAX))
    }

    /// `after` (a whole number of ticks) from `now`, aligned to this clock.
    pub fn expiry_after(&self, now: Instant, after: Duration) -> Instant {
        let after_ns = after.as_nanos() as u64;
        let ticks = (after_ns + self.tick_ns / 2) / self.tick_ns;
        self.expiry(now, u32::try_from(ticks).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK_NS: u64 = 7_812_500;

    #[test]
    fn a_timer_fires_on_the_kth_tick_of_the_nodes_own_clock() {
        let tick = Duration::from_nanos(TICK_NS);
        let clock = NodeClock::new(tick, Duration::from_nanos(1_000_000));
        // Set 2 ms after a tick at 1 ms: 3 ticks end on the tick at 1 ms + 3 ticks.
        let now = Instant::from_nanos(1_000_000 + 2_000_000);
        assert_eq!(
            clock.expiry(now, 3),
            Instant::from_nanos(1_000_000 + 3 * TICK_NS)
        );
        assert_eq!(clock.expiry(now, 0), now, "a 0-tick ctimer runs at once");
    }

    #[test]
    fn two_clocks_that_draw_the_same_ticks_fire_apart_by_their_phases() {
        let tick = Duration::from_nanos(TICK_NS);
        let a = NodeClock::new(tick, Duration::from_nanos(500_000));
        let b = NodeClock::new(tick, Duration::from_nanos(4_500_000));
        let now = Instant::from_nanos(100 * TICK_NS + 6_000_000);
        let gap = a.expiry(now, 4).as_nanos() as i64 - b.expiry(now, 4).as_nanos() as i64;
        assert_eq!(gap.unsigned_abs(), 4_000_000);
        for clock in [a, b] {
            let fired = clock.expiry(now, 4).saturating_duration_since(now);
            assert!(fired > tick * 3 && fired <= tick * 4, "{fired:?}");
        }
    }
}
