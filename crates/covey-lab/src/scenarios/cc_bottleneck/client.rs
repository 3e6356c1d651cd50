//! The clients of the cc-bottleneck experiment (paper §"Experiments and workloads"):
//! a *continuous* client runs its 50 CON GET exchanges back to back on one endpoint; a
//! *random* client runs 1–10 exchanges, then a fresh client (new endpoint, fresh RTO
//! state, new port) continues, until 50 are done. NSTART is 1, so one exchange at a time.

use std::net::SocketAddr;

use covey_core::{Header, MessageType, OptionNumber};
use covey_proto::{opt, App, AppContext, Duration, Event, Instant, Request, RequestParams};

/// The resource every client fetches.
pub const RESOURCE: &[u8] = b"sensor";

/// Timer value that starts the client.
const START_TIMER: u64 = 1;

/// The two client behaviours of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientKind {
    /// All exchanges on one endpoint, back to back.
    Continuous,
    /// Batches of 1–10 exchanges, each batch on a fresh endpoint.
    Random,
}

/// One client with its measurements.
#[derive(Debug)]
pub struct WorkloadClient {
    kind: ClientKind,
    server: SocketAddr,
    total: u32,
    start_spread: Duration,
    batch_left: u32,
    /// Exchanges ended (succeeded or failed).
    pub attempted: u32,
    /// Exchanges that got their response.
    pub succeeded: u32,
    /// Exchanges that failed (retry limit reached, or refused locally).
    pub failed: u32,
    /// When the first request went out.
    pub started_at: Option<Instant>,
    /// When the last exchange ended.
    pub finished_at: Option<Instant>,
    /// The longest retransmission timeout that expired (the gap between a CON and its
    /// retransmission, measured on the wire).
    pub rto_max: Duration,
    /// Endpoints this client used (1 for continuous clients).
    pub endpoints: u32,
    last_con: Option<(u16, Instant)>,
    restart: bool,
}

impl WorkloadClient {
    /// A client of `kind` that runs `total` exchanges against `server`, starting at a
    /// uniform random time within `start_spread` of the run's start.
    pub fn new(
        kind: ClientKind,
        server: SocketAddr,
        total: u32,
        start_spread: Duration,
    ) -> WorkloadClient {
        WorkloadClient {
            kind,
            server,
            total,
            start_spread,
            batch_left: 0,
            attempted: 0,
            succeeded: 0,
            failed: 0,
            started_at: None,
            finished_at: None,
            rto_max: Duration::ZERO,
            endpoints: 0,
            last_con: None,
            restart: false,
        }
    }

    /// The client's behaviour.
    pub fn kind(&self) -> ClientKind {
        self.kind
    }

    /// Time from the first request to the end of the last exchange.
    pub fn completion_time(&self) -> Option<Duration> {
        Some(self.finished_at? - self.started_at?)
    }

    fn send_next(&mut self, cx: &mut AppContext<'_>) {
        while self.attempted < self.total {
            let options = [opt(OptionNumber::URI_PATH, RESOURCE)];
            let request = Request {
                method: covey_core::Code::GET,
                options: &options,
                payload: &[],
            };
            match cx.send_request(self.server, &request, RequestParams::default()) {
                Ok(_) => return,
                Err(_) => {
                    self.failed += 1;
                    self.attempted += 1;
                }
            }
        }
        self.finish(cx.now);
    }

    fn finish(&mut self, now: Instant) {
        if self.finished_at.is_none() {
            self.finished_at = Some(now);
        }
    }

    fn exchange_ended(&mut self, cx: &mut AppContext<'_>) {
        self.attempted += 1;
        self.batch_left = self.batch_left.saturating_sub(1);
        if self.attempted >= self.total {
            self.finish(cx.now);
        } else if self.kind == ClientKind::Random && self.batch_left == 0 {
            self.restart = true;
        } else {
            self.send_next(cx);
        }
    }
}

impl WorkloadClient {
    /// Lab instrumentation: sees every datagram the client's endpoint sends, and measures
    /// each expired retransmission timeout as the gap between a CON and its retransmission.
    pub fn on_transmit(&mut self, now: Instant, datagram: &[u8]) {
        let Ok(header) = Header::parse(datagram) else {
            return;
        };
        if header.message_type != MessageType::Confirmable {
            return;
        }
        if let Some((mid, sent)) = self.last_con {
            if mid == header.message_id {
                self.rto_max = self.rto_max.max(now - sent);
            }
        }
        self.last_con = Some((header.message_id, now));
    }

    /// Whether every exchange has ended.
    pub fn is_done(&self) -> bool {
        self.finished_at.is_some()
    }

    /// Whether the client wants a fresh endpoint (a random client between batches).
    pub fn take_restart(&mut self) -> bool {
        std::mem::take(&mut self.restart)
    }
}

impl App for WorkloadClient {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.endpoints += 1;
        self.last_con = None;
        self.batch_left = match self.kind {
            ClientKind::Continuous => self.total,
            // 1 + floor(10·u), u uniform in [0, 1): uniform on 1..=10.
            ClientKind::Random => 1 + ((cx.random_f64() * 10.0) as u32).min(9),
        };
        if self.started_at.is_some() {
            self.send_next(cx);
            return;
        }
        let offset = (self.start_spread.as_nanos() as f64 * cx.random_f64()) as u64;
        if cx
            .set_timer(cx.now + Duration::from_nanos(offset), START_TIMER)
            .is_none()
        {
            self.started_at = Some(cx.now);
            self.send_next(cx);
        }
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Timer(START_TIMER) if self.started_at.is_none() => {
                self.started_at = Some(cx.now);
                self.send_next(cx);
            }
            Event::Response { last: true, .. } => {
                self.succeeded += 1;
                self.exchange_ended(cx);
            }
            Event::Failed { .. } => {
                self.failed += 1;
                self.exchange_ended(cx);
            }
            _ => {}
        }
    }
}
