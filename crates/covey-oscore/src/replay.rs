//! Replay protection (RFC 8613 §7.4): the server's sliding window of the last 32 Partial IVs
//! of requests, and the client's Notification Number of each observation (§7.4.1).

/// Width of the window in sequence numbers.
pub const WINDOW_SIZE: u64 = 32;

/// Which recent Partial IVs a recipient has accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplayWindow {
    /// The highest accepted sequence number, or None before the first.
    highest: Option<u64>,
    /// Bit i set: `highest - i` was accepted (bit 0 is `highest` itself).
    seen: u32,
    /// Lost, as after a restart that did not keep it: nothing is known fresh until a request
    /// proves its freshness with Echo (RFC 8613 Appendix B.1.2).
    lost: bool,
}

impl ReplayWindow {
    /// An empty window: every Partial IV is fresh.
    pub fn new() -> ReplayWindow {
        ReplayWindow::default()
    }

    /// A window lost in a restart: no Partial IV is fresh until [`ReplayWindow::recover`].
    pub fn lost() -> ReplayWindow {
        ReplayWindow {
            lost: true,
            ..ReplayWindow::default()
        }
    }

    /// False after a restart until a request's freshness was proven (Appendix B.1.2).
    pub fn is_known(&self) -> bool {
        !self.lost
    }

    /// Starts the window again at `sequence_number`, that of a request whose freshness was
    /// proven with Echo: it and everything below it are no longer fresh.
    pub fn recover(&mut self, sequence_number: u64) {
        *self = ReplayWindow {
            highest: Some(sequence_number),
            seen: u32::MAX,
            lost: false,
        };
    }

    /// True when `sequence_number` was not accepted before and is not below the window;
    /// never while the window is lost.
    pub fn is_fresh(&self, sequence_number: u64) -> bool {
        if self.lost {
            return false;
        }
        let Some(highest) = self.highest else {
            return true;
        };
        if sequence_number > highest {
            return true;
        }
        let age = highest - sequence_number;
        age < WINDOW_SIZE && self.seen & (1 << age) == 0
    }

    /// Records `sequence_number` as accepted (call only after it verified and was fresh).
    pub fn accept(&mut self, sequence_number: u64) {
        match self.highest {
            Some(highest) if sequence_number <= highest => {
                let age = highest - sequence_number;
                if age < WINDOW_SIZE {
                    self.seen |= 1 << age;
                }
            }
            Some(highest) => {
                let shift = sequence_number - highest;
                self.seen = if shift >= WINDOW_SIZE {
                    0
                } else {
                    self.seen << shift
                } | 1;
                self.highest = Some(sequence_number);
            }
            None => {
                self.seen = 1;
                self.highest = Some(sequence_number);
            }
        }
    }
}

/// The client's Notification Number of one observation (RFC 8613 §4.1.3.5.2, §7.4.1): the
/// highest Partial IV among its verified notifications. Notifications are ordered by it, as
/// their inner Observe is empty and the outer one unprotected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NotificationNumber {
    highest: Option<u64>,
}

impl NotificationNumber {
    /// An observation with no notification yet.
    pub fn new() -> NotificationNumber {
        NotificationNumber::default()
    }

    /// The highest Partial IV accepted so far, if any.
    pub fn value(&self) -> Option<u64> {
        self.highest
    }

    /// True when a notification with `partial_iv` is newer than every accepted one. `None`
    /// (the request's nonce reused) is only fresh before any Partial IV: it is the first
    /// response, the one a server may send without one.
    pub fn is_fresh(&self, partial_iv: Option<u64>) -> bool {
        match (partial_iv, self.highest) {
            (_, None) => true,
            (Some(piv), Some(highest)) => piv > highest,
            (None, Some(_)) => false,
        }
    }

    /// Records a verified, fresh notification's Partial IV.
    pub fn accept(&mut self, partial_iv: Option<u64>) {
        if let Some(piv) = partial_iv {
            self.highest = Some(self.highest.map_or(piv, |h| h.max(piv)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_partial_iv_is_accepted_once() {
        let mut window = ReplayWindow::new();
        for n in [5, 3, 9, 4, 40] {
            assert!(window.is_fresh(n), "{n}");
            window.accept(n);
            assert!(!window.is_fresh(n), "{n}");
        }
        // 9 is still inside the window below 40; 8 was never seen.
        assert!(!window.is_fresh(9));
        assert!(window.is_fresh(9 + 1));
        // Below the window is refused, even if never seen.
        assert!(!window.is_fresh(8));
        assert!(window.is_fresh(41));
    }

    #[test]
    fn a_lost_window_accepts_nothing_until_it_is_recovered() {
        let mut window = ReplayWindow::lost();
        assert!(!window.is_known());
        assert!(!window.is_fresh(0));
        assert!(!window.is_fresh(1 << 30));
        window.recover(100);
        assert!(window.is_known());
        // The proven request and anything older stay refused; newer ones are fresh.
        assert!(!window.is_fresh(100));
        assert!(!window.is_fresh(99));
        assert!(!window.is_fresh(80));
        assert!(window.is_fresh(101));
    }

    #[test]
    fn a_large_jump_clears_the_window() {
        let mut window = ReplayWindow::new();
        window.accept(0);
        window.accept(1_000);
        assert!(window.is_fresh(999));
        assert!(!window.is_fresh(1_000));
        assert!(!window.is_fresh(0));
    }

    #[test]
    fn notifications_must_come_with_ever_higher_partial_ivs() {
        let mut number = NotificationNumber::new();
        // The first response may reuse the request's nonce.
        assert!(number.is_fresh(None));
        number.accept(None);
        assert_eq!(number.value(), None);
        for piv in [0, 1, 5] {
            assert!(number.is_fresh(Some(piv)), "{piv}");
            number.accept(Some(piv));
            assert!(!number.is_fresh(Some(piv)), "{piv} again");
        }
        assert_eq!(number.value(), Some(5));
        // Older ones, even never seen, and the nonce-less first response, are stale now.
        assert!(!number.is_fresh(Some(4)));
        assert!(!number.is_fresh(None));
        assert!(number.is_fresh(Some(1 << 39)));
    }
}
