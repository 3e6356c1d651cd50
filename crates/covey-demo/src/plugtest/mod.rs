//! The ETSI CoAP plugtest resource set (as served by Californium's and libcoap's plugtest
//! servers) as one App: `/test`, `/seg1/seg2/seg3`, `/query`, `/separate`, `/large*`, `/obs`,
//! `/obs-non`, `/location-query`, `/multi-format`, `/validate`, `/create1`, `/link1`..`/link3`
//! and `/path` with sub-resources. Sans-IO: `/separate` and the periodic change of `/obs`
//! are App timers.

mod observed;
mod resource;

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

use covey_core::precondition::{Current, Preconditions};
use covey_core::{CoapOption, Code, ContentFormat, MessageType, OptionNumber};
use covey_proto::{
    opt, App, AppContext, Event, IncomingId, LogLevel, NotificationType, Received, TrafficSource,
};

use super::clock_text::UtcText;
use super::demo::large_text;
use super::reply;
use super::wall_clock::WallClock;
use observed::Observed;
pub use resource::links;
use resource::PlugtestResource;

/// How long `/separate` thinks: longer than the piggyback window, so the answer is separate.
pub const SEPARATE_DELAY: Duration = Duration::from_millis(1500);

/// Size of `/large` and the initial `/large-update`: more than one 1024-byte block.
pub const LARGE_SIZE: usize = 1280;

/// Representations `/large-create` keeps (the oldest is forgotten first).
const MAX_CREATED: usize = 8;

/// The observable resources: path, how they notify, and how their title says it.
const OBSERVED: [(&str, NotificationType, &str); 2] = [
    ("obs", NotificationType::Confirmable, "CON notifications"),
    (
        "obs-non",
        NotificationType::NonConfirmable,
        "NON notifications",
    ),
];

/// The engine's observe keys of `/obs` and `/obs-non` (far from the router's route indices).
const OBSERVED_KEYS: [u64; 2] = [
    u64::from_be_bytes(*b"plug-obs"),
    u64::from_be_bytes(*b"plugobsn"),
];

/// The value of the timer of the periodic change of `/obs` and `/obs-non`; the timers of
/// separate responses count up from 1.
const PERIOD_TIMER: u64 = 0;

/// A stored representation: payload, format and ETag.
#[derive(Debug, Clone, Default)]
struct Stored {
    payload: Vec<u8>,
    format: Option<ContentFormat>,
    etag: u32,
}

impl Stored {
    /// Replaces the payload (reusing its buffer) and format.
    fn set(&mut self, payload: &[u8], format: Option<ContentFormat>) {
        self.payload.clear();
        self.payload.extend_from_slice(payload);
        self.format = format;
    }

    /// Answers `id` with this representation in its own format (none if it came without).
    fn send(&self, cx: &mut AppContext<'_>, id: IncomingId, extra: &[CoapOption<'_>]) {
        reply::content(
            cx,
            id,
            None,
            Code::CONTENT,
            self.format,
            extra,
            &self.payload,
        );
    }
}

/// What one request asks, copied out of the engine so the App can answer it.
#[derive(Debug, Clone, Copy)]
struct Asked {
    method: Code,
    /// The host that asked.
    source: TrafficSource,
    confirmable: bool,
    accept: Option<ContentFormat>,
    format: Option<ContentFormat>,
    /// Its If-Match and If-None-Match hold for the target resource as it is now.
    preconditions_hold: bool,
    /// An ETag in the request is `/validate`'s current one.
    etag_current: bool,
}

/// Separate responses one source (an IPv4 address or IPv6 /64) may have waiting: a quarter
/// of the App timers of the engine's default configuration, so one host cannot take them
/// all and deny `/separate` to everyone else.
const SEPARATE_PER_SOURCE: usize = 16;

/// Separate responses clients that have not verified their address may have waiting
/// together: the App timers of the engine's default configuration less a quarter, kept for
/// verified clients, so a few addresses that never answer cannot take every timer.
const SEPARATE_UNVERIFIED: usize = 48;

/// Max-Age (seconds) of the 5.03 a source beyond its share gets: by then its earlier
/// separate responses are out.
const SEPARATE_BUSY_MAX_AGE: u8 = 2;

/// A separate response waiting for its timer.
#[derive(Debug)]
struct Pending {
    timer: u64,
    id: IncomingId,
    source: TrafficSource,
    /// Whether its client had verified its address.
    verified: bool,
    body: Vec<u8>,
}

/// The plugtest resources and their state.
pub struct PlugtestApp {
    clock: Box<dyn WallClock>,
    time_text: UtcText,
    period: Duration,
    /// Max-Age of `/obs`: fresh until shortly after the next periodic notification is due
    /// (RFC 7641 §4.3.1).
    max_age: u32,
    test: Stored,
    validate: Stored,
    create1: Option<Stored>,
    large: Vec<u8>,
    large_update: Stored,
    created: VecDeque<(u32, Stored)>,
    next_created: u32,
    observed: [Observed; 2],
    separate: Vec<Pending>,
    next_timer: u64,
    /// The request's payload, copied out of the engine.
    body: Vec<u8>,
    /// A reused buffer for bodies made per request.
    scratch: Vec<u8>,
}

impl std::fmt::Debug for PlugtestApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlugtestApp")
            .field("period", &self.period)
            .field("separate", &self.separate.len())
            .finish()
    }
}

impl PlugtestApp {
    /// The plugtest resources; `/obs` and `/obs-non` change every `period` and show the
    /// time read from `clock`.
    pub fn new(period: Duration, clock: Box<dyn WallClock>) -> PlugtestApp {
        let max_age = period.as_secs_f64().ceil().min(f64::from(u32::MAX - 1)) as u32 + 1;
        let large = large_text(LARGE_SIZE).into_bytes();
        PlugtestApp {
            clock,
            time_text: UtcText::default(),
            period,
            max_age,
            test: Stored {
                format: Some(ContentFormat::TEXT_PLAIN),
                ..Stored::default()
            },
            validate: Stored {
                payload: b"validate me".to_vec(),
                format: Some(ContentFormat::TEXT_PLAIN),
                etag: 1,
            },
            create1: None,
            large_update: Stored {
                payload: large.clone(),
                format: Some(ContentFormat::TEXT_PLAIN),
                etag: 0,
            },
            large,
            created: VecDeque::new(),
            next_created: 1,
            observed: [0, 1].map(|i| Observed::new(OBSERVED_KEYS[i], OBSERVED[i].1)),
            separate: Vec::new(),
            next_timer: PERIOD_TIMER + 1,
            body: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn arm_period_timer(&mut self, cx: &mut AppContext<'_>) {
        if cx.set_timer(cx.now + self.period, PERIOD_TIMER).is_none() {
            cx.log(
                LogLevel::Warn,
                format_args!("no timer left: /obs stops changing"),
            );
        }
    }

    /// The periodic change: every observer of `/obs` and `/obs-non` hears the new state.
    fn on_period(&mut self, cx: &mut AppContext<'_>) {
        let now_text = self.time_text.at(self.clock.since_epoch(cx.now).as_secs());
        for observed in &self.observed {
            observed.notify(cx, now_text, self.max_age);
        }
        self.arm_period_timer(cx);
    }

    fn on_separate_timer(&mut self, cx: &mut AppContext<'_>, timer: u64) {
        let Some(i) = self.separate.iter().position(|p| p.timer == timer) else {
            return;
        };
        let pending = self.separate.swap_remove(i);
        text(cx, pending.id, &pending.body);
    }

    fn on_request(&mut self, cx: &mut AppContext<'_>, id: IncomingId) {
        let Some(request) = cx.endpoint.request(id) else {
            return;
        };
        let Some(resource) = PlugtestResource::of(&request) else {
            return reply::error(cx, id, Code::NOT_FOUND, "no resource at this path");
        };
        let asked = self.asked(&request, resource);
        self.body.clear();
        self.body.extend_from_slice(request.payload());
        self.scratch.clear();
        match resource {
            PlugtestResource::Query => {
                let queries = request.message.options_of(OptionNumber::URI_QUERY);
                self.scratch.extend_from_slice(b"Queries: ");
                for (i, q) in queries.enumerate() {
                    if i > 0 {
                        self.scratch.push(b'&');
                    }
                    self.scratch
                        .extend_from_slice(String::from_utf8_lossy(q).as_bytes());
                }
            }
            PlugtestResource::Location => {
                self.scratch.extend_from_slice(b"Created by POST /test: ");
                for segment in request.message.options_of(OptionNumber::URI_PATH) {
                    self.scratch.push(b'/');
                    self.scratch
                        .extend_from_slice(String::from_utf8_lossy(segment).as_bytes());
                }
            }
            PlugtestResource::LargeCreated => {
                // The number is the second segment; deeper ones do not matter.
                let number = request.message.options_of(OptionNumber::URI_PATH).nth(1);
                self.scratch.extend_from_slice(number.unwrap_or_default());
            }
            _ => {}
        }
        self.answer(cx, id, resource, asked);
    }

    /// The conditions and formats of `request`, checked against the current state of
    /// `resource`.
    fn asked(&self, request: &Received<'_>, resource: PlugtestResource) -> Asked {
        let m = &request.message;
        let etag = self.validate.etag.to_be_bytes();
        // `/validate` has an ETag, `/create1` may not exist; the others always do.
        let current = match resource {
            PlugtestResource::Validate => Current::Present(Some(&etag)),
            PlugtestResource::Create1 if self.create1.is_none() => Current::Absent,
            _ => Current::Present(None),
        };
        Asked {
            source: TrafficSource::of(&request.source),
            method: m.code(),
            confirmable: m.message_type() == MessageType::Confirmable,
            accept: m.accept(),
            format: m.content_format(),
            preconditions_hold: Preconditions::of(m).hold(current),
            etag_current: m
                .options_of(OptionNumber::ETAG)
                .any(|e| e == etag.as_slice()),
        }
    }

    fn answer(
        &mut self,
        cx: &mut AppContext<'_>,
        id: IncomingId,
        resource: PlugtestResource,
        asked: Asked,
    ) {
        use PlugtestResource as R;
        // RFC 7252 §5.10.8: a conditional change whose condition fails changes nothing.
        let changes = matches!(
            (resource, asked.method),
            (R::Test, Code::PUT | Code::POST | Code::DELETE)
                | (R::Validate | R::LargeUpdate, Code::PUT)
                | (R::Create1 | R::Observed(_), Code::PUT | Code::DELETE)
                | (R::LargeCreate, Code::POST)
        );
        if changes && !asked.preconditions_hold {
            return reply::error(cx, id, Code::PRECONDITION_FAILED, "precondition failed");
        }
        match (resource, asked.method) {
            (R::Test, Code::GET) => {
                let body = describe(&asked, &self.test.payload);
                text(cx, id, &body);
            }
            (R::Test, Code::PUT) => {
                self.test.set(&self.body, asked.format);
                empty(cx, id, Code::CHANGED);
            }
            (R::Test, Code::POST) => {
                let location = [
                    opt(OptionNumber::LOCATION_PATH, b"location1"),
                    opt(OptionNumber::LOCATION_PATH, b"location2"),
                    opt(OptionNumber::LOCATION_PATH, b"location3"),
                ];
                reply::content(cx, id, None, Code::CREATED, None, &location, &[]);
            }
            (R::Test | R::Location | R::Create1, Code::DELETE) => {
                if resource == R::Create1 {
                    self.create1 = None;
                }
                empty(cx, id, Code::DELETED);
            }
            (R::LongPath, Code::GET) => text(cx, id, b"Long path resource"),
            (R::Query | R::Location, Code::GET) => text(cx, id, &self.scratch),
            (R::Separate, Code::GET) => self.separate(cx, id, &asked),
            (R::LocationQuery, Code::POST) => {
                let location = [
                    opt(OptionNumber::LOCATION_QUERY, b"first=1"),
                    opt(OptionNumber::LOCATION_QUERY, b"second=2"),
                ];
                reply::content(cx, id, None, Code::CREATED, None, &location, &[]);
            }
            (R::MultiFormat, Code::GET) => multi_format(cx, id, asked.accept),
            (R::Validate, Code::GET) => self.get_validate(cx, id, &asked),
            (R::Validate, Code::PUT) => self.put_validate(cx, id, &asked),
            (R::Create1, Code::PUT) => self.put_create1(cx, id, &asked),
            (R::Create1, Code::GET) => match &self.create1 {
                Some(s) => s.send(cx, id, &[]),
                None => reply::error(cx, id, Code::NOT_FOUND, "/create1 does not exist yet"),
            },
            (R::Large, Code::GET) => {
                let format = Some(ContentFormat::TEXT_PLAIN);
                reply::content(cx, id, None, Code::CONTENT, format, &[], &self.large);
            }
            (R::LargeUpdate, Code::GET) => self.large_update.send(cx, id, &[]),
            (R::LargeUpdate, Code::PUT) => {
                self.large_update.set(&self.body, asked.format);
                empty(cx, id, Code::CHANGED);
            }
            (R::LargeCreate, Code::POST) => self.post_large_create(cx, id, &asked),
            (R::LargeCreated, Code::GET) => self.get_large_created(cx, id),
            (R::LargePost, Code::POST) => {
                self.body.make_ascii_uppercase();
                let format = asked.format.unwrap_or(ContentFormat::TEXT_PLAIN);
                reply::content(cx, id, None, Code::CHANGED, Some(format), &[], &self.body);
            }
            (R::Observed(i), method) => self.observed(cx, id, i, method, &asked),
            (R::Link(n), Code::GET) => {
                let _ = write!(self.scratch, "link{n}");
                text(cx, id, &self.scratch);
            }
            (R::Path, Code::GET) => reply::content(
                cx,
                id,
                None,
                Code::CONTENT,
                Some(ContentFormat::LINK_FORMAT),
                &[],
                b"</path/sub1>;ct=0,</path/sub2>;ct=0,</path/sub3>;ct=0",
            ),
            (R::PathSub(n), Code::GET) => {
                let _ = write!(self.scratch, "sub-resource {n}");
                text(cx, id, &self.scratch);
            }
            _ => reply::error(
                cx,
                id,
                Code::METHOD_NOT_ALLOWED,
                "this resource does not answer that method",
            ),
        }
    }

    /// `/separate`: the answer comes after [`SEPARATE_DELAY`], from an App timer.
    fn separate(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: &Asked) {
        let source = asked.source;
        let verified = cx
            .endpoint
            .request(id)
            .is_some_and(|r| cx.endpoint.is_peer_verified(cx.now, r.source, r.local));
        let unverified = self.separate.iter().filter(|p| !p.verified).count();
        if !verified && unverified >= SEPARATE_UNVERIFIED {
            // The rest is kept for verified clients: one that echoes the value is one.
            if !cx.endpoint.challenge_unverified(cx.now, id) {
                busy(
                    cx,
                    id,
                    b"too many separate responses waiting for unverified clients",
                );
            }
            return;
        }
        let waiting = self.separate.iter().filter(|p| p.source == source).count();
        if waiting >= SEPARATE_PER_SOURCE {
            return busy(cx, id, b"too many separate responses waiting for this host");
        }
        let timer = self.next_timer;
        self.next_timer += 1;
        if cx.set_timer(cx.now + SEPARATE_DELAY, timer).is_none() {
            return reply::error(cx, id, Code::SERVICE_UNAVAILABLE, "too busy to wait");
        }
        let body = describe(asked, b"Separate response");
        self.separate.push(Pending {
            timer,
            id,
            source,
            verified,
            body,
        });
    }

    fn get_validate(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: &Asked) {
        let etag = self.validate.etag.to_be_bytes();
        let etag_option = [opt(OptionNumber::ETAG, &etag)];
        // RFC 7252 §5.10.6.2: a current ETag in the request makes it 2.03 Valid.
        if asked.etag_current {
            reply::content(cx, id, None, Code::VALID, None, &etag_option, &[]);
        } else {
            self.validate.send(cx, id, &etag_option);
        }
    }

    fn put_validate(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: &Asked) {
        self.validate.set(&self.body, asked.format);
        self.validate.etag = self.validate.etag.wrapping_add(1);
        let etag = self.validate.etag.to_be_bytes();
        let etag_option = [opt(OptionNumber::ETAG, &etag)];
        reply::content(cx, id, None, Code::CHANGED, None, &etag_option, &[]);
    }

    fn put_create1(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: &Asked) {
        let exists = self.create1.is_some();
        self.create1
            .get_or_insert_with(Stored::default)
            .set(&self.body, asked.format);
        empty(cx, id, if exists { Code::CHANGED } else { Code::CREATED });
    }

    fn post_large_create(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: &Asked) {
        let n = self.next_created;
        self.next_created = self.next_created.wrapping_add(1);
        // The oldest is forgotten, and its buffer reused.
        let mut stored = if self.created.len() >= MAX_CREATED {
            self.created.pop_front().map(|(_, s)| s).unwrap_or_default()
        } else {
            Stored::default()
        };
        stored.set(&self.body, asked.format);
        self.created.push_back((n, stored));
        let mut number = String::new();
        let _ = write!(number, "{n}");
        let location = [
            opt(OptionNumber::LOCATION_PATH, b"large-create"),
            opt(OptionNumber::LOCATION_PATH, number.as_bytes()),
        ];
        reply::content(cx, id, None, Code::CREATED, None, &location, &[]);
    }

    fn get_large_created(&mut self, cx: &mut AppContext<'_>, id: IncomingId) {
        let wanted = std::str::from_utf8(&self.scratch)
            .ok()
            .and_then(|n| n.parse::<u32>().ok());
        match self.created.iter().find(|(n, _)| Some(*n) == wanted) {
            Some((_, s)) => s.send(cx, id, &[]),
            None => reply::error(
                cx,
                id,
                Code::NOT_FOUND,
                "nothing was created at that number",
            ),
        }
    }

    fn observed(
        &mut self,
        cx: &mut AppContext<'_>,
        id: IncomingId,
        i: usize,
        method: Code,
        asked: &Asked,
    ) {
        let now_text = self.time_text.at(self.clock.since_epoch(cx.now).as_secs());
        let observed = &mut self.observed[i];
        match method {
            Code::GET => observed.get(cx, id, asked.accept, now_text, self.max_age),
            Code::PUT => observed.put(cx, id, asked.format, &self.body, now_text, self.max_age),
            Code::DELETE => observed.delete(cx, id),
            _ => reply::error(cx, id, Code::METHOD_NOT_ALLOWED, "use GET, PUT or DELETE"),
        }
    }
}

impl App for PlugtestApp {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        // The first change is one period from now, not at once.
        self.arm_period_timer(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Request(id) => self.on_request(cx, id),
            Event::Timer(PERIOD_TIMER) => self.on_period(cx),
            Event::Timer(timer) => self.on_separate_timer(cx, timer),
            _ => {}
        }
    }

    fn serves(&self, request: &Received<'_>) -> bool {
        PlugtestResource::of(request).is_some()
    }
}

/// Answers `id` with `body` as text/plain.
fn text(cx: &mut AppContext<'_>, id: IncomingId, body: &[u8]) {
    let format = Some(ContentFormat::TEXT_PLAIN);
    reply::content(cx, id, None, Code::CONTENT, format, &[], body);
}

/// Answers `id` with `code` alone.
fn empty(cx: &mut AppContext<'_>, id: IncomingId, code: Code) {
    reply::content(cx, id, None, code, None, &[], &[]);
}

/// `/multi-format`: text/plain or application/xml, as Accept asks.
fn multi_format(cx: &mut AppContext<'_>, id: IncomingId, accept: Option<ContentFormat>) {
    match accept {
        None | Some(ContentFormat::TEXT_PLAIN) => text(cx, id, b"Status: 0\n"),
        Some(ContentFormat::XML) => reply::content(
            cx,
            id,
            None,
            Code::CONTENT,
            Some(ContentFormat::XML),
            &[],
            b"<status>0</status>",
        ),
        Some(_) => {
            super::negotiation::refuse(cx, id, &[ContentFormat::TEXT_PLAIN, ContentFormat::XML])
        }
    }
}

/// Answers `id` 5.03 with a Max-Age by which earlier separate responses are out.
fn busy(cx: &mut AppContext<'_>, id: IncomingId, why: &[u8]) {
    let max_age = [opt(OptionNumber::MAX_AGE, &[SEPARATE_BUSY_MAX_AGE])];
    reply::content(cx, id, None, Code::SERVICE_UNAVAILABLE, None, &max_age, why)
}

/// The `/test` and `/separate` body: the request's type and code, then `extra`.
fn describe(asked: &Asked, extra: &[u8]) -> Vec<u8> {
    let kind = if asked.confirmable {
        "0 (CON)"
    } else {
        "1 (NON)"
    };
    let name = asked.method.name().unwrap_or("?");
    let mut out = Vec::with_capacity(32 + extra.len());
    let _ = write!(out, "Type: {kind}\nCode: {} ({name})\n", asked.method.0);
    out.extend_from_slice(extra);
    out
}
