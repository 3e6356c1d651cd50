//! The one IEEE 802.15.4 hop of the TinyCoAP paper's experiments (fading-goodput,
//! server-workload): its framing, and the channel time of a frame on the standard's timeline.

use covey_sim::media::ieee802154::frame_format::HopAddressing;
use covey_sim::media::ieee802154::{HeaderModel, MacParams, PhyTiming};

/// The one-hop link's framing: header model, PHY and MAC parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkFormat {
    /// Header bytes and fragmentation.
    pub headers: HeaderModel,
    /// PHY sizes and timing.
    pub phy: PhyTiming,
    /// MAC retries.
    pub mac: MacParams,
}

impl LinkFormat {
    /// The MPDU sizes of the frames carrying `payload_bytes` of UDP payload on one hop
    /// between the datagram's own endpoints.
    pub fn frames(&self, payload_bytes: usize) -> Option<Vec<usize>> {
        self.headers.frames(
            payload_bytes,
            HopAddressing::default(),
            self.phy.max_psdu_bytes,
        )
    }

    /// How many fragments carry `payload_bytes` (0 if it cannot be sent).
    pub fn fragments(&self, payload_bytes: usize) -> usize {
        self.frames(payload_bytes).map_or(0, |f| f.len())
    }

    /// The largest UDP payload carried in exactly `fragments` frames: the paper's "packet that
    /// occupies the entire space" of its frames.
    pub fn full_payload(&self, fragments: usize) -> Option<usize> {
        let max = self.headers.max_datagram_bytes;
        (1..=max).rev().find(|&p| self.fragments(p) == fragments)
    }
}

/// Mean channel time of one acknowledged frame of `mpdu` bytes on an idle channel, seconds.
pub fn frame_time_s(link: &LinkFormat, mpdu: usize) -> f64 {
    let phy = &link.phy;
    let mean_backoff_periods = f64::from((1u32 << u32::from(link.mac.min_be.min(31))) - 1) / 2.0;
    let us = mean_backoff_periods * phy.backoff_unit_us as f64
        + phy.cca_us as f64
        + phy.turnaround_us as f64
        + phy.frame_duration(mpdu).as_secs_f64() * 1e6
        + phy.turnaround_us as f64
        + phy.ack_duration().as_secs_f64() * 1e6
        + phy.ifs(mpdu).as_secs_f64() * 1e6;
    us / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_payloads_fill_their_fragments() {
        let link = LinkFormat::default();
        assert_eq!(link.full_payload(1), Some(107));
        assert_eq!(link.fragments(108), 2);
        for f in 1..=12 {
            let p = link.full_payload(f).unwrap_or(0);
            assert_eq!(link.fragments(p), f);
            assert_eq!(link.fragments(p + 1), f + 1);
        }
    }

    #[test]
    fn a_full_frame_takes_the_standard_timeline() {
        let link = LinkFormat::default();
        // 1120 backoff + 128 CCA + 192 turnaround + 133·32 frame + 192 + 352 ACK + 640 LIFS.
        let t = frame_time_s(&link, 127);
        assert!((t - 6.880e-3).abs() < 1e-9, "{t}");
    }
}
