//! A member's response copied out of the engine, so tasks can keep it.

use covey_core::{Code, ContentFormat};
use covey_proto::Received;
use std::net::SocketAddr;

/// One response to a request of the EM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberResponse {
    /// Who sent it.
    pub source: SocketAddr,
    /// The response code.
    pub code: Code,
    /// Its Content-Format, if any.
    pub content_format: Option<ContentFormat>,
    /// The whole payload (block-wise transfers reassembled).
    pub payload: Vec<u8>,
    /// Its size on the wire in bytes (header, token, options and the whole payload).
    pub size: usize,
}

impl MemberResponse {
    /// Copies a response the engine holds.
    pub fn from_received(r: &Received<'_>) -> MemberResponse {
        let m = &r.message;
        let payload = r.payload().to_vec();
        MemberResponse {
            source: r.source,
            code: m.code(),
            content_format: m.content_format(),
            // The last message as received, with the whole body of a block-wise transfer.
            size: r.wire_len - m.payload().len() + payload.len(),
            payload,
        }
    }

    /// The payload as text for diagnostics (at most 80 characters).
    pub fn diagnostic(&self) -> String {
        let text = String::from_utf8_lossy(&self.payload);
        let mut short: String = text.chars().take(80).collect();
        if short.len() < text.len() {
            short.push_str("...");
        }
        short
    }
}
