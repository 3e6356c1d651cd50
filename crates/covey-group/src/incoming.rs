//! A client request to the EM, copied out of the engine so its handling can span events.

use covey_core::precondition::{preconditions_hold, Current};
use covey_core::{Code, ContentFormat, OptionNumber};
use covey_proto::{Endpoint, IncomingId};

/// A request from a client.
#[derive(Debug, Clone)]
pub(crate) struct IncomingRequest {
    /// The method.
    pub method: Code,
    /// Uri-Path segments.
    pub path: Vec<String>,
    /// Uri-Query arguments.
    pub query: Vec<String>,
    /// Accept.
    pub accept: Option<ContentFormat>,
    /// Content-Format of the payload.
    pub content_format: Option<ContentFormat>,
    /// The payload (a Block1 upload reassembled).
    pub payload: Vec<u8>,
    /// Hop-Limit (RFC 8768), present when another EM forwards a query.
    pub hop_limit: Option<u8>,
    /// If-None-Match: create only if absent.
    pub if_none_match: bool,
    /// If-Match values: change only the representation with one of these ETags.
    pub if_match: Vec<Vec<u8>>,
    /// Observe: 0 registers, 1 deregisters (RFC 7641).
    pub observe: Option<u32>,
    /// The entities a nested query passed through (another EM's [`crate::visited::VISITED`]).
    pub visited: Vec<[u8; 4]>,
}

impl IncomingRequest {
    /// Whether its If-Match and If-None-Match hold for `current` (RFC 7252 §5.10.8).
    pub fn preconditions_hold(&self, current: Current<'_>) -> bool {
        preconditions_hold(
            self.if_match.iter().map(Vec::as_slice),
            self.if_none_match,
            current,
        )
    }

    /// Whether the client asked for JSON: Accept `application/json`, or no Accept and a
    /// payload in `application/json`. Its errors are then [`crate::ErrorReport`]s.
    pub fn wants_json(&self) -> bool {
        match self.accept {
            Some(accept) => accept == ContentFormat::JSON,
            None => self.content_format == Some(ContentFormat::JSON),
        }
    }

    /// Copies request `id` from the engine.
    pub fn read(ep: &Endpoint, id: IncomingId) -> Option<IncomingRequest> {
        let r = ep.request(id)?;
        let m = &r.message;
        Some(IncomingRequest {
            method: m.code(),
            path: m
                .uri_path()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            query: m.uri_query().map(str::to_string).collect(),
            accept: m.accept(),
            content_format: m.content_format(),
            payload: r.payload().to_vec(),
            hop_limit: m
                .uint_option(OptionNumber::HOP_LIMIT)
                .map(|h| u8::try_from(h).unwrap_or(u8::MAX)),
            if_none_match: m.has_option(OptionNumber::IF_NONE_MATCH),
            if_match: m
                .options_of(OptionNumber::IF_MATCH)
                .map(<[u8]>::to_vec)
                .collect(),
            observe: m.uint_option(OptionNumber::OBSERVE),
            visited: m
                .option(crate::visited::VISITED)
                .map(crate::visited::decode)
                .unwrap_or_default(),
        })
    }
}
