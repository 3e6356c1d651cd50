//! Handshakes per second: `--sockets` slots, each opening a DTLS session from a fresh port,
//! closing it (close_notify) once established, and starting again, for the measured time.
//! One session table serves every slot, as a client with many sessions would.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Instant;

use covey::dtls::SessionTable;

use super::load::{cpu_time, pin_current_thread, LoadSpec, Measurement};

/// A CoAP ping (an empty CON): the first plaintext, which makes the session start.
const PING: [u8; 4] = [0x40, 0x00, 0x00, 0x01];

/// One handshake in progress.
struct Slot {
    socket: UdpSocket,
    local: SocketAddr,
    started: Instant,
}

impl Slot {
    /// A fresh port and a handshake from it.
    fn open(remote: SocketAddr, table: &mut SessionTable) -> io::Result<Slot> {
        let bind: SocketAddr = if remote.is_ipv6() {
            "[::]:0".parse().expect("literal address")
        } else {
            "0.0.0.0:0".parse().expect("literal address")
        };
        let socket = UdpSocket::bind(bind)?;
        socket.set_nonblocking(true)?;
        let local = socket.local_addr()?;
        let started = Instant::now();
        table.send(started, local, remote, &PING);
        Ok(Slot {
            socket,
            local,
            started,
        })
    }
}

/// Sends every record the table has queued from the slot's socket.
fn flush(table: &mut SessionTable, slots: &[Slot]) -> bool {
    let mut sent = false;
    while let Some(record) = table.poll_transmit() {
        if let Some(slot) = slots.iter().find(|s| s.local == record.local) {
            let _ = slot.socket.send_to(&record.datagram, record.remote);
        }
        sent = true;
    }
    sent
}

/// Measures handshakes per second against `spec.remote` with `spec.dtls`'s credentials.
pub fn run(spec: &LoadSpec) -> io::Result<Measurement> {
    let mut config = spec
        .dtls
        .clone()
        .ok_or_else(|| io::Error::other("handshakes need DTLS credentials"))?;
    // The generator's own handshakes are bounded only in total, which must hold every slot.
    let slots = spec.sockets.max(1);
    config.limits.max_handshakes = config.limits.max_handshakes.max(slots);
    let mut table = SessionTable::new(config).map_err(|e| io::Error::other(e.to_string()))?;
    if let Some(cpu) = spec.cpu {
        pin_current_thread(cpu);
    }
    let remote = spec.remote;
    let origin = Instant::now();
    let start = origin + spec.warmup;
    let end = start + spec.duration;
    let mut slots = (0..slots)
        .map(|_| Slot::open(remote, &mut table))
        .collect::<io::Result<Vec<_>>>()?;
    let mut m = Measurement::empty(spec.duration)?;
    let mut cpu_at_start = None;
    let mut buf = vec![0u8; 2048];
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if cpu_at_start.is_none() && now >= start {
            cpu_at_start = Some(spec.server_pid.and_then(cpu_time));
        }
        let mut worked = flush(&mut table, &slots);
        for slot in &slots {
            while let Ok((n, from)) = slot.socket.recv_from(&mut buf) {
                table.handle_datagram(Instant::now(), slot.local, from, &buf[..n]);
                worked = true;
            }
        }
        while table.poll_received().is_some() {}
        if table.poll_timeout().is_some_and(|t| t <= now) {
            table.handle_timeout(now);
        }
        worked |= flush(&mut table, &slots);
        for i in 0..slots.len() {
            let local = slots[i].local;
            let done = table.is_established(local, remote);
            if !done && table.is_handshaking(local, remote) {
                continue;
            }
            if done {
                table.close(local, remote);
                flush(&mut table, &slots);
                let finished = Instant::now();
                if (start..end).contains(&finished) {
                    m.completed += 1;
                    let took = finished.duration_since(slots[i].started).as_nanos();
                    let _ = m
                        .latency
                        .record(u64::try_from(took).unwrap_or(u64::MAX).max(1));
                }
            } else if now >= start {
                m.failures += 1;
            }
            slots[i] = Slot::open(remote, &mut table)?;
            worked = true;
        }
        while table.poll_failure().is_some() {}
        if !worked && now >= start {
            m.generator_idle += Instant::now().saturating_duration_since(now);
        }
    }
    m.unanswered = slots.len() as u64;
    if let (Some(Some(before)), Some(pid)) = (cpu_at_start, spec.server_pid) {
        m.server_cpu = cpu_time(pid).map(|after| after.saturating_sub(before));
    }
    Ok(m)
}
