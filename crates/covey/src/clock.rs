//! Mapping tokio's clock onto the engine's `Instant` (nanoseconds from the driver's start).

use covey_proto::Instant;

/// The driver's time origin.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: tokio::time::Instant,
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Clock {
        Clock {
            origin: tokio::time::Instant::now(),
        }
    }

    /// The engine's now.
    pub fn now(&self) -> Instant {
        let elapsed = self.origin.elapsed().as_nanos();
        Instant::from_nanos(u64::try_from(elapsed).unwrap_or(u64::MAX))
    }

    /// The tokio instant for an engine instant.
    pub fn to_tokio(self, at: Instant) -> tokio::time::Instant {
        self.origin + std::time::Duration::from_nanos(at.as_nanos())
    }
}
