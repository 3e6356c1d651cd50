//! The demo resources of `covey serve`: `/time`, `/sensors/temp`, `/large`, `/echo`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use covey::server::ServerBuilder;
use covey::{Code, ContentFormat, Resource, Response};

/// Size of `/large`: more than 1 KiB, so it travels block-wise.
pub const LARGE_SIZE: usize = 2048;

/// Adds the demo resources to `server`.
pub fn add(server: ServerBuilder) -> ServerBuilder {
    let reading = Arc::new(AtomicU64::new(0));
    server
        .resource(
            "/time",
            Resource::new()
                .rt("time")
                .ct(ContentFormat::TEXT_PLAIN)
                .obs()
                .title("Current UTC time")
                .get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, super::utc_now()) }),
        )
        .resource(
            "/sensors/temp",
            Resource::new()
                .rt("temperature-c")
                .interface("sensor")
                .ct(ContentFormat::TEXT_PLAIN)
                .obs()
                .get(move |_| {
                    let n = reading.fetch_add(1, Ordering::Relaxed);
                    async move { Response::content(ContentFormat::TEXT_PLAIN, temperature(n)) }
                }),
        )
        .resource(
            "/large",
            Resource::new()
                .rt("block")
                .ct(ContentFormat::TEXT_PLAIN)
                .sz(LARGE_SIZE as u32)
                .get(|_| async {
                    Response::content(ContentFormat::TEXT_PLAIN, large_text(LARGE_SIZE))
                }),
        )
        .resource(
            "/echo",
            Resource::new()
                .title("Echoes PUT and POST payloads")
                .put(|req| async move { echo(Code::CHANGED, req) })
                .post(|req| async move { echo(Code::CHANGED, req) }),
        )
}

fn echo(code: Code, req: covey::Request) -> Response {
    let mut r = Response::new(code).with_payload(req.payload.clone());
    if let Some(cf) = req.content_format() {
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
