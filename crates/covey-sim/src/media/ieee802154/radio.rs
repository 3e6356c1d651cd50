//! The radio's physics when receptions are judged by signal to interference: transmit power,
//! path loss, noise floor, sensitivity, the O-QPSK bit-error curve and the CCA modes. Which
//! rule the medium applies is [`ReceptionModel`]: today's [`ReceptionModel::Overlap`] (any
//! overlap destroys every frame involved) or [`ReceptionModel::Sinr`] (capture, as real
//! receivers and ns-3's lr-wpan `LrWpanPhy` do).
//!
//! Every constant below names where it comes from; the defaults model a CC2420 (TelosB, Sky),
//! the radio Contiki's CSMA/nullrdc layers were written for.

use covey_proto::Instant;

use super::super::NodeId;
use super::topology::{Position, Topology};

/// Thermal noise power density at 290 K, dBm/Hz (kT = −174 dBm/Hz; Friis, "Noise figures of
/// radio receivers", Proc. IRE 1944; any link-budget text).
pub const THERMAL_NOISE_DBM_PER_HZ: f64 = -174.0;

/// Speed of light, m/s.
const LIGHT_M_PER_S: f64 = 299_792_458.0;

/// Milliwatts of `dbm`.
pub fn dbm_to_mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// dBm of `mw` milliwatts (−∞ for 0).
pub fn mw_to_dbm(mw: f64) -> f64 {
    10.0 * mw.log10()
}

/// Bit error rate of the 2.4 GHz O-QPSK DSSS PHY at a linear SINR: IEEE 802.15.4-2006
/// Annex E (E.4.1.8), the form ns-3's `LrWpanErrorModel::GetChunkSuccessRate` uses:
/// BER = (8/15)(1/16) Σ_{k=2}^{16} (−1)^k C(16,k) exp(20·SINR·(1/k − 1)). Interference is
/// treated as Gaussian noise, as in the standard's derivation and in ns-3.
pub fn oqpsk_ber(sinr: f64) -> f64 {
    let mut sum = 0.0;
    let mut binomial = 16.0; // C(16, 1)
    for k in 2..=16u32 {
        binomial = binomial * f64::from(16 - k + 1) / f64::from(k);
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        sum += sign * binomial * (20.0 * sinr * (1.0 / f64::from(k) - 1.0)).exp();
    }
    (8.0 / 15.0 / 16.0 * sum).clamp(0.0, 0.5)
}

/// Probability that `bits` bits all survive at a constant linear SINR: (1 − BER)^bits, the
/// chunk success rate of ns-3's `LrWpanErrorModel`.
pub fn chunk_success(sinr: f64, bits: f64) -> f64 {
    (1.0 - oqpsk_ber(sinr)).powf(bits)
}

/// Packet error rate of `bytes` bytes at a constant SINR of `sinr_db` dB.
pub fn packet_error_rate(sinr_db: f64, bytes: usize) -> f64 {
    1.0 - chunk_success(dbm_to_mw(sinr_db), 8.0 * bytes as f64)
}

/// Log-distance path loss (Rappaport, Wireless Communications, 2nd ed., eq. 4.68):
/// PL(d) = PL(d0) + 10·n·log10(d/d0), with PL(d0) the free-space (Friis) loss at the reference
/// distance d0: 20·log10(4π·d0·f/c). With n = 2 it is Friis at every distance. Distances
/// below d0 count as d0 (the far-field formula does not hold closer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathLoss {
    /// Carrier frequency, Hz.
    pub frequency_hz: f64,
    /// Reference distance d0, metres.
    pub reference_m: f64,
    /// Path loss exponent n (2 in free space, 2.7 to 3.5 in an open indoor room, Rappaport
    /// table 4.2).
    pub exponent: f64,
}

impl PathLoss {
    /// Free space (Friis) at 2.45 GHz, the middle of the 2.4 GHz band.
    pub fn friis() -> Self {
        PathLoss {
            frequency_hz: 2.45e9,
            reference_m: 1.0,
            exponent: 2.0,
        }
    }

    /// Log-distance at 2.45 GHz with exponent `n` from a 1 m free-space reference.
    pub fn log_distance(exponent: f64) -> Self {
        PathLoss {
            exponent,
            ..PathLoss::friis()
        }
    }

    /// Loss over `metres`, dB.
    pub fn loss_db(&self, metres: f64) -> f64 {
        let d0 = self.reference_m.max(f64::MIN_POSITIVE);
        let reference =
            20.0 * (4.0 * std::f64::consts::PI * d0 * self.frequency_hz / LIGHT_M_PER_S).log10();
        reference + 10.0 * self.exponent * (metres.max(d0) / d0).log10()
    }
}

impl Default for PathLoss {
    /// Log-distance with n = 3: an open indoor room, the exponent the group testbed's Wi-Fi
    /// model uses too.
    fn default() -> Self {
        PathLoss::log_distance(3.0)
    }
}

/// Clear channel assessment modes, IEEE 802.15.4-2006 §6.9.9 (and 802.15.4-2011 §8.2.7,
/// which adds the OR form of mode 3). Each looks at the 8 symbol periods before the CCA ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcaMode {
    /// Mode 1, energy above threshold: busy if the mean received power over the 8 symbols
    /// (every 802.15.4 transmission and external interferer, plus noise) reaches the ED
    /// threshold. ns-3's `LrWpanPhy` default.
    EnergyDetection,
    /// Mode 2, carrier sense only: busy if a detectable 802.15.4 signal (received power at or
    /// above the sensitivity) is on the air during the 8 symbols, whatever its energy.
    CarrierSense,
    /// Mode 3 of 802.15.4-2006: busy only for a detectable 802.15.4 signal whose energy also
    /// reaches the ED threshold.
    CarrierSenseAndEnergy,
    /// Mode 3 with OR (802.15.4-2011): busy for a detectable 802.15.4 signal or for energy at
    /// the ED threshold. This is the CC2420's reset value (MDMCTRL0.CCA_MODE = 3: "clear when
    /// energy below threshold and not receiving valid IEEE 802.15.4 data", CC2420 datasheet
    /// rev. C, p. 50), so Contiki's default on the radio this model follows.
    CarrierSenseOrEnergy,
}

/// The radio parameters of the SINR reception model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadioParams {
    /// Transmit power of every node, dBm: 0 dBm, the CC2420's maximum (datasheet, PA_LEVEL
    /// 31) and Contiki's default.
    pub tx_power_dbm: f64,
    /// Path loss between positions.
    pub path_loss: PathLoss,
    /// Channel bandwidth the noise is counted over, Hz: 2 MHz, the 802.15.4 channel.
    pub bandwidth_hz: f64,
    /// Receiver noise figure, dB. The default, 15.6 dB, is what puts the standard's O-QPSK
    /// curve at 1 % PER for a 20-octet PSDU (the sensitivity test of IEEE 802.15.4-2006
    /// §6.5.3.3) exactly at the CC2420's typical −95 dBm sensitivity: the noise floor
    /// −174 + 10·log10(2 MHz) = −111.0 dBm needs 0.4 dB SINR for that PER, so 15.6 dB is the
    /// chip's noise figure plus its implementation loss against the ideal coherent curve.
    pub noise_figure_db: f64,
    /// Receiver sensitivity, dBm: a receiver locks onto (and carrier sense detects) only
    /// frames arriving at or above it. −95 dBm, the CC2420 datasheet's typical value (the
    /// standard only requires −85 dBm, §6.5.3.3).
    pub sensitivity_dbm: f64,
    /// CCA mode.
    pub cca: CcaMode,
    /// Energy-detection threshold of CCA, dBm: −77 dBm, the CC2420's reset CCA_THR (−32 plus
    /// its −45 dB RSSI offset), within the standard's bound of 10 dB above the required
    /// sensitivity (§6.9.9).
    pub ed_threshold_dbm: f64,
    /// Received power, dBm, between two nodes that hear each other in a topology without
    /// positions (every audible pair equal, inaudible pairs nothing).
    pub unpositioned_link_dbm: f64,
}

impl Default for RadioParams {
    fn default() -> Self {
        RadioParams {
            tx_power_dbm: 0.0,
            path_loss: PathLoss::default(),
            bandwidth_hz: 2e6,
            noise_figure_db: 15.6,
            sensitivity_dbm: -95.0,
            cca: CcaMode::CarrierSenseOrEnergy,
            ed_threshold_dbm: -77.0,
            unpositioned_link_dbm: -60.0,
        }
    }
}

impl RadioParams {
    /// Noise floor, dBm: kT·B plus the noise figure.
    pub fn noise_dbm(&self) -> f64 {
        THERMAL_NOISE_DBM_PER_HZ + 10.0 * self.bandwidth_hz.log10() + self.noise_figure_db
    }

    /// Received power from a transmitter at `from` at a receiver at `to`, dBm.
    pub fn received_dbm(&self, from: &Position, to: &Position) -> f64 {
        self.tx_power_dbm - self.path_loss.loss_db(from.distance(to))
    }
}

/// How the medium decides whether a frame arrives.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ReceptionModel {
    /// Any overlap at the receiver of a transmission it hears destroys the frame (ACKs
    /// included); CCA is busy when any audible transmission overlaps it. The model every
    /// existing scenario was calibrated with.
    #[default]
    Overlap,
    /// Reception by SINR with capture: see [`super::reception`].
    Sinr(RadioParams),
}

/// Received power of every node pair, milliwatts: `rx_mw[to][from]`.
#[derive(Debug, Clone)]
pub struct LinkGains {
    rx_mw: Vec<Vec<f64>>,
}

impl LinkGains {
    /// From the topology's positions through the path loss, or, without positions,
    /// [`RadioParams::unpositioned_link_dbm`] for every audible pair and nothing otherwise.
    pub fn new(topology: &Topology, params: &RadioParams) -> Self {
        let n = topology.nodes();
        let rx_mw = (0..n)
            .map(|to| {
                (0..n)
                    .map(|from| {
                        if from == to {
                            return 0.0;
                        }
                        match topology.positions() {
                            Some(p) => dbm_to_mw(params.received_dbm(&p[from], &p[to])),
                            None if topology.hears(to, from) => {
                                dbm_to_mw(params.unpositioned_link_dbm)
                            }
                            None => 0.0,
                        }
                    })
                    .collect()
            })
            .collect();
        LinkGains { rx_mw }
    }

    /// Power of `from`'s transmissions at `to`, milliwatts.
    pub fn rx_mw(&self, to: NodeId, from: NodeId) -> f64 {
        self.rx_mw
            .get(to)
            .and_then(|row| row.get(from))
            .copied()
            .unwrap_or(0.0)
    }
}

/// A source of non-802.15.4 energy on the channel (a Wi-Fi station): it never locks a
/// receiver and carrier sense never detects it, but its power enters every SINR and energy
/// detection it overlaps.
pub trait ExternalInterference {
    /// Its bursts that overlap [start, end). Queries come roughly in time order (frames are
    /// judged when they end).
    fn bursts(&mut self, start: Instant, end: Instant) -> Vec<(Instant, Instant)>;

    /// In-band power of a burst at `node` (standing at `position` if the topology has
    /// positions), dBm, or `None` where it does not reach.
    fn power_dbm_at(
        &self,
        node: NodeId,
        position: Option<&Position>,
        path_loss: &PathLoss,
    ) -> Option<f64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formula written out term by term, independently of [`oqpsk_ber`]'s recurrence.
    fn ber_formula(sinr_db: f64) -> f64 {
        let sinr = 10f64.powf(sinr_db / 10.0);
        let choose =
            |k: u64| -> f64 { (1..=k).fold(1.0, |acc, i| acc * (16 - k + i) as f64 / i as f64) };
        let sum: f64 = (2..=16u64)
            .map(|k| {
                let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                sign * choose(k) * (20.0 * sinr * (1.0 / k as f64 - 1.0)).exp()
            })
            .sum();
        8.0 / 15.0 / 16.0 * sum
    }

    #[test]
    fn per_of_a_20_byte_frame_follows_the_standards_curve() {
        for (sinr_db, expected) in [(0.0, 0.02552), (3.0, 1.4e-6), (6.0, 0.0), (-2.0, 0.5656)] {
            let formula = 1.0 - (1.0 - ber_formula(sinr_db)).powi(160);
            let per = packet_error_rate(sinr_db, 20);
            assert!(
                (per - formula).abs() < 1e-3,
                "{sinr_db} dB: {per} vs {formula}"
            );
            assert!(
                (per - expected).abs() < 1e-3,
                "{sinr_db} dB: {per} vs {expected}"
            );
        }
        // Monotone and bounded.
        let mut last = 0.5;
        for tenth in -100..100 {
            let ber = oqpsk_ber(dbm_to_mw(f64::from(tenth) / 10.0));
            assert!(ber <= last + 1e-15 && ber >= 0.0, "{tenth}");
            last = ber;
        }
    }

    #[test]
    fn the_default_noise_figure_meets_the_cc2420_sensitivity() {
        let params = RadioParams::default();
        assert!(
            (params.noise_dbm() - (-95.4)).abs() < 0.05,
            "{}",
            params.noise_dbm()
        );
        // A 20-octet PSDU at −95 dBm: 1 % PER (the standard's sensitivity criterion).
        let per = packet_error_rate(params.sensitivity_dbm - params.noise_dbm(), 20);
        assert!((per - 0.01).abs() < 0.002, "{per}");
    }

    #[test]
    fn path_loss_is_friis_at_the_reference_and_log_distance_beyond() {
        let friis = PathLoss::friis();
        assert!((friis.loss_db(1.0) - 40.23).abs() < 0.01);
        assert!((friis.loss_db(10.0) - 60.23).abs() < 0.01);
        let indoor = PathLoss::default();
        assert!((indoor.loss_db(10.0) - 70.23).abs() < 0.01);
        assert_eq!(indoor.loss_db(0.1), indoor.loss_db(1.0));
    }
}
