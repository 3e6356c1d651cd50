//! The EM's timers, many per query, multiplexed onto one timer of the node's (its table of
//! App timers is small and shared).

use covey_proto::{AppContext, Instant, TimerId};
use std::collections::BTreeMap;

/// The value of the EM's node timer ("EM" in ASCII in the top bytes).
pub(crate) const TIMER_MARK: u64 = 0x454d_0000_0000_0001;

/// Identifies a task of the EM (a query, a creation, ...); never reused.
pub(crate) type TaskId = u64;

/// A timer set by a task, to cancel it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TimerKey(Instant, u64);

/// Pending timers of every task, and the one node timer that wakes the EM for them.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    queue: BTreeMap<TimerKey, (TaskId, u8)>,
    armed: Option<(Instant, TimerId)>,
    seq: u64,
}

impl Timers {
    /// Wakes `task` with `tag` at `at`.
    pub fn add(&mut self, at: Instant, task: TaskId, tag: u8) -> TimerKey {
        self.seq += 1;
        let key = TimerKey(at, self.seq);
        self.queue.insert(key, (task, tag));
        key
    }

    /// Cancels a timer (no effect if it already fired).
    pub fn cancel(&mut self, key: TimerKey) {
        self.queue.remove(&key);
    }

    /// The node timer fired.
    pub fn fired(&mut self) {
        self.armed = None;
    }

    /// Removes and returns every timer due at `now`, earliest first.
    pub fn due(&mut self, now: Instant) -> Vec<(TaskId, u8)> {
        let mut out = Vec::new();
        while let Some(entry) = self.queue.first_entry() {
            if entry.key().0 > now {
                break;
            }
            out.push(entry.remove());
        }
        out
    }

    /// Sets the node timer for the earliest pending timer, if it is not set for it yet.
    pub fn arm(&mut self, cx: &mut AppContext<'_>) {
        let Some(next) = self.queue.first_key_value().map(|(k, _)| k.0) else {
            return;
        };
        if let Some((at, id)) = self.armed {
            if at <= next {
                return;
            }
            cx.cancel_timer(id);
            self.armed = None;
        }
        if let Some(id) = cx.set_timer(next, TIMER_MARK) {
            self.armed = Some((next, id));
        }
    }
}
