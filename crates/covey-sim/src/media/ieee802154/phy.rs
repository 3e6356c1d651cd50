//! PHY timing of the 2.4 GHz O-QPSK IEEE 802.15.4 PHY: 62.5 ksymbol/s, 4 bits a symbol, so
//! 250 kbit/s and 32 µs a byte. Every duration the MAC needs is derived here from the standard's
//! constants (IEEE 802.15.4-2006 §6.4, §7.4).

use covey_proto::Duration;

/// One symbol of the 2.4 GHz O-QPSK PHY.
pub const SYMBOL_US: u64 = 16;

/// The PHY constants and MAC timing parameters that turn frame sizes into air time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhyTiming {
    /// Air time of one byte (2 symbols).
    pub byte_us: u64,
    /// Synchronisation header and PHY header: preamble 4, SFD 1, frame length 1.
    pub phy_header_bytes: usize,
    /// aMaxPHYPacketSize: the largest MPDU (PSDU) in bytes.
    pub max_psdu_bytes: usize,
    /// CCA detection time: 8 symbols.
    pub cca_us: u64,
    /// aTurnaroundTime, RX-to-TX or TX-to-RX: 12 symbols.
    pub turnaround_us: u64,
    /// aUnitBackoffPeriod: 20 symbols.
    pub backoff_unit_us: u64,
    /// macSIFSPeriod: 12 symbols.
    pub sifs_us: u64,
    /// macLIFSPeriod: 40 symbols.
    pub lifs_us: u64,
    /// aMaxSIFSFrameSize: MPDUs up to this many bytes are followed by a SIFS, longer ones by a
    /// LIFS.
    pub max_sifs_frame_bytes: usize,
    /// MPDU of an ACK frame: frame control 2, sequence number 1, FCS 2.
    pub ack_mpdu_bytes: usize,
}

impl Default for PhyTiming {
    fn default() -> Self {
        PhyTiming {
            byte_us: 2 * SYMBOL_US,
            phy_header_bytes: 6,
            max_psdu_bytes: 127,
            cca_us: 8 * SYMBOL_US,
            turnaround_us: 12 * SYMBOL_US,
            backoff_unit_us: 20 * SYMBOL_US,
            sifs_us: 12 * SYMBOL_US,
            lifs_us: 40 * SYMBOL_US,
            max_sifs_frame_bytes: 18,
            ack_mpdu_bytes: 5,
        }
    }
}

impl PhyTiming {
    /// Air time of a frame whose MPDU is `mpdu_bytes` long, PHY header included.
    pub fn frame_duration(&self, mpdu_bytes: usize) -> Duration {
        let bytes = (self.phy_header_bytes + mpdu_bytes) as u64;
        Duration::from_micros(bytes.saturating_mul(self.byte_us))
    }

    /// Air time of an ACK frame.
    pub fn ack_duration(&self) -> Duration {
        self.frame_duration(self.ack_mpdu_bytes)
    }

    /// Bytes an ACK frame puts on the air, PHY header included.
    pub fn ack_air_bytes(&self) -> usize {
        self.phy_header_bytes + self.ack_mpdu_bytes
    }

    /// The interframe space that must follow a frame of `mpdu_bytes` (SIFS or LIFS).
    pub fn ifs(&self, mpdu_bytes: usize) -> Duration {
        if mpdu_bytes <= self.max_sifs_frame_bytes {
            Duration::from_micros(self.sifs_us)
        } else {
            Duration::from_micros(self.lifs_us)
        }
    }

    /// macAckWaitDuration for the unslotted MAC: aUnitBackoffPeriod + aTurnaroundTime +
    /// phySHRDuration + 6 octets of symbols, counted from the end of the data frame.
    pub fn ack_wait(&self) -> Duration {
        // The synchronisation header is the preamble and SFD: all of the PHY header but the
        // length byte.
        let shr_us = (self.phy_header_bytes.saturating_sub(1) as u64) * self.byte_us;
        let us = self.backoff_unit_us + self.turnaround_us + shr_us + 6 * self.byte_us;
        Duration::from_micros(us)
    }

    /// CCA time.
    pub fn cca(&self) -> Duration {
        Duration::from_micros(self.cca_us)
    }

    /// RX-to-TX turnaround time.
    pub fn turnaround(&self) -> Duration {
        Duration::from_micros(self.turnaround_us)
    }

    /// One backoff period.
    pub fn backoff_unit(&self) -> Duration {
        Duration::from_micros(self.backoff_unit_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn air_times_follow_250_kbit_per_s() {
        let phy = PhyTiming::default();
        // A full 127-byte MPDU plus the 6-byte PHY header: 133 bytes of 32 µs.
        assert_eq!(phy.frame_duration(127), Duration::from_micros(4256));
        assert_eq!(phy.ack_duration(), Duration::from_micros(352));
        assert_eq!(phy.ack_air_bytes(), 11);
    }

    #[test]
    fn ifs_switches_at_a_max_sifs_frame_size() {
        let phy = PhyTiming::default();
        assert_eq!(phy.ifs(18), Duration::from_micros(192));
        assert_eq!(phy.ifs(19), Duration::from_micros(640));
    }

    #[test]
    fn ack_wait_is_54_symbols() {
        let phy = PhyTiming::default();
        assert_eq!(phy.ack_wait(), Duration::from_micros(54 * SYMBOL_US));
        // The ACK of a successful exchange ends before the sender gives up on it.
        assert!(phy.turnaround() + phy.ack_duration() < phy.ack_wait());
    }
}
