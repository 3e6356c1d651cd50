//! The client of the fading-goodput experiment: 100 consecutive CON GETs of one resource,
//! each sent when the previous transaction has ended (response or failure).

use std::net::SocketAddr;

use covey_core::{Code, OptionNumber};
use covey_proto::{opt, App, AppContext, Event, Instant, Request, RequestParams};

/// The resource the client fetches.
pub const RESOURCE: &[u8] = b"data";

/// A client running consecutive transactions, with what it measured.
#[derive(Debug)]
pub struct TransferClient {
    server: SocketAddr,
    total: u32,
    /// Transactions that ended with the whole representation.
    pub succeeded: u32,
    /// Transactions that failed (retransmissions exhausted, or refused locally).
    pub failed: u32,
    /// Payload bytes received in successful transactions.
    pub bytes: u64,
    /// When the first request went out.
    pub started_at: Option<Instant>,
    /// When the last transaction ended.
    pub finished_at: Option<Instant>,
}

impl TransferClient {
    /// A client that runs `total` transactions against `server`.
    pub fn new(server: SocketAddr, total: u32) -> TransferClient {
        TransferClient {
            server,
            total,
            succeeded: 0,
            failed: 0,
            bytes: 0,
            started_at: None,
            finished_at: None,
        }
    }

    /// Whether every transaction has ended.
    pub fn is_done(&self) -> bool {
        self.finished_at.is_some()
    }

    /// Seconds from the first request to the end of the last transaction.
    pub fn elapsed_s(&self) -> Option<f64> {
        Some((self.finished_at? - self.started_at?).as_secs_f64())
    }

    fn send_next(&mut self, cx: &mut AppContext<'_>) {
        while self.succeeded + self.failed < self.total {
            let options = [opt(OptionNumber::URI_PATH, RESOURCE)];
            let request = Request {
                method: Code::GET,
                options: &options,
                payload: &[],
            };
            let sent = cx.send_request(self.server, &request, RequestParams::default());
            if sent.is_ok() {
                return;
            }
            self.failed += 1;
        }
        self.finished_at.get_or_insert(cx.now);
    }
}

impl App for TransferClient {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.started_at = Some(cx.now);
        self.send_next(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Response { key, last, .. } => {
                if !last {
                    return;
                }
                let len = cx.endpoint.response(key).map_or(0, |r| r.payload().len());
                self.bytes += len as u64;
                self.succeeded += 1;
                self.send_next(cx);
            }
            Event::Failed { .. } => {
                self.failed += 1;
                self.send_next(cx);
            }
            _ => {}
        }
    }
}
