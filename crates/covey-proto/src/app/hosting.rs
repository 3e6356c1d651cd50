//! What a node keeps for the Apps it hosts, apart from the engine: which App acts now, the
//! Apps' timers and their random stream.

use super::AppId;
use crate::rng::Rng;
use crate::storage::fifo::Fifo;
use crate::storage::slab::Slab;
use crate::storage::timer_queue::TimerQueue;
use crate::{Endpoint, Event, Instant, TimerId};

/// The Apps' side of a node: the acting App (owner of the exchanges and timers it starts),
/// the Apps' timers and their random stream. [`Node`](crate::Node) holds one.
#[derive(Debug)]
pub struct AppHosting {
    acting: AppId,
    rng: Rng,
    timers: Slab<(u64, AppId)>,
    deadlines: TimerQueue,
    fired: Fifo<(AppId, u64)>,
}

impl AppHosting {
    /// Hosting for Apps on `endpoint`: as many timers as its `max_app_timers`, and a random
    /// stream seeded from its seed so a run is reproducible.
    pub fn new(endpoint: &Endpoint) -> AppHosting {
        let capacity = endpoint.config().max_app_timers;
        AppHosting {
            acting: AppId(0),
            rng: Rng::new(endpoint.app_seed()),
            timers: Slab::with_capacity(capacity),
            deadlines: TimerQueue::with_capacity(capacity),
            fired: Fifo::new(),
        }
    }

    /// Makes `app` the owner of the exchanges and timers started until the next call; hosts
    /// of several Apps call it before each App runs.
    pub fn set_acting(&mut self, app: AppId) {
        self.acting = app;
    }

    /// The App acting now.
    pub fn acting(&self) -> AppId {
        self.acting
    }

    /// 64 bits from the Apps' random stream.
    pub fn random_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Sets a timer of the acting App that fires as `Event::Timer(value)` at `at`; `None`
    /// when `max_app_timers` are set already.
    pub fn set_timer(&mut self, at: Instant, value: u64) -> Option<TimerId> {
        let key = self.timers.insert((value, self.acting)).ok()?;
        self.deadlines.set(key.index(), at);
        Some(TimerId(key))
    }

    /// Cancels a timer; one that fired already is not affected.
    pub fn cancel_timer(&mut self, timer: TimerId) {
        if self.timers.remove(timer.0).is_some() {
            self.deadlines.cancel(timer.0.index());
        }
    }

    /// The earliest deadline of a timer.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.next_deadline()
    }

    /// Fires every timer due at `now`: their events wait for [`poll_event`](Self::poll_event).
    pub fn expire(&mut self, now: Instant) {
        while let Some(index) = self.deadlines.pop_expired(now) {
            let fired = self
                .timers
                .key_at(index)
                .and_then(|k| self.timers.remove(k));
            if let Some((value, owner)) = fired {
                self.fired.push_back((owner, value));
            }
        }
    }

    /// The next event for the Apps with the App it belongs to: the engine's first, then
    /// fired timers.
    pub fn poll_event(&mut self, endpoint: &mut Endpoint) -> Option<(AppId, Event)> {
        endpoint.poll_app_event().or_else(|| {
            self.fired
                .pop_front()
                .map(|(owner, value)| (owner, Event::Timer(value)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Duration};

    fn timer_events(hosting: &mut AppHosting, ep: &mut Endpoint) -> alloc::vec::Vec<(AppId, u64)> {
        core::iter::from_fn(|| hosting.poll_event(ep))
            .map(|(owner, event)| match event {
                Event::Timer(value) => (owner, value),
                other => panic!("not a timer: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn timers_fire_at_their_deadline_for_the_app_that_set_them_within_capacity() {
        let config = Config {
            max_app_timers: 3,
            ..Config::default()
        };
        let mut ep = Endpoint::new(config, 1).unwrap();
        let mut hosting = AppHosting::new(&ep);
        let at = |s| Instant::ZERO + Duration::from_secs(s);
        hosting.set_acting(AppId(1));
        let late = hosting.set_timer(at(5), 10).unwrap();
        hosting.set_acting(AppId(2));
        hosting.set_timer(at(2), 20).unwrap();
        hosting.set_timer(at(2), 21).unwrap();
        assert!(
            hosting.set_timer(at(9), 99).is_none(),
            "over max_app_timers"
        );
        assert_eq!(hosting.next_deadline(), Some(at(2)));

        hosting.expire(at(1));
        assert!(timer_events(&mut hosting, &mut ep).is_empty());
        hosting.expire(at(3));
        assert_eq!(
            timer_events(&mut hosting, &mut ep),
            [(AppId(2), 20), (AppId(2), 21)]
        );
        hosting.cancel_timer(late);
        hosting.expire(at(10));
        assert!(timer_events(&mut hosting, &mut ep).is_empty(), "cancelled");
        assert_eq!(hosting.next_deadline(), None);
        // Fired and cancelled timers free their places.
        for value in 0..3 {
            assert!(hosting.set_timer(at(20), value).is_some());
        }
    }
}
