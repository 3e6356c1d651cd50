//! The scenario's one App: it answers GET /time with a 20-byte text (the size of
//! `covey serve`'s current time), and, given a server, keeps one CON GET /time outstanding
//! there, recording each request's completion time while the measurement window is open.

use std::net::SocketAddr;

use covey_core::{Code, OptionNumber};
use covey_proto::{opt, App, AppContext, Event, Instant, Request, RequestParams};

use crate::scenarios::cc_bottleneck::server::answer_get;

/// The path requested and served.
pub const PATH: &[u8] = b"time";
/// The representation served: as long as an RFC 3339 UTC time.
pub const REPRESENTATION: &[u8] = b"2026-01-01T00:00:00Z";

/// A server, and a continuous client when it has a server to ask.
#[derive(Debug)]
pub struct Peer {
    server: Option<SocketAddr>,
    measure_from: Instant,
    stop_at: Instant,
    sent_at: Option<Instant>,
    /// Completion times (seconds) of requests answered inside the window.
    pub completion_s: Vec<f64>,
    /// Requests that failed (retry limit reached).
    pub failed: u64,
}

impl Peer {
    /// A server only.
    pub fn server() -> Peer {
        Peer {
            server: None,
            measure_from: Instant::ZERO,
            stop_at: Instant::ZERO,
            sent_at: None,
            completion_s: Vec::new(),
            failed: 0,
        }
    }

    /// A client of `server` that measures requests answered from `measure_from` until
    /// `stop_at`, and sends none after `stop_at`.
    pub fn client(server: SocketAddr, measure_from: Instant, stop_at: Instant) -> Peer {
        Peer {
            server: Some(server),
            measure_from,
            stop_at,
            ..Peer::server()
        }
    }

    /// Whether the client has stopped (a server is always done).
    pub fn is_done(&self) -> bool {
        self.server.is_none() || self.sent_at.is_none()
    }

    fn send(&mut self, cx: &mut AppContext<'_>) {
        let Some(server) = self.server else {
            return;
        };
        self.sent_at = None;
        if cx.now >= self.stop_at {
            return;
        }
        let options = [opt(OptionNumber::URI_PATH, PATH)];
        let request = Request {
            method: Code::GET,
            options: &options,
            payload: &[],
        };
        if cx
            .send_request(server, &request, RequestParams::default())
            .is_ok()
        {
            self.sent_at = Some(cx.now);
        }
    }
}

impl App for Peer {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.send(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Request(id) => {
                answer_get(cx, id, REPRESENTATION);
            }
            Event::Response { last: true, .. } => {
                if let Some(sent) = self.sent_at {
                    // As `covey bench` counts: every request completed inside the window.
                    if (self.measure_from..self.stop_at).contains(&cx.now) {
                        self.completion_s.push((cx.now - sent).as_secs_f64());
                    }
                }
                self.send(cx);
            }
            Event::Failed { .. } => {
                self.failed += 1;
                self.send(cx);
            }
            _ => {}
        }
    }
}
