//! What a client shows while its request goes unanswered: a line on standard error at each
//! retransmission (with `--progress`, or when standard error is a terminal), and in the final
//! timeout how long it waited and how often the request was sent.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use covey::{Trace, TraceDirection};
use covey_core::{Message, MessageType};

/// The default of `-B`: RFC 7252's MAX_TRANSMIT_WAIT with the engine's own transmission
/// parameters (ACK_TIMEOUT, ACK_RANDOM_FACTOR, MAX_RETRANSMIT), after which it gives up anyway.
pub fn default_timeout() -> f64 {
    covey::Config::default()
        .transmission
        .max_transmit_wait()
        .as_secs_f64()
}

/// The transmissions of the request being sent now (the latest message ID).
#[derive(Debug, Default)]
struct Transmissions {
    message_id: Option<u16>,
    count: u32,
    last_at: Option<Instant>,
}

/// Counts the transmissions of the client's requests, from the driver's trace.
#[derive(Debug, Clone)]
pub struct Progress {
    latest: Arc<Mutex<Transmissions>>,
    max_retransmit: u8,
    show: bool,
}

impl Progress {
    /// A counter for requests retransmitted up to `max_retransmit` times; it reports each
    /// retransmission when `forced`, or when standard error is a terminal.
    pub fn new(max_retransmit: u8, forced: bool) -> Progress {
        Progress {
            latest: Arc::default(),
            max_retransmit,
            show: forced || std::io::stderr().is_terminal(),
        }
    }

    /// Takes a traced datagram: a request sent again is counted and, when shown, reported
    /// with when the next one is due (each timeout doubles the one before).
    pub fn observe(&self, t: &Trace<'_>) {
        if t.direction != TraceDirection::Sent {
            return;
        }
        let Ok(message) = Message::parse(t.datagram) else {
            return;
        };
        if !message.code().is_request() {
            return;
        }
        let now = Instant::now();
        let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        if latest.message_id != Some(message.message_id()) {
            *latest = Transmissions {
                message_id: Some(message.message_id()),
                count: 1,
                last_at: Some(now),
            };
            return;
        }
        let waited = latest.last_at.map_or(Duration::ZERO, |at| now - at);
        latest.count += 1;
        latest.last_at = Some(now);
        if self.show && message.message_type() == MessageType::Confirmable {
            let line = retransmission_line(latest.count - 1, self.max_retransmit, waited * 2);
            let _ = writeln!(std::io::stderr().lock(), "covey: {line}");
        }
    }

    /// How many times the latest request was sent.
    pub fn transmissions(&self) -> u32 {
        self.latest.lock().map_or(0, |l| l.count)
    }
}

/// The line for retransmission `n` of `max`, the next one (or, after the last, giving up)
/// being `next` away.
pub fn retransmission_line(n: u32, max: u8, next: Duration) -> String {
    let after = match n >= u32::from(max) {
        true => "giving up",
        false => "next",
    };
    format!(
        "no reply yet: retransmission {n} of {max} sent, {after} in {:.1} s",
        next.as_secs_f64()
    )
}

/// The final timeout: how long the client waited and how often it sent the request.
pub fn timeout_message(peer: &str, waited: Duration, transmissions: u32) -> String {
    let times = match transmissions {
        1 => "once".to_string(),
        n => format!("{n} times"),
    };
    format!(
        "no response from {peer} in time (waited {:.1} s; the request was sent {times})",
        waited.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_timeout_is_max_transmit_wait() {
        // ACK_TIMEOUT 2 s × (2^(MAX_RETRANSMIT 4 + 1) − 1) × ACK_RANDOM_FACTOR 1.5.
        assert_eq!(default_timeout(), 93.0);
    }

    #[test]
    fn retransmissions_say_what_comes_next() {
        let s = Duration::from_secs;
        assert_eq!(
            retransmission_line(2, 4, s(8)),
            "no reply yet: retransmission 2 of 4 sent, next in 8.0 s"
        );
        assert_eq!(
            retransmission_line(4, 4, s(40)),
            "no reply yet: retransmission 4 of 4 sent, giving up in 40.0 s"
        );
    }

    #[test]
    fn the_timeout_says_how_long_and_how_often() {
        let waited = Duration::from_millis(93_060);
        assert_eq!(
            timeout_message("127.0.0.1:5683", waited, 5),
            "no response from 127.0.0.1:5683 in time (waited 93.1 s; the request was sent 5 times)"
        );
        assert!(timeout_message("h", waited, 1).ends_with("sent once)"));
    }
}
