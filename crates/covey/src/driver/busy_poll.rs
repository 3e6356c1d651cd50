//! Adaptive busy polling: after a datagram the driver keeps looking at its sockets for up to
//! a window instead of sleeping in `epoll`, because under steady traffic the next request
//! comes sooner than a wake-up takes. A spin that catches nothing turns spinning off; it
//! comes back on once a datagram again arrives within the window after the driver went to
//! sleep. So a server under sparse load does not burn its CPU (the idea of KVM's adaptive
//! halt polling).

use std::time::{Duration, Instant};

/// The busy-poll state of one driver.
#[derive(Debug, Clone)]
pub(crate) struct BusyPoll {
    window: Duration,
    /// Whether the last spins paid off.
    enabled: bool,
    /// The current spin ends then.
    until: Option<Instant>,
    /// When the driver last went to sleep without spinning.
    asleep_since: Option<Instant>,
}

impl BusyPoll {
    /// Spins of up to `window` (zero: never).
    pub fn new(window: Duration) -> BusyPoll {
        BusyPoll {
            window,
            enabled: true,
            until: None,
            asleep_since: None,
        }
    }

    /// Whether busy polling is configured at all.
    pub fn is_on(&self) -> bool {
        !self.window.is_zero()
    }

    /// Whether [`BusyPoll::keep_spinning`] needs the time (so the caller reads the clock
    /// only then).
    pub fn wants_clock(&self) -> bool {
        !self.window.is_zero() && (self.until.is_some() || self.asleep_since.is_none())
    }

    /// Datagrams arrived at `now`: spin after handling them, if spinning pays off.
    pub fn on_datagrams(&mut self, now: Instant) {
        if self.window.is_zero() {
            return;
        }
        if let Some(since) = self.asleep_since.take() {
            if now.saturating_duration_since(since) < self.window {
                // A spin would have caught this one.
                self.enabled = true;
            }
        }
        if self.enabled {
            self.until = Some(now + self.window);
        }
    }

    /// Nothing is ready at `now`: true to look again at once, false to go to sleep.
    pub fn keep_spinning(&mut self, now: Instant) -> bool {
        match self.until {
            Some(until) if now < until => true,
            Some(_) => {
                // The spin caught nothing: stop spinning until it would pay off again.
                self.until = None;
                self.enabled = false;
                self.asleep_since = Some(now);
                false
            }
            None => {
                if !self.window.is_zero() && self.asleep_since.is_none() {
                    self.asleep_since = Some(now);
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_micros(50);

    fn us(origin: Instant, n: u64) -> Instant {
        origin + Duration::from_micros(n)
    }

    #[test]
    fn off_when_the_window_is_zero() {
        let t = Instant::now();
        let mut b = BusyPoll::new(Duration::ZERO);
        b.on_datagrams(t);
        assert!(!b.wants_clock());
        assert!(!b.keep_spinning(t));
    }

    #[test]
    fn spins_within_the_window_after_traffic() {
        let t = Instant::now();
        let mut b = BusyPoll::new(W);
        b.on_datagrams(t);
        assert!(b.keep_spinning(us(t, 10)));
        assert!(b.keep_spinning(us(t, 49)));
        assert!(!b.keep_spinning(us(t, 50)), "window over");
    }

    #[test]
    fn a_fruitless_spin_turns_spinning_off_until_a_short_gap_returns() {
        let t = Instant::now();
        let mut b = BusyPoll::new(W);
        b.on_datagrams(t);
        assert!(!b.keep_spinning(us(t, 60)), "caught nothing: sleep");
        // Sparse traffic: the next datagram came long after the driver slept.
        b.on_datagrams(us(t, 1_000));
        assert!(!b.keep_spinning(us(t, 1_001)), "stays off");
        // Now one arrives 20 µs after going to sleep: a spin would have caught it.
        b.on_datagrams(us(t, 1_021));
        assert!(b.keep_spinning(us(t, 1_030)), "back on");
    }
}
