//! The client of the server-workload experiment: NON GETs at a fixed rate, request k leaving
//! at k / rate whatever happened to the earlier ones, each answered or not.

use std::collections::HashMap;
use std::net::SocketAddr;

use covey_core::{Code, OptionNumber};
use covey_proto::{
    opt, App, AppContext, Duration, Event, Instant, Request, RequestId, RequestParams,
};

/// The resource the client asks for.
pub const RESOURCE: &[u8] = b"sensor";

/// Timer value of the next send.
const SEND_TIMER: u64 = 1;

/// A fixed-rate NON client with its counts.
#[derive(Debug)]
pub struct RateClient {
    server: SocketAddr,
    interval_ns: f64,
    total: u32,
    started_at: Instant,
    /// Requests handed to the engine.
    pub sent: u32,
    /// Requests answered with a response.
    pub answered: u32,
    /// Requests the engine gave up on (no response within its NON response timeout).
    pub unanswered: u32,
    /// Requests the engine refused at once (its tables full).
    pub refused: u32,
    /// Sum over the answered requests of the time from send to response, seconds.
    pub latency_sum_s: f64,
    /// When each request still waiting for its response was handed to the engine.
    sent_at: HashMap<RequestId, Instant>,
}

impl RateClient {
    /// A client sending `total` requests to `server` at `rate` requests per second.
    pub fn new(server: SocketAddr, rate: f64, total: u32) -> RateClient {
        RateClient {
            server,
            interval_ns: 1e9 / rate.max(1e-3),
            total,
            started_at: Instant::ZERO,
            sent: 0,
            answered: 0,
            unanswered: 0,
            refused: 0,
            latency_sum_s: 0.0,
            sent_at: HashMap::new(),
        }
    }

    /// Whether every request has been sent and has its outcome.
    pub fn is_done(&self) -> bool {
        self.sent >= self.total && self.answered + self.unanswered + self.refused >= self.total
    }

    /// When request `k` is due (k / rate after the start, so rounding does not accumulate).
    fn due(&self, k: u32) -> Instant {
        let offset = (f64::from(k) * self.interval_ns).round() as u64;
        self.started_at + Duration::from_nanos(offset)
    }

    fn send(&mut self, cx: &mut AppContext<'_>) {
        let options = [opt(OptionNumber::URI_PATH, RESOURCE)];
        let request = Request {
            method: Code::GET,
            options: &options,
            payload: &[],
        };
        self.sent += 1;
        match cx.send_request(self.server, &request, RequestParams::NON) {
            Ok(id) => {
                self.sent_at.insert(id, cx.now);
            }
            Err(_) => self.refused += 1,
        }
        if self.sent < self.total {
            let at = self.due(self.sent);
            let _ = cx.set_timer(at, SEND_TIMER);
        }
    }
}

impl App for RateClient {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.started_at = cx.now;
        if self.total > 0 {
            self.send(cx);
        }
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Timer(SEND_TIMER) => self.send(cx),
            Event::Response { id, last: true, .. } => {
                self.answered += 1;
                if let Some(at) = self.sent_at.remove(&id) {
                    self.latency_sum_s += (cx.now - at).as_nanos() as f64 / 1e9;
                }
            }
            Event::Failed { id, .. } => {
                self.unanswered += 1;
                self.sent_at.remove(&id);
            }
            _ => {}
        }
    }
}
