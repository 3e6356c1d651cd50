//! The emulator checks itself: a probe stream of numbered, timestamped UDP datagrams from
//! one node to another measures what the link really did — one-way delay, loss, and the
//! rate at which packets arrived — so it can be set beside the configuration.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration as StdDuration;

use covey_proto::Duration;
use nix::sys::socket::{setsockopt, sockopt};
use serde::Serialize;

use super::clock::monotonic_nanos;
use super::realtime::{make_current_thread_realtime, PROBE_PRIORITY};
use super::{EmuError, Testbed};

/// IPv4 (20 B) and UDP (8 B) header bytes on each probe.
pub const PROBE_HEADERS: usize = 28;
/// Sequence number and send time at the front of each probe.
const STAMP: usize = 16;
/// The receiver's port.
const PROBE_PORT: u16 = 47_000;
/// How long the receiver waits, once the last probe was sent, for a next arrival.
const STRAGGLERS: StdDuration = StdDuration::from_secs(2);
/// Receive buffer, so the probe's own socket never drops what the link delivered.
const RECEIVE_BUFFER: usize = 8 << 20;

/// A probe stream: `bursts` of `burst` datagrams of `payload` bytes, a burst every
/// `interval` (zero: as fast as the sender can).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// Datagrams in all.
    pub packets: usize,
    /// Datagrams sent back to back.
    pub burst: usize,
    /// Time between the starts of bursts.
    pub interval: StdDuration,
    /// UDP payload bytes (at least 16).
    pub payload: usize,
    /// Whether the sending and receiving threads run under SCHED_FIFO, so that the host's
    /// scheduling of the probe itself stays out of the measured delays.
    pub realtime: bool,
}

/// What a probe stream measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received (each once).
    pub received: u64,
    /// 1 − received / sent.
    pub loss: f64,
    /// Mean one-way delay of the received datagrams.
    pub mean_delay: Duration,
    /// Shortest one-way delay.
    pub min_delay: Duration,
    /// Longest one-way delay.
    pub max_delay: Duration,
    /// The 1st percentile of the one-way delay.
    pub p1_delay: Duration,
    /// The median one-way delay.
    pub median_delay: Duration,
    /// The 99th percentile of the one-way delay.
    pub p99_delay: Duration,
    /// IP bits per second between the first and the last arrival.
    pub arrival_rate_bps: f64,
    /// Datagrams per second between the first and the last arrival.
    pub arrival_rate_pps: f64,
    /// P(lost | the previous datagram was lost): near the loss rate for independent
    /// losses, far above it for bursts.
    pub loss_after_loss: f64,
}

/// Sends `probe` from node `from` to node `to` and measures what arrives.
pub fn measure(
    testbed: &Testbed,
    from: &str,
    to: &str,
    probe: Probe,
) -> Result<Measurement, EmuError> {
    if probe.payload < STAMP || probe.burst == 0 {
        return Err(EmuError::Invalid(format!(
            "a probe needs a payload of at least {STAMP} bytes and bursts of at least 1"
        )));
    }
    let sender = testbed.udp_socket(from, 0)?;
    let receiver = testbed.udp_socket(to, PROBE_PORT)?;
    setsockopt(&receiver, sockopt::RcvBufForce, &RECEIVE_BUFFER)
        .map_err(|e| EmuError::sys("enlarge the probe's receive buffer", e))?;
    receiver
        .set_read_timeout(Some(StdDuration::from_millis(100)))
        .map_err(|e| EmuError::io("set the probe's read timeout", e))?;
    let destination = SocketAddr::from((testbed.address(to)?, PROBE_PORT));
    let done = AtomicBool::new(false);
    let (sent, arrivals) = std::thread::scope(|s| {
        let receiving = s.spawn(|| {
            if probe.realtime {
                make_current_thread_realtime(PROBE_PRIORITY);
            }
            receive(&receiver, probe, &done)
        });
        let sending = s.spawn(|| {
            if probe.realtime {
                make_current_thread_realtime(PROBE_PRIORITY);
            }
            send(&sender, destination, probe)
        });
        let sent = match sending.join() {
            Ok(sent) => sent,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        done.store(true, Ordering::Release);
        (sent, receiving.join())
    });
    let sent = sent?;
    let arrivals = match arrivals {
        Ok(a) => a,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    Ok(summarise(sent, &arrivals, probe.payload))
}

/// Sends the stream, returning how many datagrams left.
fn send(socket: &std::net::UdpSocket, to: SocketAddr, probe: Probe) -> Result<u64, EmuError> {
    let mut buf = vec![0u8; probe.payload];
    let start = monotonic_nanos();
    let interval = u64::try_from(probe.interval.as_nanos()).unwrap_or(u64::MAX);
    let mut sent = 0u64;
    for seq in 0..probe.packets as u64 {
        let burst = seq / probe.burst as u64;
        let due = start.saturating_add(burst.saturating_mul(interval));
        loop {
            let now = monotonic_nanos();
            if now >= due {
                break;
            }
            let left = due - now;
            if left > 200_000 {
                std::thread::sleep(StdDuration::from_nanos(left - 100_000));
            } else {
                std::hint::spin_loop();
            }
        }
        buf[..8].copy_from_slice(&seq.to_be_bytes());
        buf[8..16].copy_from_slice(&monotonic_nanos().to_be_bytes());
        match socket.send_to(&buf, to) {
            Ok(_) => sent += 1,
            // The sender's own queue is full: the datagram never reached the link.
            Err(e) if e.raw_os_error() == Some(nix::libc::ENOBUFS) => {}
            Err(e) => return Err(EmuError::io("send a probe", e)),
        }
    }
    Ok(sent)
}

/// One received probe: (sequence, sent at, received at), monotonic nanoseconds.
type Arrival = (u64, u64, u64);

fn receive(socket: &std::net::UdpSocket, probe: Probe, done: &AtomicBool) -> Vec<Arrival> {
    let mut arrivals = Vec::with_capacity(probe.packets);
    let mut seen = vec![false; probe.packets];
    let mut buf = vec![0u8; probe.payload.max(2048)];
    let mut last_event: Option<u64> = None;
    loop {
        if last_event.is_none() && done.load(Ordering::Acquire) {
            last_event = Some(monotonic_nanos());
        }
        if let Some(t) = last_event {
            let waited = monotonic_nanos().saturating_sub(t);
            if arrivals.len() == probe.packets || waited > STRAGGLERS.as_nanos() as u64 {
                return arrivals;
            }
        }
        let Ok(n) = socket.recv(&mut buf) else {
            continue;
        };
        let received = monotonic_nanos();
        if n < STAMP {
            continue;
        }
        let seq = u64::from_be_bytes(buf[..8].try_into().unwrap_or_default());
        let sent = u64::from_be_bytes(buf[8..16].try_into().unwrap_or_default());
        let Some(flag) = usize::try_from(seq).ok().and_then(|i| seen.get_mut(i)) else {
            continue;
        };
        if !*flag {
            *flag = true;
            arrivals.push((seq, sent, received));
            if last_event.is_some() {
                last_event = Some(received);
            }
        }
    }
}

fn summarise(sent: u64, arrivals: &[Arrival], payload: usize) -> Measurement {
    let received = arrivals.len() as u64;
    let mut delays: Vec<u64> = arrivals
        .iter()
        .map(|&(_, s, r)| r.saturating_sub(s))
        .collect();
    delays.sort_unstable();
    let sorted_nanos: Vec<f64> = delays.iter().map(|&d| d as f64).collect();
    let quantile = |q: f64| {
        let nanos = covey_sim::stats::quantile_sorted(&sorted_nanos, q).unwrap_or(0.0);
        Duration::from_nanos(nanos.round() as u64)
    };
    let mean = delays
        .iter()
        .sum::<u64>()
        .checked_div(received)
        .unwrap_or(0);
    let first = arrivals.iter().map(|a| a.2).min().unwrap_or(0);
    let last = arrivals.iter().map(|a| a.2).max().unwrap_or(0);
    let span = (last - first) as f64 / 1e9;
    let (rate_pps, rate_bps) = if received > 1 && span > 0.0 {
        let pps = (received - 1) as f64 / span;
        (pps, pps * ((payload + PROBE_HEADERS) * 8) as f64)
    } else {
        (0.0, 0.0)
    };
    let mut arrived = vec![false; usize::try_from(sent).unwrap_or(0)];
    for &(seq, ..) in arrivals {
        if let Some(a) = usize::try_from(seq).ok().and_then(|i| arrived.get_mut(i)) {
            *a = true;
        }
    }
    let (mut after_loss, mut lost_again) = (0u64, 0u64);
    for w in arrived.windows(2) {
        if !w[0] {
            after_loss += 1;
            lost_again += u64::from(!w[1]);
        }
    }
    Measurement {
        loss_after_loss: if after_loss == 0 {
            0.0
        } else {
            lost_again as f64 / after_loss as f64
        },
        sent,
        received,
        loss: if sent == 0 {
            0.0
        } else {
            1.0 - received as f64 / sent as f64
        },
        mean_delay: Duration::from_nanos(mean),
        min_delay: Duration::from_nanos(delays.iter().copied().min().unwrap_or(0)),
        max_delay: Duration::from_nanos(delays.iter().copied().max().unwrap_or(0)),
        p1_delay: quantile(0.01),
        median_delay: quantile(0.5),
        p99_delay: quantile(0.99),
        arrival_rate_bps: rate_bps,
        arrival_rate_pps: rate_pps,
    }
}
