//! The header model: how many bytes the MAC, 6LoWPAN IPHC/NHC and fragmentation headers add to
//! a CoAP datagram, and how a datagram that does not fit one frame is cut into FRAG1/FRAGN
//! fragments (RFC 4944 §5.3, RFC 6282).
//!
//! Default numbers, per hop:
//!
//! - MAC header 9 bytes: frame control 2, sequence number 1, destination PAN ID 2, 16-bit
//!   destination 2, 16-bit source 2 (source PAN ID elided by PAN ID compression); FCS 2 bytes.
//!   So L_MAC = 11 and a frame carries at most 127 − 11 = 116 bytes of MAC payload.
//! - IPHC 2 bytes with traffic class and flow label elided, next header compressed (UDP NHC),
//!   hop limit 64 compressed, and both addresses elided: a context-based prefix and an IID
//!   derived from the 16-bit short address. When an IPv6 endpoint is not this hop's MAC
//!   source or destination (route-over forwarding), its IID is carried inline in 16-bit form
//!   (SAM/DAM = 10): 2 more bytes each. A multicast destination such as ff05::fd takes the
//!   32-bit form (DAM = 10 with M = 1): 4 bytes.
//! - UDP NHC 1 byte, both ports inline (CoAP's 5683 is outside the compressible 0xF0Bx range)
//!   4 bytes, checksum 2 bytes: 7 bytes.
//! - FRAG1 header 4 bytes, FRAGN header 5 bytes. The compressed IPv6/UDP headers travel in
//!   FRAG1; offsets count 8-byte units of the uncompressed datagram, whose 48-byte IPv6 + UDP
//!   header is a multiple of 8, so every fragment but the last carries a multiple of 8 bytes of
//!   UDP payload.
//!
//! The closed-form saturation test uses [`HeaderModel::mac_only`]: the same 11-byte MAC framing
//! and no 6LoWPAN bytes, so the packet's payload is the MAC payload x of the spec's L_MAC = 11
//! table.

/// Bytes of each header the medium adds to a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderModel {
    /// MAC header: frame control, sequence number, PAN ID, two 16-bit addresses.
    pub mac_header_bytes: usize,
    /// Frame check sequence.
    pub fcs_bytes: usize,
    /// Compressed IPv6 (IPHC) and UDP (NHC) headers when both endpoints are this hop's MAC
    /// endpoints.
    pub lowpan_bytes: usize,
    /// Extra bytes for each IPv6 endpoint that is not this hop's MAC endpoint (inline IID).
    pub lowpan_inline_iid_bytes: usize,
    /// Extra bytes for a multicast destination address.
    pub lowpan_multicast_bytes: usize,
    /// FRAG1 header.
    pub frag1_bytes: usize,
    /// FRAGN header.
    pub fragn_bytes: usize,
    /// Uncompressed IPv6 + UDP header; fragment offsets count from it.
    pub uncompressed_header_bytes: usize,
    /// Largest uncompressed datagram 6LoWPAN can fragment (11-bit datagram_size).
    pub max_datagram_bytes: usize,
}

impl Default for HeaderModel {
    fn default() -> Self {
        HeaderModel {
            mac_header_bytes: 9,
            fcs_bytes: 2,
            lowpan_bytes: 2 + 7,
            lowpan_inline_iid_bytes: 2,
            lowpan_multicast_bytes: 4,
            frag1_bytes: 4,
            fragn_bytes: 5,
            uncompressed_header_bytes: 40 + 8,
            max_datagram_bytes: 2047,
        }
    }
}

/// Which addresses of a datagram this hop's MAC addresses cannot stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HopAddressing {
    /// The IPv6 source is not this hop's MAC source.
    pub source_inline: bool,
    /// The IPv6 destination is not this hop's MAC destination (unicast only).
    pub destination_inline: bool,
    /// The IPv6 destination is a multicast group.
    pub multicast: bool,
}

impl HeaderModel {
    /// The spec's closed-form model: 11 bytes of MAC framing, nothing else.
    pub fn mac_only() -> Self {
        HeaderModel {
            lowpan_bytes: 0,
            lowpan_inline_iid_bytes: 0,
            lowpan_multicast_bytes: 0,
            uncompressed_header_bytes: 0,
            ..HeaderModel::default()
        }
    }

    /// L_MAC: MAC header plus FCS.
    pub fn mac_overhead(&self) -> usize {
        self.mac_header_bytes + self.fcs_bytes
    }

    /// Compressed IPv6 and UDP header bytes on a hop.
    pub fn lowpan_header(&self, addressing: HopAddressing) -> usize {
        let mut bytes = self.lowpan_bytes;
        if addressing.source_inline {
            bytes += self.lowpan_inline_iid_bytes;
        }
        if addressing.multicast {
            bytes += self.lowpan_multicast_bytes;
        } else if addressing.destination_inline {
            bytes += self.lowpan_inline_iid_bytes;
        }
        bytes
    }

    /// The MPDU sizes (bytes, MAC framing included) of the frames that carry `payload_bytes`
    /// of UDP payload over one hop, or `None` if the datagram is too large to fragment.
    pub fn frames(
        &self,
        payload_bytes: usize,
        addressing: HopAddressing,
        max_psdu_bytes: usize,
    ) -> Option<Vec<usize>> {
        let max_msdu = max_psdu_bytes.checked_sub(self.mac_overhead())?;
        let header = self.lowpan_header(addressing);
        if header + payload_bytes <= max_msdu {
            return Some(vec![self.mac_overhead() + header + payload_bytes]);
        }
        if self.uncompressed_header_bytes + payload_bytes > self.max_datagram_bytes {
            return None;
        }
        let round8 = |n: usize| n - n % 8;
        let first = round8(max_msdu.checked_sub(self.frag1_bytes + header)?);
        let rest = round8(max_msdu.checked_sub(self.fragn_bytes)?);
        if first == 0 || rest == 0 {
            return None;
        }
        let mut frames = vec![self.mac_overhead() + self.frag1_bytes + header + first];
        let mut left = payload_bytes.saturating_sub(first);
        while left > 0 {
            let chunk = left.min(rest);
            frames.push(self.mac_overhead() + self.fragn_bytes + chunk);
            left -= chunk;
        }
        Some(frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNICAST: HopAddressing = HopAddressing {
        source_inline: false,
        destination_inline: false,
        multicast: false,
    };

    #[test]
    fn small_datagram_fits_one_frame() {
        let model = HeaderModel::default();
        assert_eq!(model.frames(50, UNICAST, 127), Some(vec![11 + 9 + 50]));
        // The largest unfragmented payload fills the 127-byte PSDU exactly.
        assert_eq!(model.frames(107, UNICAST, 127), Some(vec![127]));
        assert_eq!(model.frames(108, UNICAST, 127).map(|f| f.len()), Some(2));
    }

    #[test]
    fn fragments_stay_within_a_frame_and_carry_every_byte() {
        let model = HeaderModel::default();
        for payload in [108usize, 200, 500, 1024, 1200] {
            let frames = model.frames(payload, UNICAST, 127).unwrap_or_default();
            assert!(frames.len() > 1);
            assert!(frames.iter().all(|&f| f <= 127));
            let first = frames[0] - 11 - 4 - 9;
            let rest: usize = frames[1..].iter().map(|f| f - 11 - 5).sum();
            assert_eq!(first + rest, payload);
            // Every fragment but the last carries whole 8-byte units.
            assert_eq!(first % 8, 0);
            for f in &frames[1..frames.len() - 1] {
                assert_eq!((f - 16) % 8, 0);
            }
        }
    }

    #[test]
    fn a_1200_byte_coap_payload_takes_twelve_fragments() {
        // The fading-goodput scenario's largest transfer: "at most 12" fragments.
        let frames = HeaderModel::default().frames(1200, UNICAST, 127);
        assert_eq!(frames.map(|f| f.len()), Some(12));
    }

    #[test]
    fn forwarded_and_multicast_datagrams_carry_addresses_inline() {
        let model = HeaderModel::default();
        let forwarded = HopAddressing {
            source_inline: true,
            destination_inline: true,
            multicast: false,
        };
        let group = HopAddressing {
            multicast: true,
            ..UNICAST
        };
        assert_eq!(model.lowpan_header(forwarded), 13);
        assert_eq!(model.lowpan_header(group), 13);
    }

    #[test]
    fn oversized_datagram_is_refused() {
        assert_eq!(HeaderModel::default().frames(2000, UNICAST, 127), None);
    }
}
