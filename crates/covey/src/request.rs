//! An owned CoAP request: what a server handler receives.

use std::net::{IpAddr, SocketAddr};

use covey_core::{Code, ContentFormat, MessageType};
use covey_proto::Received;

use crate::Options;

/// A request with its options and payload, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method (GET, POST, ...).
    pub method: Code,
    /// The options, in wire order.
    pub options: Options,
    /// The payload (may be empty).
    pub payload: Vec<u8>,
    /// The sender.
    pub source: SocketAddr,
    /// Whether it came as a confirmable message.
    pub confirmable: bool,
    /// The group address it was sent to, when it came by multicast.
    pub multicast_group: Option<IpAddr>,
}

impl Request {
    /// Copies a received request out of the engine.
    pub(crate) fn from_received(
        received: &Received<'_>,
        multicast_group: Option<IpAddr>,
    ) -> Request {
        let message = &received.message;
        Request {
            method: message.code(),
            options: Options::from_message(message),
            payload: received.payload().to_vec(),
            source: received.source,
            confirmable: message.message_type() == MessageType::Confirmable,
            multicast_group,
        }
    }

    /// The path as `/a/b` (`/` for none).
    pub fn path(&self) -> String {
        self.options.path()
    }

    /// The path segments.
    pub fn path_segments(&self) -> Vec<String> {
        self.options.path_segments().collect()
    }

    /// The value of query argument `name` (`Some("")` for a bare `name`).
    pub fn query(&self, name: &str) -> Option<String> {
        self.options.query(name)
    }

    /// The Content-Format of the payload.
    pub fn content_format(&self) -> Option<ContentFormat> {
        self.options.content_format()
    }

    /// The Accept option.
    pub fn accept(&self) -> Option<ContentFormat> {
        self.options.accept()
    }

    /// True when it arrived on a multicast group address.
    pub fn is_multicast(&self) -> bool {
        self.multicast_group.is_some()
    }

    /// The payload as text (invalid UTF-8 shown lossily).
    pub fn payload_text(&self) -> String {
        String::from_utf8_lossy(&self.payload).into_owned()
    }
}
