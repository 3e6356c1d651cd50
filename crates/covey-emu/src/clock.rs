//! Real time for the link models: CLOCK_MONOTONIC mapped onto the engine's `Instant`, the
//! same clock the forwarder's timerfd is armed on, so a model's due time is a kernel timer.

use covey_proto::Instant;
use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, ClockId};

/// CLOCK_MONOTONIC in nanoseconds (0 if the clock cannot be read, which Linux never does).
pub fn monotonic_nanos() -> u64 {
    nanos_of(ClockId::CLOCK_MONOTONIC)
}

/// A clock's reading in nanoseconds (0 if it cannot be read).
fn nanos_of(clock: ClockId) -> u64 {
    clock_gettime(clock)
        .map(|t| {
            let nanos = i128::from(t.tv_sec()) * 1_000_000_000 + i128::from(t.tv_nsec());
            u64::try_from(nanos).unwrap_or(0)
        })
        .unwrap_or(0)
}

/// CPU time the calling thread has used, in nanoseconds.
pub fn thread_cpu_nanos() -> u64 {
    nanos_of(ClockId::CLOCK_THREAD_CPUTIME_ID)
}

/// The models' clock: `Instant::ZERO` is when the clock was made.
#[derive(Debug, Clone, Copy)]
pub struct RealClock {
    origin: u64,
}

impl RealClock {
    /// A clock starting now.
    pub fn start() -> RealClock {
        RealClock {
            origin: monotonic_nanos(),
        }
    }

    /// Now on the models' time line.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(monotonic_nanos().saturating_sub(self.origin))
    }

    /// `at` as an absolute CLOCK_MONOTONIC time, for a timerfd.
    pub fn monotonic_at(&self, at: Instant) -> TimeSpec {
        let nanos = self.origin.saturating_add(at.as_nanos());
        TimeSpec::new(
            i64::try_from(nanos / 1_000_000_000).unwrap_or(i64::MAX),
            i64::try_from(nanos % 1_000_000_000).unwrap_or(0),
        )
    }
}
