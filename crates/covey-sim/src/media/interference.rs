//! A Wi-Fi interferer: an 802.11g station sending at a given load (Mbit/s) whose frame
//! exchanges corrupt the 802.15.4 frames they overlap near it.
//!
//! Mechanism, from the standards' timings:
//!
//! - Each Wi-Fi packet is a burst on the air: DATA (1500-byte MSDU + 24-byte MAC header +
//!   8-byte LLC/SNAP + 4-byte FCS, ERP-OFDM at 54 Mbit/s: 20 µs preamble and header, 4 µs OFDM
//!   symbols of 216 data bits carrying 16 service + payload + 6 tail bits, 6 µs signal
//!   extension) = 254 µs, SIFS 10 µs, ACK (14 bytes at the 24 Mbit/s basic rate) = 34 µs: a
//!   298 µs burst. The 10 µs SIFS inside is too short for an 802.15.4 byte to slip through,
//!   so the exchange counts as one burst.
//! - Before each burst the station is idle for at least DIFS (28 µs with the 9 µs short slot)
//!   plus its mean backoff (CWmin 15: 7.5 slots = 67.5 µs), G = 95.5 µs, plus an exponential
//!   wait for the next packet: the offered load arrives as a Poisson stream of 1500-byte
//!   packets. The mean cycle is 12000 bits / load, so the exponential part has mean
//!   m = 12000 / load − B − G; at m = 0 the station saturates, at 12000 / (B + G) =
//!   30.5 Mbit/s (the spec's loads stop at 28.5 Mbit/s, below that).
//! - Occupancy (share of time on the air) ρ = B / (B + G + m).
//! - An 802.15.4 frame of duration T starting at a random instant escapes only if it starts in
//!   an idle period with at least T of it left. By renewal theory that chance is
//!   E[(I − T)⁺] / (B + G + m) with I = G + Exp(m): E[(I − T)⁺] = G − T + m when T ≤ G, and
//!   m · e^{−(T − G)/m} when T > G. So P_overlap(T) = 1 − E[(I − T)⁺] / (B + G + m).
//! - Every overlap corrupts the frame by default (an interferer near the node swamps a
//!   0 dBm 802.15.4 signal); `corruption_given_overlap` can lower that for a farther
//!   interferer. The 802.15.4 CCA (carrier sense) does not detect Wi-Fi, and Wi-Fi does not
//!   defer to 802.15.4, so the two processes are independent.
//!
//! With the defaults (every overlap corrupts) the mapping from load to the loss of one
//! 802.15.4 frame near the interferer is, by MPDU size (air time 0.83 / 1.79 / 4.26 ms):
//!
//! | load Mbit/s | occupancy | 20 B | 50 B | 127 B |
//! |---:|---:|---:|---:|---:|
//! | 0 | 0.000 | 0.000 | 0.000 | 0.000 |
//! | 5 | 0.124 | 0.421 | 0.641 | 0.895 |
//! | 10 | 0.248 | 0.730 | 0.918 | 0.996 |
//! | 15 | 0.372 | 0.917 | 0.992 | 1.000 |
//! | 20 | 0.497 | 0.990 | 1.000 | 1.000 |
//! | 25 | 0.621 | 1.000 | 1.000 | 1.000 |
//! | 28.5 | 0.708 | 1.000 | 1.000 | 1.000 |
//!
//! A frame is lost after a burst of only 298 µs anywhere in it, so losses climb much faster
//! than occupancy. That is the co-located, co-channel worst case; partial spectral overlap
//! or distance make a burst corrupt only some frames, which `corruption_given_overlap`
//! expresses (its value is a property of the geometry, not of this model).
//!
//! Under the medium's SINR reception model ([`crate::media::ieee802154::ReceptionModel::Sinr`])
//! the interferer is an [`ExternalInterference`] instead: added with
//! [`crate::media::ieee802154::Ieee802154Medium::add_interferer`], its bursts enter the SINR
//! sum of every frame they overlap (and the energy a CCA measures) at their in-band received
//! power: [`WifiInterfererConfig::tx_dbm`] (20 dBm, the ETSI EN 300 328 EIRP limit at
//! 2.4 GHz) plus [`WifiInterfererConfig::in_band_db`] less the medium's path loss from the
//! interferer's position. The in-band share is the spectral overlap factor: an 802.11g OFDM
//! signal spreads its power about flat over 16.6 MHz (52 subcarriers of 312.5 kHz,
//! IEEE 802.11-2012 §18.3.2), of which a 2 MHz 802.15.4 channel lying inside it takes
//! 10·log10(2 / 16.6) = −9.2 dB (the flat-spectrum overlap of IEEE 802.15.2-2003 §5.3 and
//! Shin et al., "Packet error rate analysis of ZigBee under WLAN and Bluetooth interferences",
//! IEEE Trans. Wireless Commun. 2007); an 802.15.4 channel outside the OFDM band gets less
//! (set it lower, or the interferer apart).
//!
//! The interferer draws its bursts from its own seeded stream and the medium asks it whether a
//! burst overlapped each frame, so consecutive frames see correlated interference as they
//! would on a real channel; [`WifiInterferer::overlap_probability`] is the formula the
//! sampled process obeys.

use std::collections::VecDeque;

use covey_proto::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::ieee802154::{ExternalInterference, FrameErrorModel, FrameOnLink, PathLoss, Position};
use super::NodeId;

/// 802.11g ERP-OFDM timings and the interferer's frame sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WifiTiming {
    /// Slot time (short slot), µs.
    pub slot_us: f64,
    /// SIFS, µs.
    pub sifs_us: f64,
    /// CWmin.
    pub cw_min: u32,
    /// PLCP preamble and header, µs.
    pub preamble_us: f64,
    /// ERP-OFDM signal extension, µs.
    pub signal_extension_us: f64,
    /// OFDM symbol, µs.
    pub symbol_us: f64,
    /// Data bits per OFDM symbol at the data rate (216 at 54 Mbit/s).
    pub data_bits_per_symbol: u32,
    /// Data bits per OFDM symbol at the ACK's basic rate (96 at 24 Mbit/s).
    pub ack_bits_per_symbol: u32,
    /// SERVICE field plus tail bits around each PSDU.
    pub service_and_tail_bits: u32,
    /// MSDU (IP packet) bytes of each data frame; the load counts these.
    pub msdu_bytes: u32,
    /// MAC header, LLC/SNAP and FCS bytes around the MSDU.
    pub mac_overhead_bytes: u32,
    /// ACK frame bytes.
    pub ack_bytes: u32,
}

impl Default for WifiTiming {
    fn default() -> Self {
        WifiTiming {
            slot_us: 9.0,
            sifs_us: 10.0,
            cw_min: 15,
            preamble_us: 20.0,
            signal_extension_us: 6.0,
            symbol_us: 4.0,
            data_bits_per_symbol: 216,
            ack_bits_per_symbol: 96,
            service_and_tail_bits: 16 + 6,
            msdu_bytes: 1500,
            mac_overhead_bytes: 24 + 8 + 4,
            ack_bytes: 14,
        }
    }
}

impl WifiTiming {
    fn ppdu_us(&self, bytes: u32, bits_per_symbol: u32) -> f64 {
        let bits = self.service_and_tail_bits + 8 * bytes;
        let symbols = bits.div_ceil(bits_per_symbol.max(1));
        self.preamble_us + f64::from(symbols) * self.symbol_us + self.signal_extension_us
    }

    /// Air time of one data frame, µs.
    pub fn data_us(&self) -> f64 {
        self.ppdu_us(
            self.msdu_bytes + self.mac_overhead_bytes,
            self.data_bits_per_symbol,
        )
    }

    /// Air time of one ACK, µs.
    pub fn ack_us(&self) -> f64 {
        self.ppdu_us(self.ack_bytes, self.ack_bits_per_symbol)
    }

    /// B: one DATA-SIFS-ACK exchange on the air, µs.
    pub fn burst_us(&self) -> f64 {
        self.data_us() + self.sifs_us + self.ack_us()
    }

    /// G: DIFS plus the mean CWmin backoff, the least idle time before a burst, µs.
    pub fn min_gap_us(&self) -> f64 {
        let difs = self.sifs_us + 2.0 * self.slot_us;
        difs + f64::from(self.cw_min) / 2.0 * self.slot_us
    }

    /// The highest load the station can carry, Mbit/s of MSDU.
    pub fn saturation_load_mbps(&self) -> f64 {
        f64::from(8 * self.msdu_bytes) / (self.burst_us() + self.min_gap_us())
    }

    /// m: mean of the exponential part of the idle time at `load_mbps`, µs (infinite at no
    /// load, zero at or above saturation).
    pub fn mean_extra_gap_us(&self, load_mbps: f64) -> f64 {
        if load_mbps <= 0.0 {
            return f64::INFINITY;
        }
        let cycle = f64::from(8 * self.msdu_bytes) / load_mbps;
        (cycle - self.burst_us() - self.min_gap_us()).max(0.0)
    }

    /// ρ: share of time the interferer is on the air at `load_mbps`.
    pub fn occupancy(&self, load_mbps: f64) -> f64 {
        let m = self.mean_extra_gap_us(load_mbps);
        if m.is_infinite() {
            return 0.0;
        }
        self.burst_us() / (self.burst_us() + self.min_gap_us() + m)
    }

    /// Probability that a frame of `frame_us` µs starting at a random instant overlaps a
    /// burst at `load_mbps`.
    pub fn overlap_probability(&self, load_mbps: f64, frame_us: f64) -> f64 {
        let m = self.mean_extra_gap_us(load_mbps);
        if m.is_infinite() {
            return 0.0;
        }
        let g = self.min_gap_us();
        let clear_idle = if frame_us <= g {
            g - frame_us + m
        } else if m > 0.0 {
            m * (-(frame_us - g) / m).exp()
        } else {
            0.0
        };
        (1.0 - clear_idle / (self.burst_us() + g + m)).clamp(0.0, 1.0)
    }
}

/// Which 802.15.4 frames the interferer can corrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterferedFrames {
    /// Frames sent to or by a node in range (the spec's rule: a node near the interferer
    /// loses what it hears and what it sends).
    SentOrReceivedInRange,
    /// Only frames whose receiver is in range (where the corruption physically happens).
    ReceivedInRange,
}

/// Configuration of one Wi-Fi interferer.
#[derive(Debug, Clone, PartialEq)]
pub struct WifiInterfererConfig {
    /// Seed of the interferer's burst process.
    pub seed: u64,
    /// Offered load, Mbit/s of MSDU (0 to the saturation load, about 30.5 for 802.11g).
    pub load_mbps: f64,
    /// Frame timings.
    pub timing: WifiTiming,
    /// Probability that an overlapped 802.15.4 frame is lost (1 for a nearby interferer).
    pub corruption_given_overlap: f64,
    /// Which frames are exposed.
    pub frames: InterferedFrames,
    /// Transmit power under the SINR model, dBm (20 dBm: the ETSI EIRP limit at 2.4 GHz).
    pub tx_dbm: f64,
    /// Share of the Wi-Fi power inside the 802.15.4 channel under the SINR model, dB
    /// (−9.2 dB: 2 MHz of the 16.6 MHz OFDM band).
    pub in_band_db: f64,
}

/// In-band share of an 802.11g OFDM signal in a 2 MHz 802.15.4 channel inside its band, dB.
pub fn in_band_co_channel_db() -> f64 {
    10.0 * (2.0f64 / 16.6).log10()
}

impl Default for WifiInterfererConfig {
    fn default() -> Self {
        WifiInterfererConfig {
            seed: 0,
            load_mbps: 0.0,
            timing: WifiTiming::default(),
            corruption_given_overlap: 1.0,
            frames: InterferedFrames::SentOrReceivedInRange,
            tx_dbm: 20.0,
            in_band_db: in_band_co_channel_db(),
        }
    }
}

/// Bursts of one Wi-Fi station, drawn lazily as virtual time advances.
#[derive(Debug, Clone)]
pub struct WifiBurstProcess {
    burst: Duration,
    min_gap_us: f64,
    mean_extra_gap_us: f64,
    rng: Xoshiro256PlusPlus,
    /// Bursts that may still overlap a frame being judged, oldest first.
    bursts: VecDeque<(Instant, Instant)>,
    /// End of the last drawn burst.
    drawn_until: Instant,
}

impl WifiBurstProcess {
    /// The burst process of `timing` at `load_mbps`, seeded with `seed`.
    pub fn new(timing: &WifiTiming, load_mbps: f64, seed: u64) -> Self {
        WifiBurstProcess {
            burst: micros(timing.burst_us()),
            min_gap_us: timing.min_gap_us(),
            mean_extra_gap_us: timing.mean_extra_gap_us(load_mbps),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            bursts: VecDeque::new(),
            drawn_until: Instant::ZERO,
        }
    }

    fn draw_until(&mut self, until: Instant) {
        if self.mean_extra_gap_us.is_infinite() {
            return;
        }
        while self.drawn_until < until {
            let u: f64 = self.rng.random();
            let extra = -self.mean_extra_gap_us * (1.0 - u).ln();
            let start = self.drawn_until + micros(self.min_gap_us + extra);
            // A zero-length configuration must still move time forward.
            let end = (start + self.burst).max(self.drawn_until + Duration::from_nanos(1));
            self.bursts.push_back((start, end));
            self.drawn_until = end;
        }
    }

    /// Whether a burst is on the air during part of [start, end). Queries may go back in time
    /// by up to 50 ms from the latest one (frames are judged when they end).
    pub fn overlaps(&mut self, start: Instant, end: Instant) -> bool {
        self.draw_until(end);
        let horizon = Instant::from_nanos(end.as_nanos().saturating_sub(50_000_000));
        while self.bursts.front().is_some_and(|&(_, e)| e < horizon) {
            self.bursts.pop_front();
        }
        self.bursts.iter().any(|&(s, e)| s < end && start < e)
    }

    /// The bursts on the air during part of [start, end), with the same look-back as
    /// [`overlaps`](Self::overlaps).
    pub fn bursts_between(&mut self, start: Instant, end: Instant) -> Vec<(Instant, Instant)> {
        self.overlaps(start, end);
        self.bursts
            .iter()
            .filter(|&&(s, e)| s < end && start < e)
            .copied()
            .collect()
    }
}

fn micros(us: f64) -> Duration {
    Duration::from_nanos((us * 1000.0).round().max(0.0) as u64)
}

/// A Wi-Fi interferer affecting the 802.15.4 nodes in its range.
#[derive(Debug, Clone)]
pub struct WifiInterferer {
    config: WifiInterfererConfig,
    in_range: Vec<bool>,
    position: Option<Position>,
    process: WifiBurstProcess,
}

impl WifiInterferer {
    /// An interferer that reaches the nodes marked in `in_range`.
    pub fn new(config: WifiInterfererConfig, in_range: Vec<bool>) -> Self {
        let process = WifiBurstProcess::new(&config.timing, config.load_mbps, config.seed);
        WifiInterferer {
            config,
            in_range,
            position: None,
            process,
        }
    }

    /// An interferer at `position` reaching the nodes within `range_m` metres of it.
    pub fn at_position(
        config: WifiInterfererConfig,
        position: Position,
        range_m: f64,
        nodes: &[Position],
    ) -> Self {
        let in_range = nodes
            .iter()
            .map(|p| p.distance(&position) <= range_m)
            .collect();
        WifiInterferer {
            position: Some(position),
            ..WifiInterferer::new(config, in_range)
        }
    }

    /// The formula: probability that a frame of `frame_us` µs near the interferer is lost.
    pub fn overlap_probability(&self, frame_us: f64) -> f64 {
        self.config
            .timing
            .overlap_probability(self.config.load_mbps, frame_us)
            * self.config.corruption_given_overlap
    }

    fn near(&self, node: NodeId) -> bool {
        self.in_range.get(node).copied().unwrap_or(false)
    }
}

/// Under the SINR model: the bursts at their in-band power. With a position, the power at a
/// node comes from the path loss to the node's position; without (or where the topology has
/// none), a node in range gets the power at the path loss's reference distance (co-located)
/// and other nodes nothing.
impl ExternalInterference for WifiInterferer {
    fn bursts(&mut self, start: Instant, end: Instant) -> Vec<(Instant, Instant)> {
        self.process.bursts_between(start, end)
    }

    fn power_dbm_at(
        &self,
        node: NodeId,
        position: Option<&Position>,
        path_loss: &PathLoss,
    ) -> Option<f64> {
        let radiated = self.config.tx_dbm + self.config.in_band_db;
        match (self.position, position) {
            (Some(wifi), Some(at)) => Some(radiated - path_loss.loss_db(wifi.distance(at))),
            _ if self.near(node) => Some(radiated - path_loss.loss_db(path_loss.reference_m)),
            _ => None,
        }
    }
}

impl FrameErrorModel for WifiInterferer {
    fn corrupts(&mut self, frame: &FrameOnLink, rng: &mut Xoshiro256PlusPlus) -> bool {
        let exposed = match self.config.frames {
            InterferedFrames::SentOrReceivedInRange => self.near(frame.from) || self.near(frame.to),
            InterferedFrames::ReceivedInRange => self.near(frame.to),
        };
        if !exposed || !self.process.overlaps(frame.start, frame.end) {
            return false;
        }
        self.config.corruption_given_overlap >= 1.0
            || rng.random::<f64>() < self.config.corruption_given_overlap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::ieee802154::{Ieee802154Config, Ieee802154Medium, PhyTiming, Topology};
    use crate::media::{Destination, LossCause, Medium, Packet};

    /// The spec's interference loads, Mbit/s.
    const LOADS: [f64; 7] = [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 28.5];

    #[test]
    fn burst_timings_follow_802_11g() {
        let t = WifiTiming::default();
        // 12310 bits in 57 symbols of 216 bits.
        assert_eq!(t.data_us(), 20.0 + 57.0 * 4.0 + 6.0);
        assert_eq!(t.ack_us(), 20.0 + 2.0 * 4.0 + 6.0);
        // The spec's top load fits below the saturation of one 54 Mbit/s station.
        let saturation = t.saturation_load_mbps();
        assert!(saturation > 28.5 && saturation < 32.0, "{saturation}");
    }

    /// Fraction of [0, span) covered by bursts at `load`.
    fn measured_occupancy(load: f64, span_ms: u64) -> f64 {
        let timing = WifiTiming::default();
        let mut process = WifiBurstProcess::new(&timing, load, 5);
        let end = Instant::from_millis(span_ms);
        process.draw_until(end);
        let busy: u64 = process
            .bursts
            .iter()
            .filter(|&&(s, _)| s < end)
            .map(|&(s, e)| (e.min(end) - s).as_nanos() as u64)
            .sum();
        busy as f64 / (span_ms as f64 * 1e6)
    }

    #[test]
    fn sampled_occupancy_matches_the_configured_load() {
        let timing = WifiTiming::default();
        for load in LOADS {
            let measured = measured_occupancy(load, 100_000);
            let expected = timing.occupancy(load);
            assert!(
                (measured - expected).abs() < 0.01,
                "{load}: {measured} vs {expected}"
            );
            // And the load carried is the load offered.
            let carried = measured / timing.burst_us() * f64::from(8 * timing.msdu_bytes);
            assert!(
                (carried - load).abs() < 0.02 * load.max(1.0),
                "{load}: {carried}"
            );
        }
    }

    #[test]
    fn sampled_overlaps_match_the_formula() {
        let timing = WifiTiming::default();
        let phy = PhyTiming::default();
        let mut table = String::from("load Mbit/s | occupancy | P(20 B) | P(50 B) | P(127 B)\n");
        for load in LOADS {
            let mut row = format!("{load:>5} | {:.3}", timing.occupancy(load));
            for mpdu in [20usize, 50, 127] {
                let frame = phy.frame_duration(mpdu);
                let frame_us = frame.as_secs_f64() * 1e6;
                let mut process = WifiBurstProcess::new(&timing, load, 17 + mpdu as u64);
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(23);
                // Frames at independent random instants, far enough apart to sample the
                // stationary process, in time order as the medium asks.
                let trials = 20_000;
                let mut at = Instant::ZERO;
                let mut hits = 0u32;
                for _ in 0..trials {
                    let gap: f64 = rng.random::<f64>() * 20_000.0;
                    at = at + micros(gap);
                    hits += u32::from(process.overlaps(at, at + frame));
                }
                let measured = f64::from(hits) / f64::from(trials);
                let expected = timing.overlap_probability(load, frame_us);
                let sigma = (expected * (1.0 - expected) / f64::from(trials)).sqrt();
                assert!(
                    (measured - expected).abs() <= 4.0 * sigma + 1e-3,
                    "{load} Mbit/s, {mpdu} B: {measured} vs {expected}"
                );
                row.push_str(&format!(" | {expected:.3}"));
            }
            table.push_str(&row);
            table.push('\n');
        }
        eprintln!("{table}");
    }

    #[test]
    fn more_load_and_longer_frames_lose_more() {
        let timing = WifiTiming::default();
        let mut last = -1.0;
        for load in LOADS {
            let p = timing.overlap_probability(load, 1000.0);
            assert!(p > last || (p == 1.0 && last == 1.0), "{load}");
            last = p;
            assert!(timing.overlap_probability(load, 500.0) <= p);
        }
        assert_eq!(timing.overlap_probability(0.0, 4256.0), 0.0);
    }

    /// Share of frames lost by a sender and receiver pair, with the interferer reaching
    /// `in_range`.
    fn medium_frame_loss(load: f64, in_range: Vec<bool>) -> (f64, f64) {
        let mut config = Ieee802154Config {
            seed: 4,
            ..Ieee802154Config::default()
        };
        config.mac.ack_unicast = false;
        let mut medium = Ieee802154Medium::new(config, Topology::full_mesh(3));
        let interferer = WifiInterferer::new(
            WifiInterfererConfig {
                seed: 8,
                load_mbps: load,
                ..WifiInterfererConfig::default()
            },
            in_range,
        );
        let payload = 40;
        let mpdu = 11 + 9 + payload;
        let frame_us = PhyTiming::default().frame_duration(mpdu).as_secs_f64() * 1e6;
        let expected = interferer.overlap_probability(frame_us);
        medium.add_frame_error_model(Box::new(interferer));
        let frames = 10_000u64;
        let mut at = Instant::ZERO;
        for id in 0..frames {
            medium.send(
                at,
                Packet {
                    id,
                    from: 0,
                    to: Destination::Node(1),
                    payload_bytes: payload,
                },
            );
            while let Some(next) = medium.poll_timeout() {
                medium.handle_timeout(next);
                at = next;
            }
            // Let the Wi-Fi process decorrelate between frames.
            at = at + Duration::from_millis(5);
        }
        let lost = medium.stats().losses_of(LossCause::Channel) as f64 / frames as f64;
        (lost, expected)
    }

    #[test]
    fn nodes_near_the_interferer_lose_frames_as_the_formula_says() {
        let (lost, expected) = medium_frame_loss(10.0, vec![false, true, false]);
        let sigma = (expected * (1.0 - expected) / 10_000.0).sqrt();
        assert!(
            (lost - expected).abs() < 4.0 * sigma,
            "{lost} vs {expected}"
        );
        assert!(expected > 0.1);
    }

    #[test]
    fn nodes_out_of_range_are_untouched() {
        let (lost, _) = medium_frame_loss(28.5, vec![false, false, true]);
        assert_eq!(lost, 0.0);
    }
}
