//! The answered share per rate, over a point's seeds.

use std::collections::BTreeMap;

use serde::Serialize;

use super::run::RunResult;

/// The runs at one rate.
#[derive(Debug, Clone, Serialize)]
pub struct RatePoint {
    /// Requests per second.
    pub rate: f64,
    /// Runs (seeds) aggregated.
    pub runs: usize,
    /// Requests over all runs.
    pub requests: u64,
    /// Share of requests answered (pooled over the runs).
    pub answered_share: f64,
    /// Smallest run share.
    pub answered_min: f64,
    /// Largest run share.
    pub answered_max: f64,
    /// Responses received per second of sending.
    pub answered_per_s: f64,
    /// Mean time from send to response over the answered requests, seconds.
    pub latency_mean_s: f64,
    /// Per request: dropped at the client's full MAC queue.
    pub client_queue_drop_share: f64,
    /// Per request: response dropped at the server's full MAC queue.
    pub server_queue_drop_share: f64,
    /// Per request: response dropped at the base station's full serial buffer.
    pub serial_drop_share: f64,
    /// Per request: frames lost to collisions.
    pub collisions_per_request: f64,
    /// Per request: channel access failures.
    pub channel_access_failures_per_request: f64,
    /// Per request: frames dropped after the MAC's retries.
    pub retries_exhausted_per_request: f64,
    /// Per request: MAC retransmissions.
    pub mac_retries_per_request: f64,
    /// Runs unfinished at their time limit.
    pub unfinished: usize,
}

/// Groups `runs` by rate, in rate order.
pub fn aggregate(runs: &[RunResult]) -> Vec<RatePoint> {
    let mut groups: BTreeMap<u64, Vec<&RunResult>> = BTreeMap::new();
    for r in runs {
        // Rates are positive, so their bit patterns order as the numbers do.
        groups.entry(r.point.rate.to_bits()).or_default().push(r);
    }
    groups
        .into_values()
        .filter_map(|rs| {
            let first = rs.first()?;
            let requests: u64 = rs.iter().map(|r| u64::from(r.requests)).sum();
            let per = |f: fn(&RunResult) -> u64| {
                let total: u64 = rs.iter().map(|r| f(r)).sum();
                if requests == 0 {
                    0.0
                } else {
                    total as f64 / requests as f64
                }
            };
            let shares: Vec<f64> = rs.iter().map(|r| r.answered_share()).collect();
            let share = per(|r| u64::from(r.answered));
            Some(RatePoint {
                rate: first.point.rate,
                runs: rs.len(),
                requests,
                answered_share: share,
                answered_min: shares.iter().copied().fold(f64::INFINITY, f64::min),
                answered_max: shares.iter().copied().fold(0.0, f64::max),
                answered_per_s: share * first.point.rate,
                latency_mean_s: {
                    let answered: u32 = rs.iter().map(|r| r.answered).sum();
                    let sum: f64 = rs
                        .iter()
                        .map(|r| r.latency_mean_s * f64::from(r.answered))
                        .sum();
                    sum / f64::from(answered.max(1))
                },
                client_queue_drop_share: per(|r| r.client_queue_drops),
                server_queue_drop_share: per(|r| r.server_queue_drops),
                serial_drop_share: per(|r| r.serial_drops),
                collisions_per_request: per(|r| r.collisions),
                channel_access_failures_per_request: per(|r| r.channel_access_failures),
                retries_exhausted_per_request: per(|r| r.retries_exhausted),
                mac_retries_per_request: per(|r| r.mac_retries),
                unfinished: rs.iter().filter(|r| !r.finished).count(),
            })
        })
        .collect()
}

/// The point at `rate`.
pub fn at(points: &[RatePoint], rate: f64) -> Option<&RatePoint> {
    points.iter().find(|p| (p.rate - rate).abs() < 1e-9)
}
