//! The demo resources of `covey serve`: `/time`, `/sensors/temp` (text, JSON or SenML),
//! `/large`, `/echo` (every method).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use covey::server::ServerBuilder;
use covey::{Code, ContentFormat, Resource, Response};

use super::negotiation;

/// Size of `/large`: more than 1 KiB, so it travels block-wise.
pub const LARGE_SIZE: usize = 2048;

/// Formats `/sensors/temp` offers, the notified one first.
const TEMPERATURE_FORMATS: [ContentFormat; 3] = [
    ContentFormat::TEXT_PLAIN,
    ContentFormat::JSON,
    ContentFormat::SENML_JSON,
];

/// What `/echo` holds: the last payload PUT or POSTed and its format.
type Stored = Arc<Mutex<(Vec<u8>, Option<ContentFormat>)>>;

/// Adds the demo resources to `server`.
pub fn add(server: ServerBuilder) -> ServerBuilder {
    let reading = Arc::new(AtomicU64::new(0));
    let stored = Stored::default();
    let (put_store, post_store, delete_store) = (stored.clone(), stored.clone(), stored.clone());
    let mut temperature_resource = Resource::new().rt("temperature-c").interface("sensor");
    for format in TEMPERATURE_FORMATS {
        temperature_resource = temperature_resource.ct(format);
    }
    server
        .resource(
            "/time",
            Resource::new()
                .rt("time")
                .ct(ContentFormat::TEXT_PLAIN)
                .obs()
                .title("Current UTC time")
                .get(|req| async move { text_only(&req, super::utc_now) }),
        )
        .resource(
            "/sensors/temp",
            temperature_resource.obs().get(move |req| {
                let n = reading.fetch_add(1, Ordering::Relaxed);
                async move { temperature_in(&req, n) }
            }),
        )
        .resource(
            "/large",
            Resource::new()
                .rt("block")
                .ct(ContentFormat::TEXT_PLAIN)
                .sz(LARGE_SIZE as u32)
                .get(|req| async move { text_only(&req, || large_text(LARGE_SIZE)) }),
        )
        .resource(
            "/echo",
            Resource::new()
                .title("Echoes PUT, POST and FETCH payloads; GET returns the last one stored")
                .get(move |req| {
                    let (payload, format) =
                        stored.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    async move { echo(Code::CONTENT, &req, payload, format) }
                })
                .put(move |req| {
                    store(&put_store, &req);
                    async move {
                        echo(
                            Code::CHANGED,
                            &req,
                            req.payload.clone(),
                            req.content_format(),
                        )
                    }
                })
                .post(move |req| {
                    store(&post_store, &req);
                    async move {
                        echo(
                            Code::CHANGED,
                            &req,
                            req.payload.clone(),
                            req.content_format(),
                        )
                    }
                })
                .fetch(|req| async move {
                    echo(
                        Code::CONTENT,
                        &req,
                        req.payload.clone(),
                        req.content_format(),
                    )
                })
                .delete(move |_| {
                    *delete_store.lock().unwrap_or_else(|e| e.into_inner()) = Default::default();
                    async { Response::new(Code::DELETED) }
                }),
        )
}

/// A text/plain representation made by `text`, or 4.06 for any other Accept.
fn text_only(req: &covey::Request, text: impl FnOnce() -> String) -> Response {
    match negotiation::choose(req, &[ContentFormat::TEXT_PLAIN]) {
        Ok(format) => Response::content(format, text()),
        Err(not_acceptable) => not_acceptable,
    }
}

/// Reading `n` as text, a JSON number or a SenML pack, as the Accept option asks.
fn temperature_in(req: &covey::Request, n: u64) -> Response {
    let format = match negotiation::choose(req, &TEMPERATURE_FORMATS) {
        Ok(format) => format,
        Err(not_acceptable) => return not_acceptable,
    };
    let value = temperature(n);
    let body = match format {
        ContentFormat::SENML_JSON => format!(r#"[{{"n":"temp","u":"Cel","v":{value}}}]"#),
        _ => value,
    };
    Response::content(format, body)
}

fn store(stored: &Stored, req: &covey::Request) {
    *stored.lock().unwrap_or_else(|e| e.into_inner()) = (req.payload.clone(), req.content_format());
}

/// `payload` back in its own format (4.06 when Accept asks for another).
fn echo(
    code: Code,
    req: &covey::Request,
    payload: Vec<u8>,
    format: Option<ContentFormat>,
) -> Response {
    let shown = format.unwrap_or(ContentFormat::TEXT_PLAIN);
    if let Err(not_acceptable) = negotiation::choose(req, &[shown]) {
        return not_acceptable;
    }
    let mut r = Response::new(code).with_payload(payload);
    if let Some(cf) = format {
        r = r.with_content_format(cf);
    }
    r
}

/// A plausible reading that drifts between 19.0 and 24.9 degrees.
fn temperature(n: u64) -> String {
    let tenths = 190 + (n.wrapping_mul(7) % 60);
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// `size` bytes of numbered lines, so a missing or repeated block shows.
pub fn large_text(size: usize) -> String {
    let mut text = String::with_capacity(size + 64);
    let mut line = 0;
    while text.len() < size {
        text.push_str(&format!(
            "{line:04} The quick brown fox jumps over the lazy dog.\n"
        ));
        line += 1;
    }
    text.truncate(size);
    text
}
