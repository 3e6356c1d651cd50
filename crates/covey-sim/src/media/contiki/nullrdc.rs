//! nullrdc (`core/net/mac/nullrdc.c`, `send_one_packet()`) with `NULLRDC_802154_AUTOACK` (set
//! in `platform/wismote/contiki-conf.h`) over the CC2520 (`dev/cc2520/cc2520.c`):
//!
//! - Before a send, `NETSTACK_RADIO.receiving_packet()` (a frame's SFD has been seen and it is
//!   still arriving) makes the send fail as `MAC_TX_COLLISION` without a transmission; so does
//!   `pending_packet()` (a received frame still unread in the RX FIFO) for unicast. The medium
//!   checks the first: whether a frame the node hears is on the air at the send.
//!   `pending_packet()` lasts only until the radio process reads the FIFO, which the model
//!   takes as immediate.
//! - `cc2520_transmit()` strobes `STXONCCA`: one CCA, no random backoff; a busy channel (or an
//!   SFD that turns out to be a reception) returns `RADIO_TX_COLLISION`. In the medium this is
//!   the standard CSMA/CA with macMinBE = macMaxBE = 0 and macMaxCSMABackoffs = 0 ([`radio_mac`]),
//!   whose channel access failure maps to `MAC_TX_COLLISION`.
//! - No retry below csma.c: one transmission per send (macMaxFrameRetries = 0); a missing ACK
//!   is `MAC_TX_NOACK`. The ACK wait is `ACK_WAIT_TIME` (RTIMER_SECOND / 2500) then, if the
//!   radio saw anything, `AFTER_ACK_DETECTED_WAIT_TIME` (RTIMER_SECOND / 1500): with
//!   `RTIMER_CONF_SECOND` 32 768 (`platform/wismote/platform-conf.h`) 13 and 21 rtimer ticks,
//!   397 µs and 641 µs ([`ack_wait_time`], [`after_ack_detected_wait_time`]). The medium keeps
//!   its own macAckWaitDuration for the ACK timeout (the reception side is not changed here).

use covey_proto::Duration;

use crate::media::ieee802154::MacParams;

/// `RTIMER_CONF_SECOND` on wismote: 4096 × 8.
pub const RTIMER_SECOND: u64 = 4096 * 8;

/// `ACK_WAIT_TIME` = RTIMER_SECOND / 2500 rtimer ticks.
pub fn ack_wait_time() -> Duration {
    rtimer_ticks(RTIMER_SECOND / 2500)
}

/// `AFTER_ACK_DETECTED_WAIT_TIME` = RTIMER_SECOND / 1500 rtimer ticks.
pub fn after_ack_detected_wait_time() -> Duration {
    rtimer_ticks(RTIMER_SECOND / 1500)
}

fn rtimer_ticks(ticks: u64) -> Duration {
    Duration::from_nanos(ticks * 1_000_000_000 / RTIMER_SECOND)
}

/// The standard medium's MAC parameters that make it behave as nullrdc + CC2520: one CCA
/// without backoff (`STXONCCA`), no retry of its own, ACKs requested for unicast.
pub fn radio_mac() -> MacParams {
    MacParams {
        min_be: 0,
        max_be: 0,
        max_csma_backoffs: 0,
        max_frame_retries: 0,
        ack_unicast: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_waits_are_the_wismote_rtimer_values() {
        assert_eq!(RTIMER_SECOND / 2500, 13);
        assert_eq!(RTIMER_SECOND / 1500, 21);
        assert_eq!(ack_wait_time().as_micros(), 396);
        assert_eq!(after_ack_detected_wait_time().as_micros(), 640);
    }

    #[test]
    fn the_radio_makes_one_attempt() {
        let mac = radio_mac();
        assert_eq!(
            (mac.min_be, mac.max_csma_backoffs, mac.max_frame_retries),
            (0, 0, 0)
        );
    }
}
