//! The mechanism behind the knee, in closed form and with the standard's constants only.
//!
//! On an idle channel a frame of MPDU m holds its sender and the channel for the mean first
//! backoff ((2^macMinBE − 1)/2 backoff periods), the CCA, the RX-to-TX turnaround, the frame,
//! the turnaround and the ACK, and the interframe space: the spec's "Medium check" timeline.
//! A NON transaction needs one request frame and one response frame on the same half-duplex
//! channel, so one hop carries at most 1 / (T_request + T_response) transactions a second.
//! Above that rate the MAC queues fill and the excess is dropped before it leaves the node,
//! so the share answered is at most capacity / rate; collisions between the two nodes (both
//! finding the channel idle within one CCA and turnaround) lower it further.

use serde::Serialize;

use crate::scenarios::one_hop::{frame_time_s, LinkFormat};

/// The closed-form service times and capacity of the hop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Capacity {
    /// MPDU bytes of the request frame.
    pub request_mpdu: usize,
    /// MPDU bytes of the response frame.
    pub response_mpdu: usize,
    /// Channel time of one request frame, seconds.
    pub request_frame_s: f64,
    /// Channel time of one response frame, seconds.
    pub response_frame_s: f64,
    /// Transactions the hop can carry per second.
    pub transactions_per_s: f64,
}

impl Capacity {
    /// The hop's capacity for requests of `request_udp` and responses of `response_udp` bytes
    /// of UDP payload (each must fit one frame).
    pub fn of(link: &LinkFormat, request_udp: usize, response_udp: usize) -> Capacity {
        let mpdu = |udp: usize| {
            link.frames(udp)
                .and_then(|f| f.first().copied())
                .unwrap_or(link.phy.max_psdu_bytes)
        };
        let (request_mpdu, response_mpdu) = (mpdu(request_udp), mpdu(response_udp));
        let request_frame_s = frame_time_s(link, request_mpdu);
        let response_frame_s = frame_time_s(link, response_mpdu);
        Capacity {
            request_mpdu,
            response_mpdu,
            request_frame_s,
            response_frame_s,
            transactions_per_s: 1.0 / (request_frame_s + response_frame_s),
        }
    }

    /// The largest share of requests answered at `rate` requests per second.
    pub fn answered_bound(&self, rate: f64) -> f64 {
        if rate <= 0.0 {
            return 1.0;
        }
        (self.transactions_per_s / rate).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_bounds_the_answered_share() {
        let link = LinkFormat::default();
        let c = Capacity::of(&link, 19, 107);
        assert_eq!(c.response_mpdu, 127);
        assert!(
            c.transactions_per_s > 90.0 && c.transactions_per_s < 110.0,
            "{c:?}"
        );
        assert_eq!(c.answered_bound(10.0), 1.0);
        assert!((c.answered_bound(2.0 * c.transactions_per_s) - 0.5).abs() < 1e-12);
    }
}
