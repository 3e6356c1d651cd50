//! Goodput per error model, SNR and payload, over a point's seeds.

use std::collections::BTreeMap;

use serde::Serialize;

use super::error_model::ErrorModel;
use super::run::RunResult;

/// The runs of one (model, SNR, payload) point.
#[derive(Debug, Clone, Serialize)]
pub struct GoodputPoint {
    /// The error model.
    pub model: ErrorModel,
    /// The SNR in dB.
    pub snr_db: f64,
    /// Bytes of the representation.
    pub payload: usize,
    /// Fragments of the response datagram.
    pub fragments: usize,
    /// Runs (seeds) aggregated.
    pub runs: usize,
    /// Mean goodput over the runs, bytes/s.
    pub goodput_mean: f64,
    /// All payload bytes over all the runs' time, bytes/s: the ratio of expectations the
    /// closed form predicts (the mean of per-run ratios lies above it when a few long
    /// timeouts dominate some runs).
    pub goodput_pooled: f64,
    /// Smallest run goodput, bytes/s.
    pub goodput_min: f64,
    /// Largest run goodput, bytes/s.
    pub goodput_max: f64,
    /// Transactions that failed, over all runs.
    pub failed: u64,
    /// Transactions in all runs.
    pub transactions: u64,
    /// Mean seconds per transaction.
    pub transaction_s: f64,
    /// Client CoAP retransmissions per transaction.
    pub coap_retransmissions_per_transaction: f64,
    /// Runs unfinished at the time limit.
    pub unfinished: usize,
    /// The model's closed-form goodput, bytes/s (single-exchange transfers only).
    pub goodput_closed_form: Option<f64>,
}

/// Groups `runs` by (model, SNR, payload), in a stable order.
pub fn aggregate(runs: &[RunResult]) -> Vec<GoodputPoint> {
    type Key = (ErrorModel, u64, usize);
    let mut groups: BTreeMap<Key, Vec<&RunResult>> = BTreeMap::new();
    for r in runs {
        // SNRs are finite and non-negative, so their bit patterns order as the numbers do.
        let key = (r.point.model, r.point.snr_db.to_bits(), r.point.payload);
        groups.entry(key).or_default().push(r);
    }
    groups
        .into_values()
        .filter_map(|rs| {
            let first = rs.first()?;
            let n = rs.len();
            let goodputs: Vec<f64> = rs.iter().map(|r| r.goodput).collect();
            let transactions: u64 = rs.iter().map(|r| u64::from(r.succeeded + r.failed)).sum();
            let elapsed: f64 = rs.iter().map(|r| r.elapsed_s).sum();
            let retx: u64 = rs.iter().map(|r| r.coap_retransmissions).sum();
            let per = |x: f64| {
                if transactions == 0 {
                    0.0
                } else {
                    x / transactions as f64
                }
            };
            Some(GoodputPoint {
                model: first.point.model,
                snr_db: first.point.snr_db,
                payload: first.point.payload,
                fragments: rs.iter().map(|r| r.fragments).max().unwrap_or(0),
                runs: n,
                goodput_mean: goodputs.iter().sum::<f64>() / n as f64,
                goodput_pooled: if elapsed > 0.0 {
                    rs.iter().map(|r| r.bytes as f64).sum::<f64>() / elapsed
                } else {
                    0.0
                },
                goodput_min: goodputs.iter().copied().fold(f64::INFINITY, f64::min),
                goodput_max: goodputs.iter().copied().fold(0.0, f64::max),
                failed: rs.iter().map(|r| u64::from(r.failed)).sum(),
                transactions,
                transaction_s: per(elapsed),
                coap_retransmissions_per_transaction: per(retx as f64),
                unfinished: rs.iter().filter(|r| !r.finished).count(),
                goodput_closed_form: None,
            })
        })
        .collect()
}

/// The point of (model, SNR, payload) in `points`.
pub fn find(
    points: &[GoodputPoint],
    model: ErrorModel,
    snr_db: f64,
    payload: usize,
) -> Option<&GoodputPoint> {
    points
        .iter()
        .find(|p| p.model == model && (p.snr_db - snr_db).abs() < 1e-9 && p.payload == payload)
}

/// Mean goodput of `model` at `snr_db` over all payloads: one number per curve of Fig 10.
pub fn curve_mean(points: &[GoodputPoint], model: ErrorModel, snr_db: f64) -> Option<f64> {
    let v: Vec<f64> = points
        .iter()
        .filter(|p| p.model == model && (p.snr_db - snr_db).abs() < 1e-9)
        .map(|p| p.goodput_mean)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Mean pooled simulated goodput and mean closed-form goodput of `model` at `snr_db` over
/// the payloads that have a closed form.
pub fn curve_against_closed_form(
    points: &[GoodputPoint],
    model: ErrorModel,
    snr_db: f64,
) -> Option<(f64, f64)> {
    let pairs: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.model == model && (p.snr_db - snr_db).abs() < 1e-9)
        .filter_map(|p| Some((p.goodput_pooled, p.goodput_closed_form?)))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    Some((
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    ))
}
