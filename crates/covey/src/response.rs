//! An owned CoAP response: what a handler returns and what a client receives.

use std::net::SocketAddr;

use covey_core::{Code, ContentFormat, OptionNumber};
use covey_proto::Received;

use crate::Options;

/// A response code, options and payload; `source` is set on received responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The response code (2.05 Content, 4.04 Not Found, ...).
    pub code: Code,
    /// The options.
    pub options: Options,
    /// The payload (may be empty).
    pub payload: Vec<u8>,
    /// Who sent it (received responses only).
    pub source: Option<SocketAddr>,
}

impl Response {
    /// A response with only a code.
    pub fn new(code: Code) -> Response {
        Response {
            code,
            options: Options::new(),
            payload: Vec::new(),
            source: None,
        }
    }

    /// 2.05 Content with a payload of the given format.
    pub fn content(format: ContentFormat, payload: impl Into<Vec<u8>>) -> Response {
        Response::new(Code::CONTENT)
            .with_content_format(format)
            .with_payload(payload)
    }

    /// An error response with a diagnostic text payload (RFC 7252 §5.5.2).
    pub fn error(code: Code, diagnostic: impl Into<String>) -> Response {
        Response::new(code).with_payload(diagnostic.into())
    }

    /// Copies a received response out of the engine.
    pub(crate) fn from_received(received: &Received<'_>) -> Response {
        Response {
            code: received.message.code(),
            options: Options::from_message(&received.message),
            payload: received.payload().to_vec(),
            source: Some(received.source),
        }
    }

    /// Sets the payload.
    pub fn with_payload(mut self, payload: impl Into<Vec<u8>>) -> Response {
        self.payload = payload.into();
        self
    }

    /// Sets the Content-Format.
    pub fn with_content_format(mut self, format: ContentFormat) -> Response {
        self.options
            .set_uint(OptionNumber::CONTENT_FORMAT, u32::from(format.0));
        self
    }

    /// Adds an option.
    pub fn with_option(mut self, number: OptionNumber, value: impl Into<Vec<u8>>) -> Response {
        self.options.push(number, value);
        self
    }

    /// Adds an option holding an unsigned integer.
    pub fn with_uint_option(mut self, number: OptionNumber, value: u32) -> Response {
        self.options.push_uint(number, value);
        self
    }

    /// Sets the ETag.
    pub fn with_etag(mut self, etag: impl Into<Vec<u8>>) -> Response {
        self.options.set(OptionNumber::ETAG, etag);
        self
    }

    /// Sets Max-Age in seconds.
    pub fn with_max_age(mut self, seconds: u32) -> Response {
        self.options.set_uint(OptionNumber::MAX_AGE, seconds);
        self
    }

    /// Adds Location-Path options for a path like `a/b`.
    pub fn with_location_path(mut self, path: &str) -> Response {
        for segment in path.trim_start_matches('/').split('/') {
            self.options.push(OptionNumber::LOCATION_PATH, segment);
        }
        self
    }

    /// True for 2.xx codes.
    pub fn is_success(&self) -> bool {
        self.code.is_success()
    }

    /// The Content-Format of the payload.
    pub fn content_format(&self) -> Option<ContentFormat> {
        self.options.content_format()
    }

    /// The Observe sequence number of a notification.
    pub fn observe(&self) -> Option<u32> {
        self.options.observe()
    }

    /// The payload as text (invalid UTF-8 shown lossily).
    pub fn payload_text(&self) -> String {
        String::from_utf8_lossy(&self.payload).into_owned()
    }
}
