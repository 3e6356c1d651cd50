//! Block-wise state expires on its own timer: idle Block1 uploads and cached Block2 bodies
//! are forgotten on time even on a server that has nothing else to do.

use crate::endpoint::Endpoint;
use crate::Instant;

impl Endpoint {
    /// Forgets uploads idle for EXCHANGE_LIFETIME and bodies past their lifetime, and sets
    /// the timer for the next to go.
    pub(crate) fn expire_block_state(&mut self, now: Instant) {
        self.uploads.expire(now, self.lifetimes.exchange);
        self.bodies.expire(now);
        self.arm_block_expiry();
    }

    /// Sets the block-expiry timer to when the next upload or body goes (or cancels it).
    pub(crate) fn arm_block_expiry(&mut self) {
        let next = [
            self.uploads.next_expiry(self.lifetimes.exchange),
            self.bodies.next_expiry(),
        ]
        .into_iter()
        .flatten()
        .min();
        let id = self.timer_layout.block_expiry_id();
        match next {
            Some(at) => self.timers.set(id, at),
            None => self.timers.cancel(id),
        }
    }
}
