//! The SINR reception model inside the medium: capture, lock-on, ACKs under interference, CCA
//! modes, Wi-Fi in the SINR sum, determinism.

use covey_proto::Instant;

use super::super::interference::{WifiInterferer, WifiInterfererConfig};
use super::super::{Destination, LossCause, Medium, MediumStats, NodeId, Packet};
use super::radio::{dbm_to_mw, CcaMode, RadioParams, ReceptionModel};
use super::reception::{frame_success, Emission};
use super::{Ieee802154Config, Ieee802154Medium, Position, Topology};

fn at(x: f64) -> Position {
    Position { x, y: 0.0 }
}

fn us(n: u64) -> Instant {
    Instant::from_nanos(n * 1000)
}

/// A medium over nodes on a line at `xs` metres, audibility range 1 km (so the Overlap model
/// hears everyone), SINR reception with `params`, no initial backoff (BE 0: an idle sender
/// transmits 320 µs after its datagram arrives), no ACKs unless `ack`.
fn line(xs: &[f64], params: RadioParams, ack: bool, seed: u64) -> Ieee802154Medium {
    let mut config = Ieee802154Config {
        seed,
        reception: ReceptionModel::Sinr(params),
        ..Ieee802154Config::default()
    };
    config.mac.min_be = 0;
    config.mac.ack_unicast = ack;
    let topology = Topology::from_positions(xs.iter().map(|&x| at(x)).collect(), 1000.0);
    Ieee802154Medium::new(config, topology)
}

fn send(m: &mut Ieee802154Medium, at: Instant, id: u64, from: NodeId, to: NodeId, bytes: usize) {
    m.send(
        at,
        Packet {
            id,
            from,
            to: Destination::Node(to),
            payload_bytes: bytes,
        },
    );
}

/// Runs the medium up to `until` (events due then included), collecting deliveries.
fn advance(m: &mut Ieee802154Medium, until: Instant, delivered: &mut Vec<u64>) {
    while let Some(next) = m.poll_timeout().filter(|&t| t <= until) {
        m.handle_timeout(next);
        while let Some(d) = m.poll_delivery() {
            delivered.push(d.id);
        }
    }
}

/// Offers the datagrams `(at, id, from, to, bytes)` in time order as the clock reaches them,
/// then runs to quiescence; the ids delivered.
fn offer(m: &mut Ieee802154Medium, offers: &[(Instant, u64, NodeId, NodeId, usize)]) -> Vec<u64> {
    let mut delivered = Vec::new();
    let mut offers = offers.to_vec();
    offers.sort_by_key(|o| (o.0, o.1));
    for (at, id, from, to, bytes) in offers {
        advance(m, at, &mut delivered);
        send(m, at, id, from, to, bytes);
    }
    delivered.extend(run(m));
    delivered
}

/// Runs to quiescence; the ids delivered.
fn run(m: &mut Ieee802154Medium) -> Vec<u64> {
    let mut delivered = Vec::new();
    while let Some(next) = m.poll_timeout() {
        m.handle_timeout(next);
        while let Some(d) = m.poll_delivery() {
            delivered.push(d.id);
        }
    }
    delivered
}

/// Receiver at 0; A first, B 100 µs later, each sending 50 bytes to the receiver; A and B
/// at the given positions (out of each other's sensing). Returns (A delivered, B delivered).
fn race(a_x: f64, b_x: f64, seed: u64) -> (bool, bool) {
    let mut m = line(&[0.0, a_x, b_x], RadioParams::default(), false, seed);
    send(&mut m, us(0), 1, 1, 0, 50);
    send(&mut m, us(100), 2, 2, 0, 50);
    let delivered = run(&mut m);
    (delivered.contains(&1), delivered.contains(&2))
}

#[test]
fn a_strong_first_frame_survives_a_weak_later_one() {
    // A 10 m west of the receiver (−70 dBm there), B 60 m east (−94 dBm, still detectable);
    // A and B are 70 m apart, below each other's sensitivity: B transmits into A's frame.
    for seed in 0..20 {
        assert_eq!(race(-10.0, 60.0, seed), (true, false), "seed {seed}");
    }
}

#[test]
fn a_strong_later_frame_does_not_steal_the_lock() {
    // A far (60 m, −94 dBm) first, B near (10 m) 100 µs later: the receiver stays locked on A,
    // whose SINR is now −23 dB; both are lost.
    for seed in 0..20 {
        assert_eq!(race(-60.0, 10.0, seed), (false, false), "seed {seed}");
    }
}

#[test]
fn equal_powers_lose_the_later_frame_and_leave_the_first_to_the_curve() {
    // A and B 34 m either side (−86.2 dBm each at the receiver, 9 dB above the noise), 68 m
    // apart and so hidden from each other. The later frame is never received; the first
    // survives at the standard's curve for its SINR of about −0.5 dB over the overlap, which
    // for a 50-byte datagram is far from certain either way.
    let params = RadioParams::default();
    let signal = dbm_to_mw(params.received_dbm(&at(-34.0), &at(0.0)));
    let noise = dbm_to_mw(params.noise_dbm());
    // Frames of 6 + 11 + 9 + 50 = 76 bytes (2432 µs); B starts 100 µs after A.
    let interferer = Emission {
        start: us(100),
        end: us(2532),
        mw: signal,
    };
    let expected = frame_success(signal, noise, us(0), us(2432), &[interferer], 0.25e-3);
    assert!(expected > 0.2 && expected < 0.95, "{expected}");
    let trials = 400;
    let mut first = 0;
    for seed in 0..trials {
        let (a, b) = race(-34.0, 34.0, seed);
        assert!(!b, "seed {seed}: the later frame has no lock");
        first += u32::from(a);
    }
    let measured = f64::from(first) / f64::from(trials as u32);
    let sigma = (expected * (1.0 - expected) / f64::from(trials as u32)).sqrt();
    assert!(
        (measured - expected).abs() < 4.0 * sigma,
        "{measured} vs {expected}"
    );
}

#[test]
fn the_overlap_model_loses_both_where_sinr_captures() {
    // The first test's geometry under the old model: both frames die.
    let mut config = Ieee802154Config::default();
    config.mac.min_be = 0;
    config.mac.ack_unicast = false;
    // A and B hear the receiver but not each other, as in the SINR geometry.
    let Ok(topology) = Topology::from_links(3, &[(0, 1), (0, 2)]) else {
        panic!("a valid topology");
    };
    let mut m = Ieee802154Medium::new(config, topology);
    send(&mut m, us(0), 1, 1, 0, 50);
    send(&mut m, us(100), 2, 2, 0, 50);
    assert!(run(&mut m).is_empty());
    assert_eq!(m.stats().losses_of(LossCause::Collision), 2);
}

#[test]
fn an_ack_survives_a_far_interferer() {
    // A (0 m) sends 50 bytes to R (5 m) with ACKs: its frame is on the air over
    // [320, 2752) µs and R's ACK over [2944, 3296) µs. C (−70 m) offers a 100-byte broadcast
    // at 2760 µs: its CCA falls in the gap before the ACK and its frame overlaps the ACK at A,
    // where it arrives at −95.6 dBm against R's −61 dBm.
    let xs = [0.0, 5.0, -70.0];
    let offers = [(us(0), 1, 0, 1, 50), (us(2760), 2, 2, usize::MAX, 100)];
    let outcome = |m: &mut Ieee802154Medium| {
        m.enable_confirms();
        let mut delivered = Vec::new();
        for &(at, id, from, to, bytes) in &offers {
            advance(m, at, &mut delivered);
            let to = if to == usize::MAX {
                Destination::Broadcast
            } else {
                Destination::Node(to)
            };
            m.send(
                at,
                Packet {
                    id,
                    from,
                    to,
                    payload_bytes: bytes,
                },
            );
        }
        delivered.extend(run(m));
        let confirm = std::iter::from_fn(|| m.poll_confirm()).find(|c| c.packet == 1);
        (
            delivered.contains(&1),
            confirm.map(|c| (c.acked, c.transmissions)),
        )
    };
    let mut sinr = line(&xs, RadioParams::default(), true, 3);
    assert_eq!(outcome(&mut sinr), (true, Some((true, 1))));

    // Under Overlap (everyone in range of everyone) the ACK dies and A sends again.
    let mut config = Ieee802154Config::default();
    config.mac.min_be = 0;
    let topology = Topology::from_positions(xs.iter().map(|&x| at(x)).collect(), 1000.0);
    let mut old = Ieee802154Medium::new(config, topology);
    let (delivered, confirm) = outcome(&mut old);
    assert!(delivered);
    assert!(
        confirm.is_some_and(|(_, transmissions)| transmissions > 1),
        "{confirm:?}"
    );
}

/// Busy CCAs at A (0 m) when it tries to send while B (at `b_x`) is sending a long frame;
/// `wifi` puts a saturated Wi-Fi station `wifi` metres from A.
fn busy_ccas(mode: CcaMode, b_x: f64, wifi: Option<f64>) -> u64 {
    let params = RadioParams {
        cca: mode,
        ..RadioParams::default()
    };
    let mut m = line(&[0.0, b_x, 5.0], params, false, 1);
    if let Some(w) = wifi {
        let config = WifiInterfererConfig {
            load_mbps: 30.0,
            ..WifiInterfererConfig::default()
        };
        let positions = [at(0.0), at(b_x), at(5.0)];
        let interferer = WifiInterferer::at_position(config, at(w), 10.0, &positions);
        assert!(m.add_interferer(Box::new(interferer)).is_ok());
    } else {
        send(&mut m, us(0), 1, 1, 2, 100);
    }
    send(&mut m, us(500), 2, 0, 2, 20);
    run(&mut m);
    m.counters(0).map_or(0, |c| c.cca_busy)
}

#[test]
fn cca_modes_differ_as_the_standard_defines_them() {
    // B 40 m away: detectable (−88 dBm ≥ −95) but below the −77 dBm ED threshold.
    assert!(busy_ccas(CcaMode::CarrierSense, 40.0, None) > 0);
    assert!(busy_ccas(CcaMode::CarrierSenseOrEnergy, 40.0, None) > 0);
    assert_eq!(busy_ccas(CcaMode::EnergyDetection, 40.0, None), 0);
    assert_eq!(busy_ccas(CcaMode::CarrierSenseAndEnergy, 40.0, None), 0);
    // B 5 m away: −61 dBm, busy in every mode.
    for mode in [
        CcaMode::CarrierSense,
        CcaMode::EnergyDetection,
        CcaMode::CarrierSenseAndEnergy,
        CcaMode::CarrierSenseOrEnergy,
    ] {
        assert!(busy_ccas(mode, 5.0, None) > 0, "{mode:?}");
    }
    // A saturated Wi-Fi station 3 m away: energy without an 802.15.4 carrier.
    assert!(busy_ccas(CcaMode::EnergyDetection, 300.0, Some(3.0)) > 0);
    assert_eq!(busy_ccas(CcaMode::CarrierSense, 300.0, Some(3.0)), 0);
}

#[test]
fn wifi_enters_the_sinr_sum_by_distance() {
    // A 20-byte datagram from 5 m, every 5 ms, under a 10 Mbit/s Wi-Fi station: near the
    // receiver it destroys what it overlaps; 60 m away (about −124 dBm in band) it does not.
    let lost = |wifi_x: f64| {
        let mut m = line(&[0.0, 5.0], RadioParams::default(), false, 2);
        let config = WifiInterfererConfig {
            load_mbps: 10.0,
            ..WifiInterfererConfig::default()
        };
        let interferer = WifiInterferer::at_position(config, at(wifi_x), 10.0, &[at(0.0), at(5.0)]);
        assert!(m.add_interferer(Box::new(interferer)).is_ok());
        let offers: Vec<_> = (0..400)
            .map(|id| (Instant::from_millis(5 * id), id, 1, 0, 20))
            .collect();
        400 - offer(&mut m, &offers).len()
    };
    assert!(lost(1.0) > 100, "{}", lost(1.0));
    assert_eq!(lost(-60.0), 0);
}

#[test]
fn interferers_are_refused_under_the_overlap_model() {
    let mut m = Ieee802154Medium::new(Ieee802154Config::default(), Topology::full_mesh(2));
    let interferer = WifiInterferer::new(WifiInterfererConfig::default(), vec![true, true]);
    assert!(m.add_interferer(Box::new(interferer)).is_err());
}

/// Twenty senders at fixed spots within 15 m of a sink, 20 datagrams/s each, for 5 s.
fn busy_star(seed: u64, reception: ReceptionModel) -> MediumStats {
    // (Compared through Debug: MediumStats is not PartialEq.)
    let positions: Vec<Position> = (0..21)
        .map(|i| {
            let angle = f64::from(i) * 2.4;
            let r = if i == 0 {
                0.0
            } else {
                2.0 + f64::from(i % 7) * 2.0
            };
            Position {
                x: r * angle.cos(),
                y: r * angle.sin(),
            }
        })
        .collect();
    let config = Ieee802154Config {
        seed,
        reception,
        ..Ieee802154Config::default()
    };
    let mut m = Ieee802154Medium::new(config, Topology::from_positions(positions, 100.0));
    let mut offers = Vec::new();
    for k in 0..100u64 {
        for sender in 1..=20 {
            let jitter = (sender as u64 * 7919 + k * 104_729) % 50_000;
            let id = offers.len() as u64;
            offers.push((us(k * 50_000 + jitter), id, sender, 0, 50));
        }
    }
    offer(&mut m, &offers);
    m.stats().clone()
}

#[test]
fn sinr_runs_are_deterministic_and_capture_helps_under_load() {
    let sinr = ReceptionModel::Sinr(RadioParams::default());
    let a = busy_star(9, sinr);
    let b = busy_star(9, sinr);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let overlap = busy_star(9, ReceptionModel::Overlap);
    assert!(
        a.packets_delivered >= overlap.packets_delivered,
        "{} vs {}",
        a.packets_delivered,
        overlap.packets_delivered
    );
    let again = busy_star(9, ReceptionModel::Overlap);
    assert_eq!(format!("{again:?}"), format!("{overlap:?}"));
}

#[test]
fn a_topology_without_positions_works_under_sinr() {
    let config = Ieee802154Config {
        reception: ReceptionModel::Sinr(RadioParams::default()),
        ..Ieee802154Config::default()
    };
    let mut m = Ieee802154Medium::new(config, Topology::full_mesh(3));
    let offers: Vec<_> = (0..50)
        .map(|id| (Instant::from_millis(20 * id), id, 1, 0, 40))
        .collect();
    assert_eq!(offer(&mut m, &offers).len(), 50);
}
