//! The office testbed of Table 8: 10 members spread over rooms and hallways of an office
//! floor during office hours, with the building's Wi-Fi on channel 13 overlapping the
//! sensor network's 802.15.4 channel 26.
//!
//! The paper could not control or measure that interference, so the model states its
//! assumptions instead of fitting them: the members stand as in the 10-member tree of
//! Table 7; walls raise the path loss exponent from the open room's 3 to 3.5 (indoor
//! propagation through office partitions); the access point sends from a room at the end of
//! the members' part of the floor, by the same rule as the open room: one ring step beyond
//! the farthest member (60 m from the gateway); "low usage" offers 5 Mbit/s, "normal usage"
//! 15 Mbit/s (a light and a busy share of one 802.11g channel). Other sources the paper names (microwave ovens,
//! cordless phones, Bluetooth) are not modelled.

use crate::scenarios::group::hop_profile::RING_STEP_M;
use crate::scenarios::group::wifi::in_band_channel_26_db;
use crate::scenarios::group::WifiSetup;

/// A level of office Wi-Fi use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Table 8's name for it.
    pub name: &'static str,
    /// The load that stands for it, Mbit/s.
    pub load_mbps: f64,
}

/// Table 8's two levels.
pub const USAGES: [Usage; 2] = [
    Usage {
        name: "low",
        load_mbps: 5.0,
    },
    Usage {
        name: "normal",
        load_mbps: 15.0,
    },
];

/// The usage level of `load_mbps`.
pub fn usage_of(load_mbps: f64) -> Option<Usage> {
    USAGES.iter().copied().find(|u| u.load_mbps == load_mbps)
}

/// The office's interferer at `load_mbps`.
pub fn wifi(load_mbps: f64) -> WifiSetup {
    WifiSetup {
        load_mbps,
        position: (3.0 * RING_STEP_M, 0.0),
        tx_dbm: 20.0,
        path_loss_exponent: 3.5,
        in_band_db: vec![in_band_channel_26_db()],
    }
}
