//! The server's replay window (RFC 8613 §7.4): a sliding window of the last 32 Partial IVs.

/// Width of the window in sequence numbers.
pub const WINDOW_SIZE: u64 = 32;

/// Which recent Partial IVs a recipient has accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplayWindow {
    /// The highest accepted sequence number, or None before the first.
    highest: Option<u64>,
    /// Bit i set: `highest - i` was accepted (bit 0 is `highest` itself).
    seen: u32,
}

impl ReplayWindow {
    /// An empty window: every Partial IV is fresh.
    pub fn new() -> ReplayWindow {
        ReplayWindow::default()
    }

    /// True when `sequence_number` was not accepted before and is not below the window.
    pub fn is_fresh(&self, sequence_number: u64) -> bool {
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
    fn a_large_jump_clears_the_window() {
        let mut window = ReplayWindow::new();
        window.accept(0);
        window.accept(1_000);
        assert!(window.is_fresh(999));
        assert!(!window.is_fresh(1_000));
        assert!(!window.is_fresh(0));
    }
}
