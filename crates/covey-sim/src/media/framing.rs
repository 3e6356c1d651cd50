//! How a CoAP datagram becomes frames on a link: the IP/UDP header bytes counted for it
//! (a documented header model) and 6LoWPAN-style fragmentation (RFC 4944 §5.3) when the
//! result exceeds the link MTU.

/// Which IP and UDP header bytes go on the link with each datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeaderModel {
    /// Uncompressed IPv6 (40 B) + UDP (8 B) = 48 B.
    #[default]
    Ipv6Udp,
    /// IPv4 without options (20 B) + UDP (8 B) = 28 B.
    Ipv4Udp,
    /// 6LoWPAN IPHC (RFC 6282) with UDP NHC = 9 B: the 2-byte IPHC base with traffic class
    /// and flow label elided, hop limit 64 compressed, both addresses elided (context 0
    /// prefix, interface ids derived from the link-layer addresses); then the 1-byte UDP NHC
    /// with both 16-bit ports inline (5683 is outside the 4-bit compressible range
    /// 0xF0B0–0xF0BF) and the 2-byte checksum inline; the UDP length is elided.
    SixLowpanIphcNhc,
    /// The packet's size already includes its headers (the emulator carries whole IP
    /// packets), so nothing is added.
    Included,
}

impl HeaderModel {
    /// Header bytes added to every datagram.
    pub const fn bytes(self) -> usize {
        match self {
            HeaderModel::Ipv6Udp => 48,
            HeaderModel::Ipv4Udp => 28,
            HeaderModel::SixLowpanIphcNhc => 9,
            HeaderModel::Included => 0,
        }
    }

    /// A short name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            HeaderModel::Ipv6Udp => "IPv6+UDP (48 B)",
            HeaderModel::Ipv4Udp => "IPv4+UDP (28 B)",
            HeaderModel::SixLowpanIphcNhc => "6LoWPAN IPHC+NHC (9 B)",
            HeaderModel::Included => "whole IP packets (headers included)",
        }
    }
}

/// The first fragment's header (FRAG1: dispatch, size, tag).
pub const FRAG1_HEADER: usize = 4;
/// Every later fragment's header (FRAGN: FRAG1 plus the offset byte).
pub const FRAGN_HEADER: usize = 5;

/// The framing rules of one link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// Largest frame payload the link carries (bytes).
    pub mtu: usize,
    /// Header bytes counted per datagram.
    pub header: HeaderModel,
}

impl Framing {
    /// The datagram as it goes on the link: headers plus the CoAP message.
    pub fn datagram_bytes(&self, payload_bytes: usize) -> usize {
        self.header.bytes() + payload_bytes
    }

    /// Bytes of the datagram each fragment carries: the first and the following ones, in
    /// multiples of 8 as RFC 4944 offsets require (at least 8).
    fn chunks(&self) -> (usize, usize) {
        let first = (self.mtu.saturating_sub(FRAG1_HEADER) / 8 * 8).max(8);
        let rest = (self.mtu.saturating_sub(FRAGN_HEADER) / 8 * 8).max(8);
        (first, rest)
    }

    /// The sizes of the frames that carry a datagram with `payload_bytes` of CoAP.
    pub fn frames(&self, payload_bytes: usize) -> Frames {
        let total = self.datagram_bytes(payload_bytes);
        let (first, rest) = self.chunks();
        Frames {
            remaining: total,
            whole: total <= self.mtu,
            first: true,
            first_chunk: first,
            rest_chunk: rest,
        }
    }

    /// How many frames carry a datagram with `payload_bytes` of CoAP.
    pub fn frame_count(&self, payload_bytes: usize) -> usize {
        let total = self.datagram_bytes(payload_bytes);
        if total <= self.mtu {
            return 1;
        }
        let (first, rest) = self.chunks();
        1 + (total.saturating_sub(first)).div_ceil(rest)
    }
}

/// Iterator over frame sizes (bytes on the link, fragment headers included).
#[derive(Debug, Clone)]
pub struct Frames {
    remaining: usize,
    whole: bool,
    first: bool,
    first_chunk: usize,
    rest_chunk: usize,
}

impl Iterator for Frames {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        if self.whole {
            let n = self.remaining;
            self.remaining = 0;
            return Some(n);
        }
        let (header, chunk) = if self.first {
            (FRAG1_HEADER, self.first_chunk)
        } else {
            (FRAGN_HEADER, self.rest_chunk)
        };
        self.first = false;
        let n = chunk.min(self.remaining);
        self.remaining -= n;
        Some(header + n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_datagrams_fit_one_frame_with_their_headers() {
        let f = Framing {
            mtu: 128,
            header: HeaderModel::Ipv6Udp,
        };
        assert_eq!(f.frames(80).collect::<Vec<_>>(), vec![128]);
        assert_eq!(f.frame_count(80), 1);
        let c = Framing {
            header: HeaderModel::SixLowpanIphcNhc,
            ..f
        };
        assert_eq!(c.frames(20).collect::<Vec<_>>(), vec![29]);
    }

    #[test]
    fn large_datagrams_fragment_at_the_mtu() {
        let f = Framing {
            mtu: 128,
            header: HeaderModel::Ipv6Udp,
        };
        // 48 + 200 = 248 B: 120 in FRAG1, 120 in FRAGN, 8 in the last FRAGN.
        let frames: Vec<_> = f.frames(200).collect();
        assert_eq!(frames, vec![124, 125, 13]);
        assert_eq!(f.frame_count(200), frames.len());
        for payload in [0, 1, 80, 81, 150, 500, 1024, 1232] {
            let frames: Vec<_> = f.frames(payload).collect();
            assert_eq!(frames.len(), f.frame_count(payload), "payload {payload}");
            assert!(frames.iter().all(|&n| n <= 128), "payload {payload}");
            let overhead = if frames.len() == 1 {
                0
            } else {
                FRAG1_HEADER + FRAGN_HEADER * (frames.len() - 1)
            };
            assert_eq!(
                frames.iter().sum::<usize>(),
                48 + payload + overhead,
                "every datagram byte is carried once"
            );
        }
    }
}
