//! Answering clients: codes, Content-Format, Location-Path, Max-Age, diagnostics (text, or
//! an [`ErrorReport`] for clients that ask for JSON), and the ETag of large replies (the
//! engine keeps their body for the later Block2 requests).

use super::observe::ObserveAs;
use super::EntityManager;
use crate::error_report::{ErrorReport, Problem, Reason};
use covey_core::{uint, CoapOption, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, Endpoint, IncomingId, Instant, Response};

/// Where a reply goes: the request.
#[derive(Debug, Clone)]
pub(crate) struct Responder {
    pub id: IncomingId,
    /// The client asked for JSON: a diagnostic goes to it as an [`ErrorReport`].
    pub json_errors: bool,
    /// How the client reached the EM, to name entities as it does.
    pub reached: Option<super::reached_at::ReachedAt>,
    /// Whether the reply registers or ends an observation.
    pub observe: ObserveAs,
    /// The request came OSCORE-protected and verified (RFC 8613 §8.2).
    pub oscore: bool,
    /// The request came with an identity (OSCORE, EDHOC or DTLS): only such a request may
    /// carry member contexts, as the clear would show their secrets.
    pub secured: bool,
}

impl Responder {
    /// Answers with Echo (RFC 9175 §2.4) when the sender's address is not verified yet, and
    /// says whether it did. A verified OSCORE request needs no Echo: only a holder of the key
    /// could write it and its replay window refuses a copy (RFC 8613 §7.4), so a spoofed
    /// source cannot make the EM ask its members; nor could the client answer an Echo inside
    /// OSCORE.
    pub fn challenged(&self, ep: &mut Endpoint, now: Instant) -> bool {
        !self.oscore && ep.challenge_unverified(now, self.id)
    }
}

/// A reply to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub code: Code,
    pub content_format: Option<ContentFormat>,
    /// `e/<name>` as Location-Path (2.01 Created).
    pub location: Option<String>,
    pub max_age: Option<u32>,
    /// The ETag of a representation that conditional requests can name (a profile).
    pub etag: Option<[u8; 4]>,
    /// What an error is about (the field and why), for clients that ask for JSON; without
    /// it the reason follows from the code.
    pub problem: Option<Problem>,
    pub body: Vec<u8>,
}

impl Reply {
    /// An error with a diagnostic payload naming the problem.
    pub fn error(code: Code, diagnostic: String) -> Reply {
        Reply {
            code,
            content_format: None,
            location: None,
            max_age: None,
            etag: None,
            problem: None,
            body: diagnostic.into_bytes(),
        }
    }

    /// An error about `problem` (a profile field and why) with a diagnostic naming it.
    pub fn refused(code: Code, diagnostic: String, problem: Problem) -> Reply {
        Reply {
            problem: Some(problem),
            ..Reply::error(code, diagnostic)
        }
    }

    /// 2.05 Content.
    pub fn content(format: ContentFormat, body: Vec<u8>) -> Reply {
        Reply::with(Code::CONTENT, format, body)
    }

    /// Any code with a body in `format`.
    pub fn with(code: Code, format: ContentFormat, body: Vec<u8>) -> Reply {
        Reply {
            code,
            content_format: Some(format),
            location: None,
            max_age: None,
            etag: None,
            problem: None,
            body,
        }
    }

    /// "Busy, try again shortly": 5.03 with Max-Age.
    pub fn busy(name: &str) -> Reply {
        Reply {
            max_age: Some(2),
            ..Reply::error(
                Code::SERVICE_UNAVAILABLE,
                format!("entity {name} is being created, changed or deleted; try again"),
            )
        }
    }
}

impl EntityManager {
    /// Sends `reply`; a body larger than one block gets an ETag, and the engine slices it and
    /// keeps it for the Block2 requests that follow (so they cause no new fan-out).
    pub(super) fn send_reply(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: &Responder,
        mut reply: Reply,
    ) {
        let limit = error_payload_limit(ep);
        let diagnostic = !reply.code.is_success() && reply.content_format.is_none();
        if diagnostic && to.json_errors {
            let problem = reply
                .problem
                .take()
                .unwrap_or_else(|| Problem::general(Reason::of_code(reply.code)));
            let text = String::from_utf8_lossy(&reply.body);
            let report = ErrorReport::new(text.trim_end(), &problem);
            // The engine sends error responses in one datagram only: the text is cut to fit.
            reply.body = report.to_json_within(limit);
            reply.content_format = Some(ContentFormat::JSON);
        } else if !reply.code.is_success() && reply.body.len() > limit {
            // The engine sends error responses in one datagram only: cut the diagnostic.
            reply.body = truncate_text(&reply.body, limit);
        }
        let large = reply.body.len() > ep.config().block_size();
        let tag = reply.etag.or_else(|| large.then(|| etag(&reply.body)));
        match &to.observe {
            ObserveAs::Plain => {
                respond(ep, now, to.id, &reply, tag, None);
            }
            // The resource is not looked at when the client deregisters.
            ObserveAs::Deregister { entity } => {
                respond(ep, now, to.id, &reply, tag, Some(0));
                self.sweep_entity(ep, now, entity);
            }
            ObserveAs::Register { entity, resource } => {
                let registered = respond(ep, now, to.id, &reply, tag, Some(*resource));
                self.registration_answered(ep, now, entity, *resource, registered);
            }
        }
    }
}

/// A 4-byte entity tag of `body` (FNV-1a).
pub(crate) fn etag(body: &[u8]) -> [u8; 4] {
    let mut h: u32 = 0x811c_9dc5;
    for b in body {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.to_be_bytes()
}

/// Largest payload of an error response: the engine slices only success responses into
/// blocks, so an error must fit one datagram.
pub(crate) fn error_payload_limit(ep: &Endpoint) -> usize {
    let c = ep.config();
    c.max_message_size.saturating_sub(64).min(c.block_size())
}

/// `text` cut to at most `limit` bytes at a character boundary, marked as cut.
fn truncate_text(text: &[u8], limit: usize) -> Vec<u8> {
    const MARK: &str = "...";
    let text = String::from_utf8_lossy(text);
    let mut end = limit.saturating_sub(MARK.len()).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MARK}", &text[..end]).into_bytes()
}

/// Sends `reply` to request `id`, through the engine's observers when `observable` names
/// a resource; returns whether the client is registered as an observer.
fn respond(
    ep: &mut Endpoint,
    now: Instant,
    id: IncomingId,
    reply: &Reply,
    etag: Option<[u8; 4]>,
    observable: Option<u64>,
) -> bool {
    let (mut cf, mut age) = ([0u8; 4], [0u8; 4]);
    let etag_bytes = etag.unwrap_or_default();
    let mut options: Vec<CoapOption<'_>> = Vec::new();
    if let Some(t) = etag.as_ref().map(|_| &etag_bytes) {
        options.push(opt(OptionNumber::ETAG, t));
    }
    if let Some(location) = &reply.location {
        for segment in location.split('/') {
            options.push(opt(OptionNumber::LOCATION_PATH, segment.as_bytes()));
        }
    }
    if let Some(format) = reply.content_format {
        options.push(opt(
            OptionNumber::CONTENT_FORMAT,
            uint::encode(u32::from(format.0), &mut cf),
        ));
    }
    if let Some(max_age) = reply.max_age {
        options.push(opt(OptionNumber::MAX_AGE, uint::encode(max_age, &mut age)));
    }
    let response = Response {
        code: reply.code,
        options: &options,
        payload: &reply.body,
    };
    // The client may have given up already; nothing else to do then.
    match observable {
        Some(resource) => ep
            .respond_observable(now, id, resource, &response)
            .unwrap_or(false),
        None => {
            let _ = ep.respond(now, id, &response);
            false
        }
    }
}
