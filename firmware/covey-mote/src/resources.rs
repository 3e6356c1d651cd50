//! The node's resources, as an App of the engine: the demo node of paper 000's entities.
//!
//! - `/sensors/temp`: a temperature in tenths of a degree shown as text (`21.5`), observable,
//!   changing every 5 s (a simulated sensor: the emulated board has none);
//! - `/actuators/led`: `0` or `1`, GET and PUT;
//! - `/mote/stats`: the footprint as `key=value` lines (heap in use and peak, stack peak,
//!   static RAM, uptime, frames dropped, times the
//!   serial line was held back), so a test reads it over CoAP;
//! - `/mc` (with the `multicast` feature): the multicast groups the mote joined
//!   (`membership`);
//! - `/.well-known/core`: the others in CoRE link format (RFC 6690).

use covey_core::{Code, ContentFormat, OptionNumber};
use covey_proto::{App, AppContext, Duration, Event, IncomingId, Response};

use crate::text::Text;
use crate::{clock, heap, slip_line, stack, uart};

/// The links `/.well-known/core` lists.
#[cfg(feature = "multicast")]
const LINKS: &[u8] = b"</sensors/temp>;rt=\"temperature-c\";if=\"sensor\";obs;ct=0,\
</actuators/led>;if=\"actuator\";ct=0,</mote/stats>;ct=0,</mc>;rt=\"core.mc\"";
/// The server build's: the same without `/mc`.
#[cfg(not(feature = "multicast"))]
const LINKS: &[u8] = b"</sensors/temp>;rt=\"temperature-c\";if=\"sensor\";obs;ct=0,\
</actuators/led>;if=\"actuator\";ct=0,</mote/stats>;ct=0";

/// The observe resource number of `/sensors/temp`.
const TEMP: u64 = 1;
/// How often the reading changes.
const SAMPLE: Duration = Duration::from_secs(5);
/// The sawtooth's length in samples: a tenth of a degree each, 20.5 to 22.4.
const SAWTOOTH: u8 = 20;
/// The timer value of a sample.
const SAMPLE_TIMER: u64 = 1;

/// The mote's state behind its resources.
pub struct MoteResources {
    led: bool,
    /// Samples taken, modulo the sawtooth: counted rather than derived from the clock,
    /// whose milliseconds would take a 64-bit division (a software routine on Cortex-M3).
    step: u8,
}

impl MoteResources {
    /// Resources at start: LED off, the reading at the sawtooth's start.
    pub const fn new() -> MoteResources {
        MoteResources {
            led: false,
            step: 0,
        }
    }

    fn sample_at(&mut self, cx: &mut AppContext<'_>) {
        let next = cx.now + SAMPLE;
        let _ = cx.set_timer(next, SAMPLE_TIMER);
    }

    fn serve(&mut self, cx: &mut AppContext<'_>, id: IncomingId) {
        let Some((resource, code, led_put)) = read_request(cx, id) else {
            return;
        };
        let mut text = Text::<160>::new();
        match (resource, code) {
            (Resource::Core, Code::GET) => {
                reply(cx, id, None, ContentFormat::LINK_FORMAT, LINKS);
            }
            (Resource::Temperature, Code::GET) => {
                let _ = write_temperature(&mut text, self.step);
                reply(cx, id, Some(TEMP), ContentFormat::TEXT_PLAIN, text.bytes());
            }
            (Resource::Led, Code::GET) => {
                let state: &[u8] = if self.led { b"1" } else { b"0" };
                reply(cx, id, None, ContentFormat::TEXT_PLAIN, state);
            }
            (Resource::Led, Code::PUT) => match led_put {
                Some(on) => {
                    self.led = on;
                    let _ = cx
                        .endpoint
                        .respond(cx.now, id, &Response::new(Code::CHANGED));
                }
                None => error(cx, id, Code::BAD_REQUEST, b"send 0 or 1"),
            },
            (Resource::Stats, Code::GET) => {
                let stats: [(&[u8], u64); 7] = [
                    (b"heap_used", heap::HEAP.used() as u64),
                    (b"heap_peak", heap::HEAP.peak() as u64),
                    (b"stack_peak", stack::peak() as u64),
                    (b"static_ram", stack::static_bytes() as u64),
                    (b"uptime_ms", clock::now_ms()),
                    (b"frames_dropped", u64::from(slip_line::dropped())),
                    (b"line_paused", u64::from(uart::pauses())),
                ];
                for (key, value) in stats {
                    let _ = text.push(key)
                        && text.push(b"=")
                        && text.decimal(value)
                        && text.push(b"\n");
                }
                reply(cx, id, None, ContentFormat::TEXT_PLAIN, text.bytes());
            }
            #[cfg(feature = "multicast")]
            (Resource::Membership, code) => crate::membership::serve(cx, id, code),
            (Resource::Unknown, _) => error(cx, id, Code::NOT_FOUND, b""),
            _ => error(cx, id, Code::METHOD_NOT_ALLOWED, b""),
        }
    }
}

/// What request `id` asks for: the resource its path names, its method, and the LED state
/// its payload sets.
fn read_request(cx: &AppContext<'_>, id: IncomingId) -> Option<(Resource, Code, Option<bool>)> {
    let request = cx.endpoint.request(id)?;
    let mut path = request.message.options_of(OptionNumber::URI_PATH);
    let resource = match (path.next(), path.next(), path.next()) {
        (Some(b".well-known"), Some(b"core"), None) => Resource::Core,
        (Some(b"sensors"), Some(b"temp"), None) => Resource::Temperature,
        (Some(b"actuators"), Some(b"led"), None) => Resource::Led,
        (Some(b"mote"), Some(b"stats"), None) => Resource::Stats,
        #[cfg(feature = "multicast")]
        (Some(b"mc"), None, None) => Resource::Membership,
        _ => Resource::Unknown,
    };
    let led = match request.payload() {
        b"1" => Some(true),
        b"0" => Some(false),
        _ => None,
    };
    Some((resource, request.message.code(), led))
}

/// What a request's path names.
#[derive(Clone, Copy)]
enum Resource {
    Core,
    Temperature,
    Led,
    Stats,
    #[cfg(feature = "multicast")]
    Membership,
    Unknown,
}

impl App for MoteResources {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.sample_at(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Request(id) => self.serve(cx, id),
            Event::Timer(SAMPLE_TIMER) => {
                self.step = (self.step + 1) % SAWTOOTH;
                let mut text = Text::<8>::new();
                let _ = write_temperature(&mut text, self.step);
                let mut cf = [0u8; 4];
                let options = [ContentFormat::TEXT_PLAIN.option(&mut cf)];
                let response = Response {
                    options: &options,
                    ..Response::with_payload(Code::CONTENT, text.bytes())
                };
                cx.endpoint.notify(cx.now, TEMP, &response);
                self.sample_at(cx);
            }
            _ => {}
        }
    }
}

/// The simulated reading at sawtooth step `step`: from 20.5 °C, a tenth more every sample
/// through a 2-degree sawtooth, in integers (no floating point on the mote).
fn write_temperature<const N: usize>(text: &mut Text<N>, step: u8) -> bool {
    let tenths = 205 + u64::from(step);
    text.decimal(tenths / 10) && text.push(b".") && text.decimal(tenths % 10)
}

pub(crate) fn reply(
    cx: &mut AppContext<'_>,
    id: IncomingId,
    observed: Option<u64>,
    format: ContentFormat,
    payload: &[u8],
) {
    let mut cf = [0u8; 4];
    let options = [format.option(&mut cf)];
    let response = Response {
        options: &options,
        ..Response::with_payload(Code::CONTENT, payload)
    };
    let _ = match observed {
        Some(resource) => cx
            .endpoint
            .respond_observable(cx.now, id, resource, &response)
            .map(|_| ()),
        None => cx.endpoint.respond(cx.now, id, &response),
    };
}

pub(crate) fn error(cx: &mut AppContext<'_>, id: IncomingId, code: Code, diagnostic: &[u8]) {
    let _ = cx
        .endpoint
        .respond(cx.now, id, &Response::with_payload(code, diagnostic));
}
