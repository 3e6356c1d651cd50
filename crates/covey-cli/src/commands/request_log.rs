//! The request log of `covey serve -v` and `covey gateway -v`: one line per request (peer,
//! method, path with its Block1/Block2 values, response code with an error's diagnostic, time
//! to answer), as `coap-server -v` prints; `-vv` adds every datagram. Built on the driver's
//! trace tap, so it costs nothing unless asked for.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use covey::driver::TraceFn;
use covey::{Trace, TraceDirection};
use covey_core::{Code, Message};

use crate::render::message_text::{self, code_label};

/// The most characters of a diagnostic payload a log line shows.
const MAX_DIAGNOSTIC: usize = 120;

/// Requests waiting for their response; beyond this many, old ones are forgotten.
const MAX_PENDING: usize = 4096;

/// How long an unanswered request is remembered once the table is full.
const FORGET_AFTER: Duration = Duration::from_secs(60);

/// A request seen but not yet answered.
struct Pending {
    method: Code,
    target: String,
    at: Instant,
}

/// The trace callback logging requests at `verbose` (1: requests, 2 and more: datagrams too);
/// `None` for 0.
pub fn tracer(verbose: u8) -> Option<TraceFn> {
    if verbose == 0 {
        return None;
    }
    let pending: Mutex<HashMap<(SocketAddr, Vec<u8>), Pending>> = Mutex::default();
    Some(Arc::new(move |t: &Trace<'_>| {
        let Ok(message) = Message::parse(t.datagram) else {
            tracing::debug!("{} {}: unparseable datagram", arrow(t), t.peer);
            return;
        };
        if verbose >= 2 {
            let text = message_text::render(&message, true);
            tracing::debug!("{} {} {}", arrow(t), t.peer, text.trim_end());
        }
        let key = (t.peer, message.token_bytes().to_vec());
        let mut pending = pending.lock().unwrap_or_else(|e| e.into_inner());
        match t.direction {
            TraceDirection::Received if message.code().is_request() => {
                if pending.len() >= MAX_PENDING {
                    pending.retain(|_, p| p.at.elapsed() < FORGET_AFTER);
                    if pending.len() >= MAX_PENDING {
                        pending.clear();
                    }
                }
                let request = Pending {
                    method: message.code(),
                    target: format!("{}{}", target(&message), blocks(&message)),
                    at: Instant::now(),
                };
                pending.insert(key, request);
            }
            TraceDirection::Sent if message.code().is_response() => {
                if let Some(p) = pending.remove(&key) {
                    let ms = p.at.elapsed().as_secs_f64() * 1000.0;
                    tracing::info!(
                        "{} {} {} -> {}{} in {ms:.1} ms",
                        t.peer,
                        code_label(p.method),
                        p.target,
                        code_label(message.code()),
                        diagnostic(&message)
                    );
                }
            }
            _ => {}
        }
    }))
}

/// An error response's diagnostic payload, quoted and escaped, e.g. ` "Replay detected"`, so
/// the log says why a request was refused; empty for other responses.
fn diagnostic(message: &Message<'_>) -> String {
    if !message.code().is_error() || message.payload().is_empty() {
        return String::new();
    }
    let text = String::from_utf8_lossy(message.payload());
    let shown: String = text.chars().take(MAX_DIAGNOSTIC).collect();
    format!(" {shown:?}")
}

/// The Block1 and Block2 options of a request, e.g. ` [Block2 #3 of 64 B]`, so the requests
/// of one block-wise transfer tell apart in the log.
fn blocks(message: &Message<'_>) -> String {
    let mut out = String::new();
    for (name, block) in [("Block1", message.block1()), ("Block2", message.block2())] {
        if let Some(b) = block {
            let more = if b.more { ", more" } else { "" };
            out.push_str(&format!(" [{name} #{} of {} B{more}]", b.num, b.size()));
        }
    }
    out
}

fn arrow(t: &Trace<'_>) -> &'static str {
    match t.direction {
        TraceDirection::Sent => "->",
        TraceDirection::Received => "<-",
    }
}

/// `/a/b?q` with `%` and `/` inside a segment escaped, so one segment `a/b` shows as `a%2Fb`.
fn target(message: &Message<'_>) -> String {
    let mut out = String::new();
    for segment in message.uri_path() {
        out.push('/');
        out.push_str(&segment.replace('%', "%25").replace('/', "%2F"));
    }
    if out.is_empty() {
        out.push('/');
    }
    for (i, query) in message.uri_query().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(query);
    }
    out
}
