//! Observe (RFC 7641): the client's freshness rule for notifications.

#[cfg(feature = "client")]
use crate::exchange::client_exchange::ObserveState;
use crate::{Duration, Instant};

/// Half the 24-bit sequence space: the reordering window of RFC 7641 §3.4.
const HALF: u32 = 1 << 23;

/// After this long, a notification is newer whatever its sequence number.
pub const FRESHNESS_WINDOW: Duration = Duration::from_secs(128);

/// True when a notification with Observe value `v1` received at `t1` is newer than the
/// freshest one so far, (`v2`, `t2`).
pub fn is_newer(v1: u32, t1: Instant, v2: u32, t2: Instant) -> bool {
    let (v1, v2) = (v1 & 0xFF_FFFF, v2 & 0xFF_FFFF);
    (v1 < v2 && v2 - v1 > HALF) || (v1 > v2 && v1 - v2 < HALF) || t1 > t2 + FRESHNESS_WINDOW
}

#[cfg(feature = "client")]
impl ObserveState {
    /// Takes notification `value` received at `now` as the freshest if it is newer than the
    /// freshest so far (or the first); false when it is stale and must be ignored.
    pub(crate) fn accept(&mut self, value: u32, now: Instant) -> bool {
        if let Some((v2, t2)) = self.freshest {
            if !is_newer(value, now, v2, t2) {
                return false;
            }
        }
        self.freshest = Some((value, now));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: u64) -> Instant {
        Instant::from_secs(s)
    }

    #[test]
    fn spec_vectors_o1_to_o5() {
        assert!(is_newer(101, at(1), 100, at(0)), "O1");
        assert!(!is_newer(100, at(5), 101, at(0)), "O2 reordered");
        assert!(is_newer(2, at(1), 16_777_215, at(0)), "O3 wrap");
        assert!(is_newer(99, at(130), 100, at(0)), "O4 time rule");
        assert!(!is_newer(8_388_608, at(1), 0, at(0)), "O5 not < 2^23");
        assert!(
            !is_newer(100, at(1), 100, at(0)),
            "a duplicate is not newer"
        );
    }
}
