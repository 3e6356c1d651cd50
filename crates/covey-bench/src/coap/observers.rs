//! `covey bench --observers N`: registers N observations from a few sockets and keeps them
//! alive (acknowledging CON notifications), so the server's memory can be read under them.

use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use covey::socket::{BatchSocket, SendBatch, SEND_BATCH_MAX};
use covey_core::{CoapOption, Code, OptionNumber};
use covey_proto::{Endpoint, Event, LocalAddr, Request, RequestId, RequestParams};

/// Registrations in flight per socket at once.
const REGISTER_WINDOW: usize = 64;

/// How long registering may take in total.
const REGISTER_LIMIT: Duration = Duration::from_secs(60);

/// What to observe, how many times and for how long.
#[derive(Debug, Clone)]
pub struct ObserveSpec {
    /// The server.
    pub remote: SocketAddr,
    /// The resource's Uri-Path (and other) options, ascending.
    pub options: Vec<(OptionNumber, Vec<u8>)>,
    /// Observations to register.
    pub count: usize,
    /// Client sockets they are spread over.
    pub sockets: usize,
    /// How long to keep them once registered.
    pub hold: Duration,
}

/// What the observers saw.
#[derive(Debug, Clone, Default)]
pub struct ObserveOutcome {
    /// Observations the server accepted (first response carried Observe).
    pub registered: u64,
    /// Requests answered without Observe (not registered).
    pub refused: u64,
    /// Requests that failed (timeout, reset).
    pub failed: u64,
    /// Time until every request was answered.
    pub register_time: Duration,
    /// Notifications received while holding.
    pub notifications: u64,
    /// How long they were held.
    pub held: Duration,
}

/// Registers the observations, calls `registered` once they are all answered (e.g. to read
/// the server's memory), keeps them for `hold`, calls `held`, and returns.
pub fn run(
    spec: &ObserveSpec,
    mut registered: impl FnMut(&ObserveOutcome),
    mut held: impl FnMut(&ObserveOutcome),
) -> io::Result<ObserveOutcome> {
    let sockets = spec.sockets.max(1);
    let per_socket = spec.count.div_ceil(sockets);
    let bind: SocketAddr = if spec.remote.is_ipv6() {
        "[::]:0".parse().expect("literal address")
    } else {
        "0.0.0.0:0".parse().expect("literal address")
    };
    let mut options: Vec<CoapOption<'_>> = spec
        .options
        .iter()
        .map(|(number, value)| CoapOption {
            number: *number,
            value,
        })
        .collect();
    options.push(CoapOption {
        number: OptionNumber::OBSERVE,
        value: &[],
    });
    let request = Request {
        method: Code::GET,
        options: &options,
        payload: &[],
    };
    struct Client {
        socket: BatchSocket,
        ep: Endpoint,
        to_start: usize,
        pending: usize,
        out: SendBatch,
        rx: covey::socket::RecvBatch,
        observing: HashSet<RequestId>,
    }
    let mut clients = Vec::with_capacity(sockets);
    let mut left = spec.count;
    for i in 0..sockets {
        let n = per_socket.min(left);
        left -= n;
        let mut config = super::load::client_config(REGISTER_WINDOW, Duration::from_secs(1));
        config.max_exchanges = n + REGISTER_WINDOW + 16;
        config.max_events = 4 * n + 256;
        let socket = BatchSocket::bind(bind)?;
        clients.push(Client {
            rx: socket.recv_batch(1280),
            socket,
            ep: Endpoint::new(config, 0x0b5e_0000 + i as u64)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
            to_start: n,
            pending: 0,
            out: SendBatch::new(SEND_BATCH_MAX, 1280),
            observing: HashSet::with_capacity(n),
        });
    }
    let origin = Instant::now();
    let mut outcome = ObserveOutcome::default();
    let mut phase_registered = false;
    let mut hold_start = origin;
    loop {
        let wall = Instant::now();
        if !phase_registered {
            let all_answered = clients.iter().all(|c| c.to_start == 0 && c.pending == 0);
            if all_answered || wall.duration_since(origin) > REGISTER_LIMIT {
                phase_registered = true;
                outcome.register_time = wall.duration_since(origin);
                registered(&outcome);
                hold_start = Instant::now();
            }
        } else if wall.duration_since(hold_start) >= spec.hold {
            outcome.held = wall.duration_since(hold_start);
            held(&outcome);
            return Ok(outcome);
        }
        let mut idle = true;
        for c in clients.iter_mut() {
            let now = covey_proto::Instant::from_nanos(origin.elapsed().as_nanos() as u64);
            while c.to_start > 0 && c.pending < REGISTER_WINDOW {
                if c.ep
                    .send_request(now, spec.remote, &request, RequestParams::default())
                    .is_err()
                {
                    break;
                }
                c.to_start -= 1;
                c.pending += 1;
            }
            while let Some(buf) = c.out.next_buf() {
                match c.ep.poll_transmit(now, buf) {
                    Some(t) => {
                        c.out.commit(t.destination, t.size);
                    }
                    None => break,
                }
            }
            if !c.out.is_empty() {
                match c.socket.send(&mut c.out) {
                    Ok(_) => idle = false,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => c.out.skip(),
                }
            }
            match c.socket.recv(&mut c.rx) {
                Ok(n) => {
                    idle = false;
                    for (from, datagram) in c.rx.received(n) {
                        c.ep.handle_datagram(now, from, LocalAddr::UNICAST, datagram);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            while let Some(event) = c.ep.poll_event() {
                match event {
                    Event::Response { id, key, last } => {
                        let observed = c.ep.response(key).is_some_and(|r| {
                            r.message.code().is_success() && r.message.observe().is_some()
                        });
                        if c.observing.contains(&id) {
                            // A notification of an established observation.
                            outcome.notifications += 1;
                            if last {
                                c.observing.remove(&id);
                            }
                        } else if observed && !last {
                            c.observing.insert(id);
                            c.pending = c.pending.saturating_sub(1);
                            outcome.registered += 1;
                        } else {
                            c.pending = c.pending.saturating_sub(1);
                            outcome.refused += 1;
                        }
                    }
                    Event::Failed { id, .. } => {
                        if !c.observing.remove(&id) {
                            c.pending = c.pending.saturating_sub(1);
                        }
                        outcome.failed += 1;
                    }
                    _ => {}
                }
            }
            if c.ep.poll_timeout().is_some_and(|t| t <= now) {
                c.ep.handle_timeout(now);
            }
        }
        if idle && phase_registered {
            // Holding: notifications come about once a second, no need to spin.
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
