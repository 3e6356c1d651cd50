//! Table 4 measured: datagrams that fill f fragments sent one at a time over the scenario's
//! one-hop link under each error model, and the share that never reached the receiver's
//! application. The Monte-Carlo counterpart of each model's closed form.

use covey_proto::Instant;
use covey_sim::media::{Destination, Medium, Packet};
use serde::Serialize;

use super::error_model::ErrorModel;
use super::run::build_link;
use super::Params;
use crate::scenarios::one_hop::LinkFormat;

/// One cell of Table 4 under one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LossCell {
    /// The error model.
    pub model: ErrorModel,
    /// The SNR in dB.
    pub snr_db: f64,
    /// Fragments per datagram.
    pub fragments: usize,
    /// UDP payload bytes (the largest that takes `fragments` frames).
    pub payload: usize,
    /// The model's closed-form datagram loss, percent.
    pub closed_form_percent: f64,
    /// Datagrams sent in the Monte-Carlo measurement.
    pub datagrams: u64,
    /// Of those, lost (never delivered to the receiver's application).
    pub lost: u64,
}

impl LossCell {
    /// The measured loss, percent.
    pub fn measured_percent(&self) -> f64 {
        if self.datagrams == 0 {
            return f64::NAN;
        }
        100.0 * self.lost as f64 / self.datagrams as f64
    }
}

/// Sends `datagrams` datagrams of `fragments` full fragments from node 0 to node 1, each
/// after the last is done, and counts those lost.
pub fn measure(
    model: ErrorModel,
    snr_db: f64,
    fragments: usize,
    datagrams: u64,
    params: &Params,
    seed: u64,
) -> LossCell {
    let format = LinkFormat::default();
    let payload = format.full_payload(fragments).unwrap_or(0);
    let mut link = build_link(model, snr_db, params, seed);
    let mut at = Instant::ZERO;
    let mut delivered = 0u64;
    for id in 0..datagrams {
        let packet = Packet {
            id,
            from: 0,
            to: Destination::Node(1),
            payload_bytes: payload,
        };
        link.send(at, packet);
        while let Some(next) = link.poll_timeout() {
            link.handle_timeout(next);
            at = next;
            while link.poll_delivery().is_some() {
                delivered += 1;
            }
            while link.poll_released().is_some() {}
        }
    }
    LossCell {
        model,
        snr_db,
        fragments,
        payload,
        closed_form_percent: 100.0 * model.datagram_loss(snr_db, payload, &format),
        datagrams,
        lost: datagrams.saturating_sub(delivered),
    }
}
