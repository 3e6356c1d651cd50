//! Showing responses: pretty on a terminal, the raw payload when piped, JSON with `--json`,
//! and the exchange trace of `-v` on standard error.

use std::io::Write;
use std::time::Duration;

use covey::{Response, Trace, TraceDirection};
use covey_core::{CoapOption, Message};
use serde_json::json;

use crate::output::{print, stdout_is_terminal};
use crate::render::message_json;
use crate::render::message_text::{self, code_label};
use crate::render::payload::Payload;

/// How responses are shown.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    /// One JSON object per line.
    pub json: bool,
    /// Standard output is a terminal.
    pub terminal: bool,
    /// Multicast: every response, whatever its code, follows a `CODE from SOURCE` line on
    /// standard output, since the output is a list of who answered what.
    pub multicast: bool,
    /// `-v`: the status line of every successful response goes to standard error.
    pub verbose: bool,
    /// Several responses follow one another: end each raw payload with a newline.
    pub separated: bool,
}

impl Printer {
    /// A printer for the current standard output.
    pub fn new(json: bool, verbose: bool) -> Printer {
        Printer {
            json,
            terminal: stdout_is_terminal(),
            multicast: false,
            verbose,
            separated: false,
        }
    }

    /// A printer for a stream of responses (observe, multicast).
    pub fn for_stream(json: bool, multicast: bool, verbose: bool) -> Printer {
        Printer {
            multicast,
            separated: true,
            ..Printer::new(json, verbose)
        }
    }

    /// Prints one response received `elapsed` after the request was sent. Status lines go
    /// to standard error (piped output is the payload alone), and only for successes: an
    /// error is told once, by the command's exit message.
    pub fn response(&self, r: &Response, elapsed: Duration) -> anyhow::Result<()> {
        if self.json {
            return print(&(json_of(r, elapsed).to_string() + "\n"));
        }
        let source = r.source.map_or_else(String::new, |s| s.to_string());
        let ms = elapsed.as_secs_f64() * 1000.0;
        let status = format!("{} from {source} in {ms:.1} ms\n", code_label(r.code));
        if self.multicast {
            print(&status)?;
        } else if r.is_success() && (self.verbose || (self.terminal && r.payload.is_empty())) {
            let _ = std::io::stderr().lock().write_all(status.as_bytes());
        }
        if !self.terminal {
            // Piped: the payload exactly as received.
            let mut out = std::io::stdout().lock();
            let newline: &[u8] = if self.separated && !r.payload.ends_with(b"\n") {
                b"\n"
            } else {
                b""
            };
            let written = out
                .write_all(&r.payload)
                .and_then(|()| out.write_all(newline))
                .and_then(|()| out.flush());
            return match written {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                other => Ok(other?),
            };
        }
        if r.payload.is_empty() || !r.is_success() {
            return Ok(());
        }
        let payload = Payload::new(&r.payload, r.content_format());
        print(&payload.body_text(true))
    }
}

/// The machine form of a response.
pub fn json_of(r: &Response, elapsed: Duration) -> serde_json::Value {
    let options: Vec<serde_json::Value> = r
        .options
        .iter()
        .map(|(number, value)| message_json::option(&CoapOption { number, value }))
        .collect();
    let payload = match r.payload.as_slice() {
        [] => serde_json::Value::Null,
        bytes => Payload::new(bytes, r.content_format()).to_json(),
    };
    json!({
        "code": format!("{}.{:02}", r.code.class(), r.code.detail()),
        "code_name": r.code.name(),
        "source": r.source.map(|s| s.to_string()),
        "elapsed_ms": (elapsed.as_secs_f64() * 1e6).round() / 1e3,
        "options": options,
        "payload": payload,
    })
}

/// Prints a traced datagram to standard error (the `-v` exchange trace).
pub fn trace(t: &Trace<'_>) {
    let arrow = match t.direction {
        TraceDirection::Sent => "->",
        TraceDirection::Received => "<-",
    };
    let body = match Message::parse(t.datagram) {
        Ok(m) => message_text::render(&m, true),
        Err(e) => format!("unparseable datagram of {} bytes: {e}\n", t.datagram.len()),
    };
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{arrow} {} {body}", t.peer);
}
