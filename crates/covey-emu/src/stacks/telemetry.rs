//! The telemetry message of the patient gateway (a JSON document of a fixed size carrying a
//! sequence number) and the event lines agents print when they send or receive one.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The paper's message size: 409 bytes of JSON.
pub const PAPER_MESSAGE_BYTES: usize = 409;

/// The smallest message [`message`] can build around a sequence number.
pub const MIN_MESSAGE_BYTES: usize = 96;

/// How every telemetry document starts; its sequence number follows, so the emulator's
/// forwarder can count the messages on each link.
pub const MESSAGE_MARKER: &[u8] = b"{\"seq\":";

/// A JSON telemetry document of exactly `size` bytes (at least [`MIN_MESSAGE_BYTES`]) carrying
/// `seq`; the padding field fills it up.
pub fn message(seq: u64, size: usize) -> Vec<u8> {
    let head = format!(
        "{{\"seq\":{seq},\"hr\":72,\"spo2\":98,\"skin\":412,\"acc\":[0.01,-0.02,0.98],\"pad\":\""
    );
    let tail = "\"}";
    let size = size.max(MIN_MESSAGE_BYTES);
    let pad = size.saturating_sub(head.len() + tail.len());
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(head.as_bytes());
    out.resize(head.len() + pad, b'x');
    out.extend_from_slice(tail.as_bytes());
    out
}

/// The sequence number of a telemetry document, or `None` when it is not one.
pub fn sequence_of(payload: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Seq {
        seq: u64,
    }
    serde_json::from_slice::<Seq>(payload).ok().map(|s| s.seq)
}

/// Nanoseconds since the Unix epoch on the host clock, which every namespace shares.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// What an agent reports, one JSON object per line on its standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The agent is listening or connected and can take traffic.
    Ready,
    /// A relay has matched both its upstream writer and its downstream reader (DDS, where
    /// each end of a topic discovers the other on its own).
    Linked,
    /// Message `seq` left the application at `t_ns`.
    Sent {
        /// Sequence number.
        seq: u64,
        /// Host time, ns since the epoch.
        t_ns: u64,
    },
    /// Message `seq` reached the application at `t_ns`.
    Received {
        /// Sequence number.
        seq: u64,
        /// Host time, ns since the epoch.
        t_ns: u64,
    },
    /// An object of `bytes` bytes took `elapsed_ns` to download.
    Downloaded {
        /// Object size.
        bytes: u64,
        /// Request to last byte.
        elapsed_ns: u64,
    },
    /// A download failed (no answer after the retries).
    Failed {
        /// Object size.
        bytes: u64,
    },
}

impl AgentEvent {
    /// Prints the event as one line (stdout is line-buffered, so a killed agent loses none).
    pub fn emit(self) {
        if let Ok(line) = serde_json::to_string(&self) {
            println!("{line}");
        }
    }

    /// Parses one line an agent printed (`None` for anything else, e.g. a log line).
    pub fn parse(line: &str) -> Option<AgentEvent> {
        serde_json::from_str(line.trim()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_has_the_asked_size_and_its_sequence_number() {
        for (seq, size) in [(0, PAPER_MESSAGE_BYTES), (123_456_789, 409), (7, 1200)] {
            let m = message(seq, size);
            assert_eq!(m.len(), size);
            assert_eq!(sequence_of(&m), Some(seq));
            let marker = crate::MessageMarker::new(MESSAGE_MARKER, u64::MAX);
            let labels: Vec<_> = marker.labels(&m).collect();
            assert_eq!(labels, vec![Some(seq)], "the forwarder reads the number");
        }
        assert_eq!(message(1, 10).len(), MIN_MESSAGE_BYTES);
    }

    #[test]
    fn non_telemetry_payloads_have_no_sequence_number() {
        assert_eq!(sequence_of(b"hello"), None);
        assert_eq!(sequence_of(b"{\"seq\":-1}"), None);
    }

    #[test]
    fn events_round_trip_through_a_line() {
        let e = AgentEvent::Received { seq: 5, t_ns: 42 };
        let line = serde_json::to_string(&e).unwrap();
        assert_eq!(AgentEvent::parse(&line), Some(e));
        assert_eq!(AgentEvent::parse("not json"), None);
    }
}
