//! Where the resources read the wall-clock time: the system clock in `covey serve`, a clock
//! that follows the engine's virtual time in tests.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use covey_proto::Instant;

/// The wall-clock time as the Apps see it.
pub trait WallClock: Send {
    /// Time since the Unix epoch at the engine's `now`.
    fn since_epoch(&self, now: Instant) -> Duration;
}

/// The host's system clock (the engine's `now` is not needed).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl WallClock for SystemClock {
    fn since_epoch(&self, _now: Instant) -> Duration {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
    }
}

/// How long after `since_epoch` the wall clock next turns a second.
pub fn until_next_second(since_epoch: Duration) -> Duration {
    Duration::from_nanos(u64::from(1_000_000_000 - since_epoch.subsec_nanos()))
}
