//! Wi-Fi interference on the group testbed, from the geometry and the standards rather than a
//! fitted loss rate.
//!
//! The paper's setup (§5.2.2): two Wi-Fi nodes of the testbed exchange iperf UDP traffic on
//! Wi-Fi channel 13 (2472 MHz) at a constant rate, "at one point of the network"; the sensor
//! networks use 802.15.4 channels 26 (2480 MHz) and 25 (2475 MHz). Wi-Fi does not defer to
//! 802.15.4, so its bursts are [`WifiBurstProcess`] (802.11g timings, Poisson arrivals at the
//! offered load). What a burst does to an overlapped 802.15.4 frame depends on the
//! signal-to-interference-plus-noise ratio at that frame's receiver:
//!
//! - powers: 802.15.4 nodes send at 0 dBm (the CC2520 of the RM090 boards' default), the
//!   Wi-Fi sender at 20 dBm (the ETSI EIRP limit at 2.4 GHz);
//! - path loss: log-distance, 40.05 dB at 1 m (free space at 2.45 GHz) with exponent
//!   [`WifiSetup::path_loss_exponent`] (3 in an open indoor room);
//! - in-band share: an 802.11g OFDM signal spreads its power flat over 16.6 MHz (52
//!   subcarriers of 312.5 kHz); the 802.15.4 receiver's 2 MHz channel takes the part of it
//!   that overlaps: all 2 MHz on channel 25 (−9.2 dB), 1.3 MHz on channel 26 whose upper
//!   edge passes the OFDM band's (−11.1 dB);
//! - noise floor: −100 dBm (thermal noise in 2 MHz, −111 dBm, plus an 11 dB noise figure:
//!   the CC2520's −98 dBm sensitivity less 2 dB);
//! - a burst overlapping a frame hits at least the bits under one 298 µs burst (or the whole
//!   frame if shorter); each bit errs with the O-QPSK DSSS bit error rate at that SINR (the
//!   standard's formula); the 802.15.4 signal fades (Rayleigh, one level per frame, indoor
//!   multipath) around its mean, so a link's loss under a burst is the frame error rate
//!   averaged over the fading ([`rayleigh_block_frame_error_rate`]) rather than all or
//!   nothing at a threshold.
//!
//! The iperf traffic starts once the entities exist (the testbed's `wifi_on`), as the paper
//! set up its groups and then turned the interference on.
//!
//! Where the interferer stands is the one choice the paper leaves to us: its figure of the
//! room is not in the text, which says only that the traffic came from "one point of the
//! network" and that the networks kept working. [`WifiSetup::open_room`] puts the Wi-Fi pair
//! at the edge of the deployment, one ring step beyond the farthest member of the largest
//! group of the experiment (G = 30, three hops: 80 m from the gateway, along the first
//! member's bearing), the same spot for every group size as on the fixed testbed; the report
//! prints how many links it then reaches, and group-interference's position sweep
//! ([`WifiSetup::open_room_at`]) shows what moving it along that bearing does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use covey_proto::Instant;
use covey_sim::media::fading::{db_to_linear, rayleigh_block_frame_error_rate};
use covey_sim::media::ieee802154::{
    ExternalInterference, FrameErrorModel, FrameOnLink, PathLoss, Position,
};
use covey_sim::media::interference::{WifiBurstProcess, WifiTiming};
use covey_sim::media::NodeId;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::scenarios::group::hop_profile::RING_STEP_M;

/// 802.15.4 transmit power, dBm.
const ZIGBEE_TX_DBM: f64 = 0.0;
/// Path loss at 1 m at 2.45 GHz (free space), dB.
const PATH_LOSS_1M_DB: f64 = 40.05;
/// Receiver noise floor in 2 MHz, dBm.
const NOISE_DBM: f64 = -100.0;
/// 802.15.4 bit rate, bits/µs.
const BITS_PER_US: f64 = 0.25;

/// The open room's Wi-Fi sender's distance from the gateway, metres: one ring step beyond the
/// farthest member of the largest group (G = 30, three hops).
pub const OPEN_ROOM_WIFI_M: f64 = 4.0 * RING_STEP_M;

/// Where the Wi-Fi interferer is and how loud, for every radio network of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WifiSetup {
    /// Offered iperf load, Mbit/s.
    pub load_mbps: f64,
    /// The sender's position relative to each gateway, metres.
    pub position: (f64, f64),
    /// Wi-Fi transmit power, dBm.
    pub tx_dbm: f64,
    /// Log-distance path loss exponent.
    pub path_loss_exponent: f64,
    /// Share of the Wi-Fi power inside each radio network's 802.15.4 channel, dB (one per
    /// island, in island order; the last value serves any further island).
    pub in_band_db: Vec<f64>,
}

/// In-band share of channel 13's OFDM power on 802.15.4 channel 26, dB.
pub fn in_band_channel_26_db() -> f64 {
    10.0 * (1.3f64 / 16.6).log10()
}

/// In-band share of channel 13's OFDM power on 802.15.4 channel 25, dB.
pub fn in_band_channel_25_db() -> f64 {
    10.0 * (2.0f64 / 16.6).log10()
}

impl WifiSetup {
    /// The open-room testbed at `load_mbps`, networks on channels 26 then 25.
    pub fn open_room(load_mbps: f64) -> WifiSetup {
        WifiSetup::open_room_at(load_mbps, OPEN_ROOM_WIFI_M)
    }

    /// The open-room testbed at `load_mbps` with the Wi-Fi sender `wifi_m` metres from the
    /// gateway along the default's bearing (the first member's).
    pub fn open_room_at(load_mbps: f64, wifi_m: f64) -> WifiSetup {
        WifiSetup {
            load_mbps,
            position: (wifi_m, 0.0),
            tx_dbm: 20.0,
            path_loss_exponent: 3.0,
            in_band_db: vec![in_band_channel_26_db(), in_band_channel_25_db()],
        }
    }

    fn path_loss_db(&self, metres: f64) -> f64 {
        PATH_LOSS_1M_DB + 10.0 * self.path_loss_exponent * metres.max(1.0).log10()
    }

    /// SINR in dB during a burst at a receiver at `to` of a sender at `from`, on island
    /// `island`.
    pub fn sinr_db(&self, from: Position, to: Position, island: usize) -> f64 {
        let in_band = self
            .in_band_db
            .get(island)
            .or(self.in_band_db.last())
            .copied()
            .unwrap_or(0.0);
        let wifi = Position {
            x: self.position.0,
            y: self.position.1,
        };
        let signal = ZIGBEE_TX_DBM - self.path_loss_db(from.distance(&to));
        let interference = self.tx_dbm + in_band - self.path_loss_db(wifi.distance(&to));
        let noise_and_interference = db_to_linear(interference) + db_to_linear(NOISE_DBM);
        signal - 10.0 * noise_and_interference.log10()
    }

    /// Probability that a burst overlapping a frame of `frame_us` µs corrupts it.
    pub fn corruption_given_overlap(&self, sinr_db: f64, frame_us: f64) -> f64 {
        let burst_us = WifiTiming::default().burst_us();
        let bits = (BITS_PER_US * frame_us.min(burst_us)).round() as u32;
        rayleigh_block_frame_error_rate(db_to_linear(sinr_db), bits)
    }

    /// The interferer of island `island` whose nodes stand at `positions`; it sends only
    /// while `on` is set.
    pub fn interferer(
        &self,
        positions: &[Position],
        island: usize,
        seed: u64,
        on: Arc<AtomicBool>,
    ) -> GeometricInterferer {
        GeometricInterferer {
            on,
            setup: self.clone(),
            positions: positions.to_vec(),
            island,
            process: WifiBurstProcess::new(&WifiTiming::default(), self.load_mbps, seed),
            links: HashMap::new(),
        }
    }
}

/// A Wi-Fi burst process whose bursts corrupt each link's frames as its SINR says.
#[derive(Debug, Clone)]
pub struct GeometricInterferer {
    on: Arc<AtomicBool>,
    setup: WifiSetup,
    positions: Vec<Position>,
    island: usize,
    process: WifiBurstProcess,
    links: HashMap<(NodeId, NodeId, u64), f64>,
}

/// Under the SINR reception model: the bursts (while the interference is on) at their
/// in-band power from this setup's transmit power and in-band share, through the medium's own
/// path loss (one room, one propagation law for both radios), without the Rayleigh averaging
/// (the SINR sum is judged per frame).
impl ExternalInterference for GeometricInterferer {
    fn bursts(&mut self, start: Instant, end: Instant) -> Vec<(Instant, Instant)> {
        let bursts = self.process.bursts_between(start, end);
        if self.on.load(Ordering::Relaxed) {
            bursts
        } else {
            Vec::new()
        }
    }

    fn power_dbm_at(
        &self,
        _node: NodeId,
        position: Option<&Position>,
        path_loss: &PathLoss,
    ) -> Option<f64> {
        let at = position?;
        let in_band = self
            .setup
            .in_band_db
            .get(self.island)
            .or(self.setup.in_band_db.last())
            .copied()
            .unwrap_or(0.0);
        let wifi = Position {
            x: self.setup.position.0,
            y: self.setup.position.1,
        };
        Some(self.setup.tx_dbm + in_band - path_loss.loss_db(wifi.distance(at)))
    }
}

impl FrameErrorModel for GeometricInterferer {
    fn corrupts(&mut self, frame: &FrameOnLink, rng: &mut Xoshiro256PlusPlus) -> bool {
        if !self.on.load(Ordering::Relaxed) || !self.process.overlaps(frame.start, frame.end) {
            return false;
        }
        let (Some(&from), Some(&to)) =
            (self.positions.get(frame.from), self.positions.get(frame.to))
        else {
            return false;
        };
        let frame_ns = (frame.end - frame.start).as_nanos() as u64;
        let key = (frame.from, frame.to, frame_ns);
        let setup = &self.setup;
        let island = self.island;
        let p = *self.links.entry(key).or_insert_with(|| {
            let sinr = setup.sinr_db(from, to, island);
            setup.corruption_given_overlap(sinr, frame_ns as f64 / 1e3)
        });
        p >= 1.0 || rng.random::<f64>() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    #[test]
    fn under_sinr_the_bursts_reach_a_node_through_the_mediums_path_loss() {
        let w = WifiSetup::open_room(15.0);
        let model = w.interferer(&[], 0, 1, Arc::new(AtomicBool::new(true)));
        let node = at(40.0, 0.0);
        // 40 m from the sender at 80 m.
        for exponent in [3.0, 3.71] {
            let loss = PathLoss::log_distance(exponent);
            let power = model.power_dbm_at(1, Some(&node), &loss).expect("placed");
            let expected = w.tx_dbm + in_band_channel_26_db() - loss.loss_db(40.0);
            assert!(
                (power - expected).abs() < 1e-9,
                "{exponent}: {power} {expected}"
            );
        }
    }

    #[test]
    fn the_interferer_corrupts_nothing_until_it_is_switched_on() {
        use covey_proto::Instant;
        use covey_sim::media::ieee802154::FrameKind;
        use rand::SeedableRng;
        let w = WifiSetup::open_room(28.5);
        let positions = [at(0.0, 0.0), at(50.0, 0.0), at(70.0, 0.0)];
        let on = Arc::new(AtomicBool::new(false));
        let mut model = w.interferer(&positions, 0, 9, on.clone());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut lost = |model: &mut GeometricInterferer, from_ms: u64| {
            (0..200u64)
                .filter(|k| {
                    let start = Instant::from_millis(from_ms + 10 * k);
                    let frame = FrameOnLink {
                        from: 1,
                        to: 2,
                        start,
                        end: start + covey_proto::Duration::from_micros(1500),
                        air_bytes: 47,
                        kind: FrameKind::Data,
                    };
                    model.corrupts(&frame, &mut rng)
                })
                .count()
        };
        assert_eq!(lost(&mut model, 0), 0);
        on.store(true, Ordering::Relaxed);
        // Next to the interferer at its highest load nearly every frame is lost.
        assert!(lost(&mut model, 10_000) > 180);
    }

    #[test]
    fn channel_shares_follow_the_ofdm_band() {
        assert!((in_band_channel_25_db() + 9.19).abs() < 0.01);
        assert!((in_band_channel_26_db() + 11.06).abs() < 0.01);
    }

    #[test]
    fn links_near_the_interferer_suffer_and_far_ones_do_not() {
        let w = WifiSetup::open_room(10.0);
        // A 20 m hop ending 10 m from the Wi-Fi sender is swamped ...
        let near = w.sinr_db(at(50.0, 0.0), at(70.0, 0.0), 0);
        assert!(w.corruption_given_overlap(near, 2000.0) > 0.9, "{near}");
        // ... one ending at the gateway, 80 m away, loses only what deep fades expose.
        let far = w.sinr_db(at(20.0, 0.0), at(0.0, 0.0), 0);
        assert!(w.corruption_given_overlap(far, 2000.0) < 0.15, "{far}");
        // Fading makes the loss grow smoothly as the interferer's share rises.
        let mid = w.sinr_db(at(20.0, 0.0), at(40.0, 0.0), 0);
        let p = w.corruption_given_overlap(mid, 2000.0);
        assert!(p > 0.05 && p < 0.9, "{mid}: {p}");
    }
}
