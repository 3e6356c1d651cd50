//! Handshakes per second: `--sockets` slots, each opening a DTLS session from a fresh port,
//! closing it (close_notify) once established, and starting again, for the measured time.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use covey::dtls::DtlsConfig;
use hdrhistogram::Histogram;

use super::dtls_link::DtlsLink;
use super::load::{pin_current_thread, LoadSpec, Measurement};

/// A CoAP ping (an empty CON): the first plaintext, which makes the session start.
const PING: [u8; 4] = [0x40, 0x00, 0x00, 0x01];

/// One handshake in progress.
struct Slot {
    socket: UdpSocket,
    link: DtlsLink,
    started: Instant,
}

impl Slot {
    fn open(remote: SocketAddr, config: &DtlsConfig) -> io::Result<Slot> {
        let bind: SocketAddr = if remote.is_ipv6() {
            "[::]:0".parse().expect("literal address")
        } else {
            "0.0.0.0:0".parse().expect("literal address")
        };
        let socket = UdpSocket::bind(bind)?;
        socket.set_nonblocking(true)?;
        let mut link = DtlsLink::new(config.clone(), &socket)?;
        link.send(remote, &PING);
        Ok(Slot {
            socket,
            link,
            started: Instant::now(),
        })
    }

    /// Sends what the session has queued.
    fn flush(&mut self) -> bool {
        let mut sent = false;
        while let Some(record) = self.link.poll_record() {
            let _ = self.socket.send_to(&record.datagram, record.remote);
            sent = true;
        }
        sent
    }
}

/// Measures handshakes per second against `spec.remote` with `spec.dtls`'s credentials.
pub fn run(spec: &LoadSpec) -> io::Result<Measurement> {
    let config = spec
        .dtls
        .clone()
        .ok_or_else(|| io::Error::other("handshakes need DTLS credentials"))?;
    if let Some(cpu) = spec.cpu {
        pin_current_thread(cpu);
    }
    let origin = Instant::now();
    let start = origin + spec.warmup;
    let end = start + spec.duration;
    let mut slots = (0..spec.sockets.max(1))
        .map(|_| Slot::open(spec.remote, &config))
        .collect::<io::Result<Vec<_>>>()?;
    let mut m = Measurement {
        completed: 0,
        error_responses: 0,
        elapsed: spec.duration,
        retransmissions: 0,
        timeouts: 0,
        failures: 0,
        unanswered: 0,
        generator_idle: Duration::ZERO,
        threads: 1,
        server_cpu: None,
        latency: Histogram::new_with_bounds(1, 60_000_000_000, 3)
            .map_err(|e| io::Error::other(e.to_string()))?,
    };
    let server_cpu_before = spec.server_pid.and_then(super::load::cpu_time);
    let mut cpu_at_start = None;
    let mut buf = vec![0u8; 2048];
    while Instant::now() < end {
        let now = Instant::now();
        if cpu_at_start.is_none() && now >= start {
            cpu_at_start = Some(spec.server_pid.and_then(super::load::cpu_time).or(server_cpu_before));
        }
        let mut worked = false;
        for slot in slots.iter_mut() {
            worked |= slot.flush();
            while let Ok((n, from)) = slot.socket.recv_from(&mut buf) {
                slot.link.receive(from, &buf[..n]);
                worked = true;
            }
            slot.link.tick();
            worked |= slot.flush();
            let done = slot.link.sessions() > 0;
            let failed = slot.link.failed() > 0;
            if done || failed {
                if done {
                    slot.link.close(spec.remote);
                    slot.flush();
                    let finished = Instant::now();
                    if (start..end).contains(&finished) {
                        m.completed += 1;
                        let took = finished.duration_since(slot.started).as_nanos();
                        let _ = m.latency.record(u64::try_from(took).unwrap_or(u64::MAX).max(1));
                    }
                } else {
                    m.failures += 1;
                }
                *slot = Slot::open(spec.remote, &config)?;
                worked = true;
            }
        }
        if !worked && now >= start {
            m.generator_idle += Instant::now().saturating_duration_since(now);
        }
    }
    m.unanswered = slots.len() as u64;
    if let (Some(Some(before)), Some(pid)) = (cpu_at_start, spec.server_pid) {
        m.server_cpu = super::load::cpu_time(pid).map(|after| after.saturating_sub(before));
    }
    Ok(m)
}
