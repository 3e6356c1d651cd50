//! Cancelling an exchange in the driver when the future waiting for it goes away.

use crate::driver::{Command, Driver};

/// Sends `Cancel` for its ticket when dropped, unless disarmed (the exchange ended).
#[derive(Debug)]
pub(crate) struct CancelGuard {
    driver: Driver,
    ticket: u64,
    armed: bool,
}

impl CancelGuard {
    pub fn new(driver: Driver, ticket: u64) -> CancelGuard {
        CancelGuard {
            driver,
            ticket,
            armed: true,
        }
    }

    /// The exchange is over: nothing to cancel.
    pub fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.armed {
            self.driver.try_command(Command::Cancel {
                ticket: self.ticket,
            });
        }
    }
}
