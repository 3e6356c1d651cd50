//! Reception by signal to interference, with capture: the rule of real 802.15.4 receivers and
//! of ns-3's lr-wpan (`LrWpanPhy::StartRx`, `LrWpanPhy::EndRx`, `LrWpanErrorModel`).
//!
//! - **Lock-on** (ns-3 `LrWpanPhy::StartRx`; the CC2420 synchronises on the first SFD it
//!   finds while in RX): a receiver that is idle (neither transmitting nor receiving) when a
//!   frame starts, and receives it at or above the sensitivity, locks onto it until it ends.
//!   Frames starting while it is locked or transmitting are never received there; they only
//!   add interference. A receiver that starts to transmit drops its lock (half-duplex).
//! - **Success** (ns-3 `LrWpanPhy::EndRx` with `LrWpanErrorModel`): the frame's signal power S
//!   against the noise floor N and the sum I of the received powers of everything else on the
//!   air (other 802.15.4 frames and [`ExternalInterference`] bursts). I is constant between
//!   the instants where some overlapping emission starts or ends; over each such interval of
//!   b bits the bits survive with (1 − BER(S / (N + I)))^b, BER being the standard's O-QPSK
//!   curve ([`oqpsk_ber`]); the frame survives with the product over the intervals, drawn once
//!   from the medium's channel stream. ACKs obey the same rule.
//! - **CCA** per [`CcaMode`] over the 8 symbols before it ends.

use covey_proto::{Duration, Instant};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::super::{LossCause, NodeId};
use super::air::{AirLog, Transmission};
use super::radio::{
    dbm_to_mw, mw_to_dbm, oqpsk_ber, CcaMode, ExternalInterference, LinkGains, RadioParams,
};
use super::topology::Topology;

/// How long a receiver remembers the frames it locked onto: longer than any frame lasts
/// (4.256 ms), shorter than the air log keeps transmissions.
const LOCK_MEMORY: Duration = Duration::from_millis(8);

/// One emission overlapping a frame at its receiver: [start, end) at `mw` milliwatts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Emission {
    /// First instant on the air.
    pub start: Instant,
    /// After the last instant.
    pub end: Instant,
    /// Received power, milliwatts.
    pub mw: f64,
}

/// Probability that a frame over [start, end) received at `signal_mw` survives noise
/// `noise_mw` and the `interference`, at `bits_per_ns` bits a nanosecond: the product over the
/// intervals of constant interference of (1 − BER(SINR))^bits.
pub fn frame_success(
    signal_mw: f64,
    noise_mw: f64,
    start: Instant,
    end: Instant,
    interference: &[Emission],
    bits_per_ns: f64,
) -> f64 {
    let mut cuts: Vec<Instant> = vec![start, end];
    for e in interference {
        for at in [e.start, e.end] {
            if at > start && at < end {
                cuts.push(at);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut success = 1.0;
    for pair in cuts.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let interference_mw: f64 = interference
            .iter()
            .filter(|e| e.start < b && a < e.end)
            .map(|e| e.mw)
            .sum();
        let sinr = signal_mw / (noise_mw + interference_mw);
        let bits = (b - a).as_nanos() as f64 * bits_per_ns;
        success *= (1.0 - oqpsk_ber(sinr)).powf(bits);
    }
    success
}

/// The SINR model's state inside a medium: link powers, each node's lock, the external
/// interferers.
pub struct SinrReceiver {
    params: RadioParams,
    gains: LinkGains,
    noise_mw: f64,
    sensitivity_mw: f64,
    /// The frames each node locked onto and kept, oldest first, for the last few
    /// milliseconds: a frame is judged when it ends, possibly after a frame starting at that
    /// same instant took the next lock.
    locks: Vec<Vec<Transmission>>,
    interferers: Vec<Box<dyn ExternalInterference + Send>>,
    /// In-band power of each interferer at each node, milliwatts: `[interferer][node]`.
    interferer_mw: Vec<Vec<f64>>,
    positions: Option<Vec<super::topology::Position>>,
}

impl std::fmt::Debug for SinrReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinrReceiver")
            .field("params", &self.params)
            .field("interferers", &self.interferers.len())
            .finish_non_exhaustive()
    }
}

impl SinrReceiver {
    /// The receivers of `topology`'s nodes under `params`.
    pub fn new(params: RadioParams, topology: &Topology) -> Self {
        SinrReceiver {
            params,
            gains: LinkGains::new(topology, &params),
            noise_mw: dbm_to_mw(params.noise_dbm()),
            sensitivity_mw: dbm_to_mw(params.sensitivity_dbm),
            locks: vec![Vec::new(); topology.nodes()],
            interferers: Vec::new(),
            interferer_mw: Vec::new(),
            positions: topology.positions().map(<[_]>::to_vec),
        }
    }

    /// Adds a non-802.15.4 interferer to every SINR and energy detection.
    pub fn add_interferer(&mut self, interferer: Box<dyn ExternalInterference + Send>) {
        let powers = (0..self.locks.len())
            .map(|node| {
                let position = self.positions.as_ref().and_then(|p| p.get(node));
                interferer
                    .power_dbm_at(node, position, &self.params.path_loss)
                    .map_or(0.0, dbm_to_mw)
            })
            .collect();
        self.interferer_mw.push(powers);
        self.interferers.push(interferer);
    }

    /// Power of `from` at `to`, milliwatts.
    pub fn rx_mw(&self, to: NodeId, from: NodeId) -> f64 {
        self.gains.rx_mw(to, from)
    }

    /// Whether `to` detects `from`'s frames (received power at or above the sensitivity).
    fn detects(&self, to: NodeId, from: NodeId) -> bool {
        let mw = self.rx_mw(to, from);
        mw > 0.0 && mw >= self.sensitivity_mw
    }

    /// A transmission has just started (and is already in `air`): its sender drops any lock,
    /// and every idle node that detects it locks onto it.
    pub fn on_air(&mut self, tx: &Transmission, air: &AirLog) {
        let memory = u64::try_from(LOCK_MEMORY.as_nanos()).unwrap_or(u64::MAX);
        let horizon = Instant::from_nanos(tx.start.as_nanos().saturating_sub(memory));
        for node in 0..self.locks.len() {
            let detects = self.detects(node, tx.from);
            let Some(locks) = self.locks.get_mut(node) else {
                continue;
            };
            locks.retain(|l| l.end >= horizon);
            if node == tx.from {
                // Transmitting aborts the frame being received.
                locks.retain(|l| l.end <= tx.start);
                continue;
            }
            let busy =
                locks.last().is_some_and(|l| l.end > tx.start) || air.transmitting(node, tx.start);
            if !busy && detects {
                locks.push(*tx);
            }
        }
    }

    /// Judges `tx` at `to`: the receiver must have locked onto it and kept the lock (not
    /// transmitted since), then the frame survives with [`frame_success`].
    pub fn judge(
        &mut self,
        tx: &Transmission,
        to: NodeId,
        air: &AirLog,
        bits_per_ns: f64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<(), LossCause> {
        if !self.detects(to, tx.from) {
            // Below the sensitivity: the receiver heard nothing.
            return Err(LossCause::RetriesExhausted);
        }
        if !self.locks.get(to).is_some_and(|l| l.contains(tx)) {
            // Busy with another frame or its own transmission when this one started, or it
            // transmitted since (which drops the lock).
            return Err(LossCause::Collision);
        }
        let mut interference: Vec<Emission> = air
            .overlapping(tx.start, tx.end)
            .filter(|t| *t != tx && t.from != to)
            .map(|t| Emission {
                start: t.start,
                end: t.end,
                mw: self.rx_mw(to, t.from),
            })
            .filter(|e| e.mw > 0.0)
            .collect();
        self.external(to, tx.start, tx.end, &mut interference);
        let signal = self.rx_mw(to, tx.from);
        let p = frame_success(
            signal,
            self.noise_mw,
            tx.start,
            tx.end,
            &interference,
            bits_per_ns,
        );
        if p >= 1.0 || rng.random::<f64>() < p {
            Ok(())
        } else if interference.is_empty() {
            Err(LossCause::Channel)
        } else {
            Err(LossCause::Collision)
        }
    }

    /// Appends the external interferers' bursts overlapping [start, end) at `node`.
    fn external(&mut self, node: NodeId, start: Instant, end: Instant, into: &mut Vec<Emission>) {
        for (i, interferer) in self.interferers.iter_mut().enumerate() {
            let mw = self
                .interferer_mw
                .get(i)
                .and_then(|p| p.get(node))
                .copied()
                .unwrap_or(0.0);
            // Draw the bursts even where they do not reach, so the burst process stays the
            // same whoever asks.
            let bursts = interferer.bursts(start, end);
            if mw > 0.0 {
                into.extend(bursts.into_iter().map(|(s, e)| Emission {
                    start: s,
                    end: e,
                    mw,
                }));
            }
        }
    }

    /// Whether `node`'s CCA over [start, end) finds the channel busy.
    pub fn cca_busy(&mut self, node: NodeId, start: Instant, end: Instant, air: &AirLog) -> bool {
        let own = air.overlapping(start, end).any(|t| t.from == node);
        if own {
            return true;
        }
        let carrier = air
            .overlapping(start, end)
            .any(|t| t.from != node && self.detects(node, t.from));
        // Energy is measured in every mode, so the interferers' bursts are drawn alike.
        let window = (end - start).as_nanos() as f64;
        let mut emissions: Vec<Emission> = air
            .overlapping(start, end)
            .map(|t| Emission {
                start: t.start,
                end: t.end,
                mw: self.rx_mw(node, t.from),
            })
            .collect();
        self.external(node, start, end, &mut emissions);
        let mean_mw: f64 = emissions
            .iter()
            .map(|e| {
                let on = (e.end.min(end) - e.start.max(start)).as_nanos() as f64;
                e.mw * on / window.max(1.0)
            })
            .sum();
        let energy = mw_to_dbm(mean_mw + self.noise_mw) >= self.params.ed_threshold_dbm;
        match self.params.cca {
            CcaMode::EnergyDetection => energy,
            CcaMode::CarrierSense => carrier,
            CcaMode::CarrierSenseAndEnergy => carrier && energy,
            CcaMode::CarrierSenseOrEnergy => carrier || energy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::radio::packet_error_rate;
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::from_nanos(n * 1000)
    }

    #[test]
    fn a_clean_frame_survives_as_the_noise_allows() {
        // 20 bytes at 250 kbit/s: 640 µs, 160 bits, at SINR 0 dB.
        let p = frame_success(1.0, 1.0, us(0), us(640), &[], 0.25e-3);
        assert!((1.0 - p - packet_error_rate(0.0, 20)).abs() < 1e-9);
    }

    #[test]
    fn interference_counts_only_where_it_overlaps() {
        // Half the frame under an interferer as strong as the signal, noise negligible: the
        // half-frame's 80 bits at 0 dB, the other 80 clean.
        let e = Emission {
            start: us(320),
            end: us(10_000),
            mw: 1.0,
        };
        let p = frame_success(1.0, 1e-9, us(0), us(640), &[e], 0.25e-3);
        let half = 1.0 - packet_error_rate(0.0, 10);
        assert!((p - half).abs() < 1e-6, "{p} vs {half}");
    }
}
