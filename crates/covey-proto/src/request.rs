//! Borrowed descriptions of the requests and responses the application asks to send.

use crate::event::AppId;
use core::net::SocketAddr;
use covey_core::{CoapOption, Code, OptionNumber, Token};

/// A request to send: method, options in any order (kept stable per number) and payload.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The method (0.01 GET ...).
    pub method: Code,
    /// Options; Uri-Path, Uri-Query, Accept, ... (the engine adds Block and Observe itself
    /// when it drives those).
    pub options: &'a [CoapOption<'a>],
    /// The payload (may be empty).
    pub payload: &'a [u8],
}

impl<'a> Request<'a> {
    /// A request with no options or payload.
    pub const fn new(method: Code) -> Request<'a> {
        Request {
            method,
            options: &[],
            payload: &[],
        }
    }
}

/// How to send a request.
#[derive(Debug, Clone, Copy)]
pub struct RequestParams {
    /// CON (reliable) or NON.
    pub confirmable: bool,
    /// A caller-chosen token (e.g. to re-register an observation); generated when `None`.
    pub token: Option<Token>,
    /// The local socket to send from (e.g. the secured one for a `coaps` peer); `None`: the
    /// one the peer last reached, else the driver's first that can reach it. Later requests
    /// to the peer leave from the same socket until it is heard on another.
    pub source: Option<SocketAddr>,
    /// The App the responses and failure go to on a node of several; Apps send through
    /// [`AppContext::send_request`](crate::AppContext::send_request), which sets it.
    pub owner: AppId,
}

impl RequestParams {
    /// A non-confirmable request with a generated token.
    pub const NON: RequestParams = RequestParams {
        confirmable: false,
        token: None,
        source: None,
        owner: AppId(0),
    };
}

impl Default for RequestParams {
    fn default() -> RequestParams {
        RequestParams {
            confirmable: true,
            token: None,
            source: None,
            owner: AppId(0),
        }
    }
}

/// A response to send.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    /// The response code (2.05 Content ...).
    pub code: Code,
    /// Options in any order (kept stable per number).
    pub options: &'a [CoapOption<'a>],
    /// The payload (may be empty).
    pub payload: &'a [u8],
}

impl<'a> Response<'a> {
    /// A response with only a code.
    pub const fn new(code: Code) -> Response<'a> {
        Response {
            code,
            options: &[],
            payload: &[],
        }
    }

    /// A response with a code and a diagnostic payload (for errors).
    pub const fn with_payload(code: Code, payload: &'a [u8]) -> Response<'a> {
        Response {
            code,
            options: &[],
            payload,
        }
    }
}

/// Shorthand for building an option list entry.
pub const fn opt(number: OptionNumber, value: &[u8]) -> CoapOption<'_> {
    CoapOption { number, value }
}
