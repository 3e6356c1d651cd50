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

/// How a datagram larger than the MTU is cut into frames.
///
/// [`Fragmentation::Lowpan`] is the default and what every link did before IP
/// fragmentation existed here; [`Fragmentation::Ip`] is what a Linux host in front of a
/// netem interface with a small MTU does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fragmentation {
    /// RFC 4944 §5.3 fragments: a 4-byte FRAG1 and 5-byte FRAGN header; the link's drop-tail
    /// queue holds whole datagrams (a datagram takes one slot, however many fragments).
    #[default]
    Lowpan,
    /// IP fragmentation (RFC 791 §2.3 for IPv4; RFC 8200 §4.5 for IPv6): every fragment
    /// carries the IP header (IPv4: 20 B; IPv6: 40 B plus the 8-byte Fragment header) and a
    /// multiple of 8 bytes of the datagram's IP payload (UDP header included in the first).
    /// Every fragment is a packet of its own on the link: it takes its own slot in the
    /// drop-tail queue and meets the loss model on its own, and the datagram is lost when
    /// any fragment is (there is no retransmission of fragments). Header models without an
    /// IP header of their own (6LoWPAN, headers included) fragment as [`Self::Lowpan`].
    Ip,
}

impl Fragmentation {
    /// The names reports and parameters use, in the order of the variants.
    pub const NAMES: &'static [&'static str] = &["lowpan", "ip"];

    /// The name as [`Self::NAMES`] spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Fragmentation::Lowpan => "lowpan",
            Fragmentation::Ip => "ip",
        }
    }
}

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
            first_header: FRAG1_HEADER,
            rest_header: FRAGN_HEADER,
        }
    }

    /// The IP header bytes every IP fragment repeats (IPv6: with the Fragment header), and
    /// the IP header of the unfragmented datagram; `None` for header models without an IP
    /// header of their own.
    const fn ip_headers(&self) -> Option<(usize, usize)> {
        match self.header {
            HeaderModel::Ipv4Udp => Some((20, 20)),
            HeaderModel::Ipv6Udp => Some((40 + 8, 40)),
            HeaderModel::SixLowpanIphcNhc | HeaderModel::Included => None,
        }
    }

    /// The sizes of the frames that carry a datagram with `payload_bytes` of CoAP when the
    /// link fragments as `fragmentation` says.
    pub fn frames_as(&self, payload_bytes: usize, fragmentation: Fragmentation) -> Frames {
        let ip = match fragmentation {
            Fragmentation::Lowpan => None,
            Fragmentation::Ip => self.ip_headers(),
        };
        let Some((per_fragment, ip_header)) = ip else {
            return self.frames(payload_bytes);
        };
        let total = self.datagram_bytes(payload_bytes);
        let whole = total <= self.mtu;
        let chunk = (self.mtu.saturating_sub(per_fragment) / 8 * 8).max(8);
        Frames {
            remaining: if whole { total } else { total - ip_header },
            whole,
            first: true,
            first_chunk: chunk,
            rest_chunk: chunk,
            first_header: per_fragment,
            rest_header: per_fragment,
        }
    }

    /// How many frames carry a datagram with `payload_bytes` of CoAP when the link
    /// fragments as `fragmentation` says.
    pub fn frame_count_as(&self, payload_bytes: usize, fragmentation: Fragmentation) -> usize {
        match fragmentation {
            Fragmentation::Lowpan => self.frame_count(payload_bytes),
            Fragmentation::Ip => self.frames_as(payload_bytes, fragmentation).count(),
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
    first_header: usize,
    rest_header: usize,
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
            (self.first_header, self.first_chunk)
        } else {
            (self.rest_header, self.rest_chunk)
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

    #[test]
    fn ip_fragments_repeat_the_ip_header_and_carry_multiples_of_eight() {
        let v4 = Framing {
            mtu: 128,
            header: HeaderModel::Ipv4Udp,
        };
        // 20 + 8 + 300 = 328 B: 308 B of IP payload in chunks of 104 (128 - 20, rounded
        // down to a multiple of 8), each behind its own 20-byte IP header.
        let frames: Vec<_> = v4.frames_as(300, Fragmentation::Ip).collect();
        assert_eq!(frames, vec![124, 124, 120]);
        assert_eq!(v4.frame_count_as(300, Fragmentation::Ip), 3);
        // A datagram that fits is one frame, as without fragmentation.
        assert_eq!(
            v4.frames_as(100, Fragmentation::Ip).collect::<Vec<_>>(),
            vec![128]
        );
        let v6 = Framing {
            mtu: 128,
            header: HeaderModel::Ipv6Udp,
        };
        // 40 + 8 + 300 = 348 B: 308 B of IP payload in chunks of 80 behind 48 B each.
        let frames: Vec<_> = v6.frames_as(300, Fragmentation::Ip).collect();
        assert_eq!(frames, vec![128, 128, 128, 116]);
        // 6LoWPAN has no IP header of its own to repeat: RFC 4944 fragments.
        let l = Framing {
            mtu: 128,
            header: HeaderModel::SixLowpanIphcNhc,
        };
        assert_eq!(
            l.frames_as(300, Fragmentation::Ip).collect::<Vec<_>>(),
            l.frames(300).collect::<Vec<_>>()
        );
        for payload in [0, 1, 60, 81, 150, 500, 1024] {
            for f in [v4, v6] {
                let frames: Vec<_> = f.frames_as(payload, Fragmentation::Ip).collect();
                assert!(frames.iter().all(|&n| n <= 128), "payload {payload}");
                assert_eq!(frames.len(), f.frame_count_as(payload, Fragmentation::Ip));
            }
        }
    }
}
