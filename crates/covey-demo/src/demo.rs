//! The demo resources of `covey serve` as one App: `/time` (observable, notified when the
//! wall-clock second turns), `/sensors/temp` (text, JSON or SenML, observable), `/large`
//! (block-wise) and `/echo` (every method). Sans-IO, so the same code runs under the tokio
//! driver and on a simulated node.

use std::fmt::Write as _;
use std::io::Write as _;

use covey_core::precondition::{Current, Preconditions};
use covey_core::{Code, ContentFormat, OptionNumber};
use covey_proto::{opt, App, AppContext, Event, IncomingId, LogLevel, Received, Response};

use super::clock_text::UtcText;
use super::wall_clock::{until_next_second, WallClock};
use super::{negotiation, path, reply};

/// Size of `/large`: more than 1 KiB, so it travels block-wise.
pub const LARGE_SIZE: usize = 2048;

/// How the demo resources are listed in `/.well-known/core`, in this order.
pub const LINKS: [&str; 4] = [
    r#"</time>;rt="time";ct=0;obs;title="Current UTC time""#,
    r#"</sensors/temp>;rt="temperature-c";if="sensor";ct="0 50 110";obs"#,
    r#"</large>;rt="block";ct=0;sz=2048"#,
    r#"</echo>;title="Echoes PUT, POST and FETCH payloads; GET returns the last one stored""#,
];

/// Formats `/sensors/temp` offers, the notified one first.
const TEMPERATURE_FORMATS: [ContentFormat; 3] = [
    ContentFormat::TEXT_PLAIN,
    ContentFormat::JSON,
    ContentFormat::SENML_JSON,
];

const TEXT_ONLY: [ContentFormat; 1] = [ContentFormat::TEXT_PLAIN];

/// The engine's observe keys of `/time` and `/sensors/temp` (far from the router's small
/// route indices, which share the engine).
const TIME_KEY: u64 = u64::from_be_bytes(*b"demotime");
const TEMPERATURE_KEY: u64 = u64::from_be_bytes(*b"demotemp");

/// The value of the timer that wakes the App when the wall-clock second turns.
const SECOND_TIMER: u64 = 1;

/// Which demo resource a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DemoResource {
    Time,
    Temperature,
    Large,
    Echo,
}

impl DemoResource {
    fn of(request: &Received<'_>) -> Option<DemoResource> {
        if path::is(request, &["time"]) {
            Some(DemoResource::Time)
        } else if path::is(request, &["sensors", "temp"]) {
            Some(DemoResource::Temperature)
        } else if path::is(request, &["large"]) {
            Some(DemoResource::Large)
        } else if path::is(request, &["echo"]) {
            Some(DemoResource::Echo)
        } else {
            None
        }
    }
}

/// What one request asks, copied out of the engine so the App can answer it.
#[derive(Debug, Clone, Copy)]
struct Asked {
    method: Code,
    accept: Option<ContentFormat>,
    format: Option<ContentFormat>,
}

/// The demo resources and their state.
pub struct DemoApp {
    clock: Box<dyn WallClock>,
    time_text: UtcText,
    /// The second `/time` last notified, so no value is sent twice.
    notified_second: Option<u64>,
    /// Whether the sensor is notified at the next turn of the second (every other one).
    sensor_due: bool,
    /// Readings taken so far; each GET and notification takes the next.
    readings: u64,
    large: Vec<u8>,
    /// What `/echo` holds: the last payload PUT or POSTed and its format.
    echo: (Vec<u8>, Option<ContentFormat>),
    /// `/echo`'s ETag while it holds something (a new one at every change).
    echo_etag: Option<u32>,
    /// The ETag `/echo`'s next change gets.
    next_etag: u32,
    /// A reused buffer for bodies made per request.
    scratch: Vec<u8>,
}

impl std::fmt::Debug for DemoApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoApp")
            .field("notified_second", &self.notified_second)
            .field("readings", &self.readings)
            .finish()
    }
}

impl DemoApp {
    /// The demo resources, reading the wall-clock time from `clock`.
    pub fn new(clock: Box<dyn WallClock>) -> DemoApp {
        DemoApp {
            clock,
            time_text: UtcText::default(),
            notified_second: None,
            sensor_due: true,
            readings: 0,
            large: large_text(LARGE_SIZE).into_bytes(),
            echo: (Vec::new(), None),
            echo_etag: None,
            next_etag: 1,
            scratch: Vec::new(),
        }
    }

    /// Wakes the App when the wall-clock second next turns.
    fn arm_second_timer(&mut self, cx: &mut AppContext<'_>) {
        let wait = until_next_second(self.clock.since_epoch(cx.now));
        if cx.set_timer(cx.now + wait, SECOND_TIMER).is_none() {
            cx.log(
                LogLevel::Warn,
                format_args!("no timer left: /time stops notifying"),
            );
        }
    }

    /// The second turned (or nearly): `/time` observers hear the new value, never the same
    /// one twice, and the sensor's every other second.
    fn on_second(&mut self, cx: &mut AppContext<'_>) {
        let second = self.clock.since_epoch(cx.now).as_secs();
        if self.notified_second != Some(second) {
            self.notified_second = Some(second);
            let text = self.time_text.at(second);
            notify_text(cx, TIME_KEY, text.as_bytes());
            if self.sensor_due {
                self.next_reading(ContentFormat::TEXT_PLAIN);
                notify_text(cx, TEMPERATURE_KEY, &self.scratch);
            }
            self.sensor_due = !self.sensor_due;
        }
        self.arm_second_timer(cx);
    }

    fn on_request(&mut self, cx: &mut AppContext<'_>, id: IncomingId) {
        let Some(request) = cx.endpoint.request(id) else {
            return;
        };
        let Some(resource) = DemoResource::of(&request) else {
            return reply::error(cx, id, Code::NOT_FOUND, "no resource at this path");
        };
        let asked = Asked {
            method: request.message.code(),
            accept: request.message.accept(),
            format: request.message.content_format(),
        };
        // /echo is the one demo resource that changes state; the others answer GET only.
        let changes = resource == DemoResource::Echo
            && matches!(asked.method, Code::PUT | Code::POST | Code::DELETE);
        let etag = self.echo_etag.map(u32::to_be_bytes);
        let current = match &etag {
            Some(tag) => Current::Present(Some(tag)),
            None => Current::Absent,
        };
        if changes && !Preconditions::of(&request.message).hold(current) {
            // RFC 7252 §5.10.8: a conditional change whose condition fails changes nothing.
            return reply::error(cx, id, Code::PRECONDITION_FAILED, "precondition failed");
        }
        // /echo's payload is copied now: answering needs the engine the request borrows.
        if resource == DemoResource::Echo && matches!(asked.method, Code::PUT | Code::POST) {
            self.echo.0.clear();
            self.echo.0.extend_from_slice(request.payload());
            self.echo.1 = asked.format;
            self.echo_etag = Some(self.next_etag);
            self.next_etag = self.next_etag.wrapping_add(1);
        } else if resource == DemoResource::Echo && asked.method == Code::FETCH {
            self.scratch.clear();
            self.scratch.extend_from_slice(request.payload());
        }
        match resource {
            DemoResource::Time => self.time(cx, id, asked),
            DemoResource::Temperature => self.temperature(cx, id, asked),
            DemoResource::Large => self.large(cx, id, asked),
            DemoResource::Echo => self.echo(cx, id, asked),
        }
    }

    fn time(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: Asked) {
        if asked.method != Code::GET {
            return reply::error(cx, id, Code::METHOD_NOT_ALLOWED, "/time answers GET");
        }
        let Some(format) = negotiation::choose(asked.accept, &TEXT_ONLY) else {
            return negotiation::refuse(cx, id, &TEXT_ONLY);
        };
        let second = self.clock.since_epoch(cx.now).as_secs();
        let text = self.time_text.at(second);
        reply::content(
            cx,
            id,
            Some(TIME_KEY),
            Code::CONTENT,
            Some(format),
            &[],
            text.as_bytes(),
        );
    }

    fn temperature(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: Asked) {
        if asked.method != Code::GET {
            return reply::error(
                cx,
                id,
                Code::METHOD_NOT_ALLOWED,
                "/sensors/temp answers GET",
            );
        }
        let Some(format) = negotiation::choose(asked.accept, &TEMPERATURE_FORMATS) else {
            return negotiation::refuse(cx, id, &TEMPERATURE_FORMATS);
        };
        self.next_reading(format);
        // Every observer gets the same notification, in the first format: one asking
        // another is answered once without being registered (RFC 7641 §4.1 lets a server
        // decline) rather than notified in a format it did not accept.
        let observed = (format == TEMPERATURE_FORMATS[0]).then_some(TEMPERATURE_KEY);
        reply::content(
            cx,
            id,
            observed,
            Code::CONTENT,
            Some(format),
            &[],
            &self.scratch,
        );
    }

    fn large(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: Asked) {
        if asked.method != Code::GET {
            return reply::error(cx, id, Code::METHOD_NOT_ALLOWED, "/large answers GET");
        }
        let Some(format) = negotiation::choose(asked.accept, &TEXT_ONLY) else {
            return negotiation::refuse(cx, id, &TEXT_ONLY);
        };
        reply::content(cx, id, None, Code::CONTENT, Some(format), &[], &self.large);
    }

    /// `/echo`: PUT and POST store and echo the payload, FETCH echoes without storing, GET
    /// returns what is stored, DELETE forgets it; 4.06 when Accept asks another format.
    fn echo(&mut self, cx: &mut AppContext<'_>, id: IncomingId, asked: Asked) {
        let (code, payload, format) = match asked.method {
            Code::GET => (Code::CONTENT, &self.echo.0, self.echo.1),
            Code::PUT | Code::POST => (Code::CHANGED, &self.echo.0, self.echo.1),
            Code::FETCH => (Code::CONTENT, &self.scratch, asked.format),
            Code::DELETE => {
                self.echo = (Vec::new(), None);
                self.echo_etag = None;
                return reply::content(cx, id, None, Code::DELETED, None, &[], &[]);
            }
            _ => {
                return reply::error(
                    cx,
                    id,
                    Code::METHOD_NOT_ALLOWED,
                    "/echo answers GET, PUT, POST, FETCH and DELETE",
                )
            }
        };
        let shown = [format.unwrap_or(ContentFormat::TEXT_PLAIN)];
        if negotiation::choose(asked.accept, &shown).is_none() {
            return negotiation::refuse(cx, id, &shown);
        }
        let etag = self.echo_etag.map(u32::to_be_bytes);
        let tagged = [opt(
            OptionNumber::ETAG,
            etag.as_ref().map_or(&[][..], |t| &t[..]),
        )];
        let etag_option = if etag.is_some() && asked.method != Code::FETCH {
            &tagged[..]
        } else {
            &[]
        };
        reply::content(cx, id, None, code, format, etag_option, payload);
    }

    /// Takes the next reading and writes it into the scratch buffer in `format`.
    fn next_reading(&mut self, format: ContentFormat) {
        let tenths = temperature_tenths(self.readings);
        self.readings += 1;
        self.scratch.clear();
        let (whole, tenth) = (tenths / 10, tenths % 10);
        // Writing into a Vec cannot fail.
        let _ = match format {
            ContentFormat::SENML_JSON => write!(
                self.scratch,
                r#"[{{"n":"temp","u":"Cel","v":{whole}.{tenth}}}]"#
            ),
            _ => write!(self.scratch, "{whole}.{tenth}"),
        };
    }
}

impl App for DemoApp {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.arm_second_timer(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Request(id) => self.on_request(cx, id),
            Event::Timer(SECOND_TIMER) => self.on_second(cx),
            _ => {}
        }
    }

    fn serves(&self, request: &Received<'_>) -> bool {
        DemoResource::of(request).is_some()
    }
}

/// Sends `text` to every observer of `resource`.
fn notify_text(cx: &mut AppContext<'_>, resource: u64, text: &[u8]) {
    let mut cf = [0u8; 4];
    let options = [ContentFormat::TEXT_PLAIN.option(&mut cf)];
    let response = Response {
        code: Code::CONTENT,
        options: &options,
        payload: text,
    };
    cx.endpoint.notify(cx.now, resource, &response);
}

/// Reading `n` in tenths of a degree: plausible, drifting between 19.0 and 24.9.
fn temperature_tenths(n: u64) -> u64 {
    190 + (n.wrapping_mul(7) % 60)
}

/// `size` bytes of numbered lines, so a missing or repeated block shows.
pub fn large_text(size: usize) -> String {
    let mut text = String::with_capacity(size + 64);
    let mut line = 0;
    while text.len() < size {
        let _ = writeln!(
            text,
            "{line:04} The quick brown fox jumps over the lazy dog."
        );
        line += 1;
    }
    text.truncate(size);
    text
}
