//! The closed-loop load generator: each thread drives one `covey_proto::Endpoint` per client
//! socket in a tight, busy-polling loop, with batched send (sendmmsg) and receive (recvmmsg),
//! keeping `window` requests outstanding per socket.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use covey::dtls::DtlsConfig;
use covey::socket::{BatchSocket, PollSet, RecvBatch, SendBatch, SEND_BATCH_MAX};
use covey_core::{CoapOption, Code, OptionNumber};
use covey_proto::{
    Config, Endpoint, Event, Failure, LocalAddr, OscoreContextId, Request, RequestId, RequestParams,
};
use hdrhistogram::Histogram;

use super::dtls_link::DtlsLink;
use super::oscore_load;

/// Largest datagram the generator sends or accepts.
const MAX_DATAGRAM: usize = 1280;

/// How long requests still outstanding when the run ends may take to complete.
const DRAIN: Duration = Duration::from_secs(1);

/// What to send and how hard.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// The server.
    pub remote: SocketAddr,
    /// The request's options (Uri-Path, Uri-Query, ...), in ascending order.
    pub options: Vec<(OptionNumber, Vec<u8>)>,
    /// The method.
    pub method: Code,
    /// CON (true) or NON.
    pub confirmable: bool,
    /// Client sockets, each with its own local port and engine.
    pub sockets: usize,
    /// Requests outstanding per socket.
    pub window: usize,
    /// Generator threads; the sockets are dealt among them.
    pub threads: usize,
    /// Measured time.
    pub duration: Duration,
    /// Time run before measuring.
    pub warmup: Duration,
    /// CPU the generator threads are pinned to.
    pub cpu: Option<usize>,
    /// The client engines' message-ID reuse interval.
    pub mid_reuse: Duration,
    /// Process id of the server, to measure its CPU use during the measured time.
    pub server_pid: Option<u32>,
    /// DTLS credentials: each socket then speaks coaps over one session (set up in the
    /// warm-up).
    pub dtls: Option<DtlsConfig>,
    /// Protect every request with OSCORE, each socket under its own context
    /// ([`oscore_load::client_context`]).
    pub oscore: bool,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Responses that completed a request within the measured time.
    pub completed: u64,
    /// Of those, responses that were not 2.xx.
    pub error_responses: u64,
    /// The measured time.
    pub elapsed: Duration,
    /// CON retransmissions the client engines sent (warm-up and drain included).
    pub retransmissions: u64,
    /// Requests the engines gave up on (no ACK or response in time).
    pub timeouts: u64,
    /// Requests that failed otherwise (reset, overload, unreachable).
    pub failures: u64,
    /// Requests still unanswered after the drain period.
    pub unanswered: u64,
    /// Time within the measured period the generator found nothing to do (summed over its
    /// threads): near zero means the generator, not the server, may be the bottleneck.
    pub generator_idle: Duration,
    /// Generator threads that ran.
    pub threads: usize,
    /// CPU time (user and system) the server used during the measured time, if known.
    pub server_cpu: Option<Duration>,
    /// Request-to-response latency of the completed requests, in nanoseconds.
    pub latency: Histogram<u64>,
}

impl Measurement {
    /// Nothing measured yet, over `elapsed`, by one generator thread.
    pub fn empty(elapsed: Duration) -> io::Result<Measurement> {
        Ok(Measurement {
            completed: 0,
            error_responses: 0,
            elapsed,
            retransmissions: 0,
            timeouts: 0,
            failures: 0,
            unanswered: 0,
            generator_idle: Duration::ZERO,
            threads: 1,
            server_cpu: None,
            latency: Histogram::new_with_bounds(1, 60_000_000_000, 3)
                .map_err(|e| io::Error::other(e.to_string()))?,
        })
    }

    /// The server's CPU use during the measured time as a share of one CPU (0–1).
    pub fn server_cpu_share(&self) -> Option<f64> {
        let secs = self.elapsed.as_secs_f64();
        self.server_cpu
            .filter(|_| secs > 0.0)
            .map(|c| c.as_secs_f64() / secs)
    }

    /// The share of the generator's measured time spent waiting for responses (0–1).
    pub fn generator_idle_share(&self) -> f64 {
        let total = self.elapsed.as_secs_f64() * self.threads.max(1) as f64;
        if total > 0.0 {
            (self.generator_idle.as_secs_f64() / total).min(1.0)
        } else {
            0.0
        }
    }

    /// Completed requests per second.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.completed as f64 / secs
        } else {
            0.0
        }
    }
}

/// The engine configuration of one generator socket.
pub fn client_config(window: usize, mid_reuse: Duration) -> Config {
    let window = window.max(1);
    Config {
        transmission: covey_proto::TransmissionParameters {
            nstart: window,
            ..Default::default()
        },
        max_exchanges: window + 16,
        max_incoming: 16,
        max_events: 4 * window + 64,
        max_buffers: 4 * window + 64,
        max_peers: 4,
        // A load generator on loopback sends far more than 65 536 messages per
        // EXCHANGE_LIFETIME (247 s) to one server; the server tells requests apart by more
        // than the message ID, so the IDs may come round again much sooner.
        mid_reuse_interval: Some(covey_proto::Duration::from_nanos(
            mid_reuse.as_nanos().min(u128::from(u64::MAX)) as u64,
        )),
        ..Config::default()
    }
}

/// Runs the load and gathers the threads' results.
pub fn run(spec: &LoadSpec) -> io::Result<Measurement> {
    let threads = spec.threads.clamp(1, spec.sockets.max(1));
    // Each socket with its index among all, which names its OSCORE context.
    let mut groups: Vec<Vec<(usize, BatchSocket)>> = (0..threads).map(|_| Vec::new()).collect();
    let bind: SocketAddr = if spec.remote.is_ipv6() {
        "[::]:0".parse().expect("literal address")
    } else {
        "0.0.0.0:0".parse().expect("literal address")
    };
    for i in 0..spec.sockets.max(1) {
        groups[i % threads].push((i, BatchSocket::bind(bind)?));
    }
    let origin = Instant::now();
    let start = origin + spec.warmup;
    let end = start + spec.duration;
    let ready = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = groups
        .into_iter()
        .enumerate()
        .map(|(t, sockets)| {
            let spec = spec.clone();
            let ready = ready.clone();
            std::thread::Builder::new()
                .name(format!("bench-{t}"))
                .spawn(move || {
                    if let Some(cpu) = spec.cpu {
                        pin_current_thread(cpu);
                    }
                    ready.wait();
                    generate(&spec, sockets, t as u64, origin, start, end)
                })
        })
        .collect::<io::Result<_>>()?;
    // The server's CPU time over the measured period, read while the generators run.
    let server_cpu = spec.server_pid.and_then(|pid| {
        std::thread::sleep(start.saturating_duration_since(Instant::now()));
        let before = cpu_time(pid)?;
        std::thread::sleep(end.saturating_duration_since(Instant::now()));
        let after = cpu_time(pid)?;
        Some(after.saturating_sub(before))
    });
    let mut total: Option<Measurement> = None;
    for h in handles {
        let m = h
            .join()
            .map_err(|_| io::Error::other("a generator thread panicked"))??;
        total = Some(match total {
            None => m,
            Some(mut acc) => {
                acc.completed += m.completed;
                acc.error_responses += m.error_responses;
                acc.retransmissions += m.retransmissions;
                acc.timeouts += m.timeouts;
                acc.failures += m.failures;
                acc.unanswered += m.unanswered;
                acc.generator_idle += m.generator_idle;
                acc.latency
                    .add(&m.latency)
                    .map_err(|e| io::Error::other(e.to_string()))?;
                acc
            }
        });
    }
    let mut m = total.ok_or_else(|| io::Error::other("no generator thread"))?;
    m.elapsed = spec.duration;
    m.threads = threads;
    m.server_cpu = server_cpu;
    Ok(m)
}

/// Pins the calling thread to `cpu` (sched_setaffinity); false when the CPU does not exist.
pub fn pin_current_thread(cpu: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id: cpu })
}

/// Send times of outstanding requests, keyed by request (a cheap hash: the keys are the
/// engine's own small handles, not attacker-controlled).
type Started = HashMap<RequestId, u64, BuildHasherDefault<IdHasher>>;

/// FxHash-style mixing of the few integers in a request handle.
#[derive(Debug, Default, Clone, Copy)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// One client socket and the engine that speaks through it.
struct Conn {
    socket: BatchSocket,
    ep: Endpoint,
    out: SendBatch,
    rx: RecvBatch,
    /// Send time (ns since the origin) of each outstanding request.
    started: Started,
    /// The socket's DTLS session, for coaps.
    dtls: Option<DtlsLink>,
    /// A plaintext datagram on its way into the DTLS session.
    plaintext: Vec<u8>,
    /// The context its requests are protected with, for OSCORE.
    oscore: Option<OscoreContextId>,
}

fn generate(
    spec: &LoadSpec,
    sockets: Vec<(usize, BatchSocket)>,
    thread: u64,
    origin: Instant,
    start: Instant,
    end: Instant,
) -> io::Result<Measurement> {
    let window = spec.window.max(1);
    let options: Vec<CoapOption<'_>> = spec
        .options
        .iter()
        .map(|(number, value)| CoapOption {
            number: *number,
            value,
        })
        .collect();
    let request = Request {
        method: spec.method,
        options: &options,
        payload: &[],
    };
    let params = RequestParams {
        confirmable: spec.confirmable,
        ..RequestParams::default()
    };
    let mut conns: Vec<Conn> = sockets
        .into_iter()
        .enumerate()
        .map(|(i, (index, socket))| {
            let seed = (thread << 32) ^ (i as u64) ^ 0x5eed_c0de_u64.rotate_left(17);
            let dtls = match &spec.dtls {
                Some(config) => Some(DtlsLink::new(config.clone(), socket.as_std())?),
                None => None,
            };
            let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
            let mut ep = Endpoint::new(client_config(window, spec.mid_reuse), seed)
                .map_err(|e| invalid(e.to_string()))?;
            let oscore = match spec.oscore {
                true => {
                    let context =
                        oscore_load::client_context(index).map_err(|e| invalid(e.to_string()))?;
                    Some(
                        ep.add_oscore_context(context)
                            .map_err(|e| invalid(e.to_string()))?,
                    )
                }
                false => None,
            };
            Ok(Conn {
                rx: socket.recv_batch(MAX_DATAGRAM),
                socket,
                ep,
                out: SendBatch::new(SEND_BATCH_MAX, MAX_DATAGRAM),
                started: Started::with_capacity_and_hasher(window * 2, Default::default()),
                dtls,
                plaintext: vec![0; MAX_DATAGRAM],
                oscore,
            })
        })
        .collect::<io::Result<_>>()?;
    let start_ns = nanos(origin, start);
    let end_ns = nanos(origin, end);
    let sockets: Vec<&BatchSocket> = conns.iter().map(|c| &c.socket).collect();
    let mut poll_set = PollSet::new(&sockets);
    drop(sockets);
    let drain_until = end + DRAIN;
    let mut idle = Duration::ZERO;
    let mut idle_since: Option<Instant> = None;
    let mut m = Measurement::empty(Duration::ZERO)?;
    loop {
        let wall = Instant::now();
        if let Some(since) = idle_since.take() {
            // The previous pass found nothing to do: the generator had time to spare.
            if wall > start && wall <= end {
                idle += wall.saturating_duration_since(since.max(start));
            }
        }
        let issuing = wall < end;
        if !issuing && (wall >= drain_until || conns.iter().all(|c| c.started.is_empty())) {
            break;
        }
        let mut worked = false;
        let now_ns = nanos(origin, wall);
        let now = covey_proto::Instant::from_nanos(now_ns);
        for c in conns.iter_mut() {
            if issuing {
                while c.started.len() < window {
                    let sent = match c.oscore {
                        Some(context) => {
                            c.ep.send_protected_request(now, spec.remote, &request, params, context)
                        }
                        None => c.ep.send_request(now, spec.remote, &request, params),
                    };
                    match sent {
                        Ok(id) => {
                            c.started.insert(id, now_ns);
                        }
                        Err(_) => break,
                    }
                }
            }
            if let Some(link) = &mut c.dtls {
                while let Some(t) = c.ep.poll_transmit(now, &mut c.plaintext) {
                    link.send(t.destination, &c.plaintext[..t.size]);
                }
                link.tick();
                // Records that do not fit wait in the table for the next pass.
                while !c.out.is_full() {
                    match link.poll_record() {
                        Some(r) => c.out.push(r.remote, &r.datagram),
                        None => break,
                    };
                }
            } else {
                while let Some(buf) = c.out.next_buf() {
                    match c.ep.poll_transmit(now, buf) {
                        Some(t) => {
                            c.out.commit(t.destination, t.size);
                        }
                        None => break,
                    }
                }
            }
            if !c.out.is_empty() {
                match c.socket.send(&mut c.out) {
                    Ok(_) => worked = true,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => c.out.skip(),
                }
            }
        }
        // One poll for every socket instead of an empty receive call per idle socket.
        let readable = poll_set.poll(Duration::ZERO)?;
        let done_ns = if readable > 0 {
            nanos(origin, Instant::now())
        } else {
            now_ns
        };
        let done = covey_proto::Instant::from_nanos(done_ns);
        for (i, c) in conns.iter_mut().enumerate() {
            if readable > 0 && poll_set.is_readable(i) {
                match c.socket.recv(&mut c.rx) {
                    Ok(n) => {
                        worked = true;
                        for (from, datagram) in c.rx.received(n) {
                            match &mut c.dtls {
                                Some(link) => {
                                    for plaintext in link.receive(from, datagram) {
                                        c.ep.handle_datagram(
                                            done,
                                            from,
                                            LocalAddr::UNICAST,
                                            &plaintext,
                                        );
                                    }
                                }
                                None => {
                                    c.ep.handle_datagram(done, from, LocalAddr::UNICAST, datagram);
                                }
                            }
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if c.ep.poll_timeout().is_some_and(|t| t <= done) {
                c.ep.handle_timeout(done);
            }
            while let Some(event) = c.ep.poll_event() {
                match event {
                    Event::Response { id, key, last } => {
                        if !last {
                            continue;
                        }
                        let success =
                            c.ep.response(key)
                                .is_some_and(|r| r.message.code().is_success());
                        let Some(sent) = c.started.remove(&id) else {
                            continue;
                        };
                        if (start_ns..end_ns).contains(&done_ns) {
                            m.completed += 1;
                            if !success {
                                m.error_responses += 1;
                            }
                            let _ = m.latency.record(done_ns.saturating_sub(sent).max(1));
                        }
                    }
                    Event::Failed { id, failure } => {
                        c.started.remove(&id);
                        match failure {
                            Failure::Timeout => m.timeouts += 1,
                            _ => m.failures += 1,
                        }
                    }
                    _ => {}
                }
            }
        }
        if !worked {
            idle_since = Some(wall);
        }
    }
    m.generator_idle = idle;
    for c in &conns {
        m.unanswered += c.started.len() as u64;
        m.retransmissions += c.ep.stats().total_retransmissions();
    }
    Ok(m)
}

/// User plus system CPU time of process `pid` (all threads), from `/proc/PID/stat`.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // USER_HZ is 100 on every Linux architecture covey runs on.
    Some(Duration::from_millis((utime + stime) * 10))
}

fn nanos(origin: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(origin).as_nanos()).unwrap_or(u64::MAX)
}
