//! Sending a response from an App: options built on the stack, and a response that cannot
//! be sent logged rather than lost silently.

use covey_core::{CoapOption, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, AppContext, IncomingId, LogLevel, RespondError, Response};

/// Sends `response` to request `id`; through the observe registry of `observed` when the
/// resource is observable (RFC 7641 §4.1), so a GET with Observe registers.
pub fn send(
    cx: &mut AppContext<'_>,
    id: IncomingId,
    observed: Option<u64>,
    response: &Response<'_>,
) {
    let sent = match observed {
        Some(resource) => cx
            .endpoint
            .respond_observable(cx.now, id, resource, response)
            .map(|_| ()),
        None => cx.endpoint.respond(cx.now, id, response),
    };
    match sent {
        Ok(()) => {}
        Err(RespondError::TooLarge) => cx.log(
            LogLevel::Warn,
            format_args!(
                "response of {} bytes too large to send",
                response.payload.len()
            ),
        ),
        Err(e) => cx.log(LogLevel::Debug, format_args!("response not sent: {e}")),
    }
}

/// The most options [`content`] sends besides Content-Format.
const MAX_EXTRA_OPTIONS: usize = 3;

/// Answers `id` with `code` and `payload` in `format` (no Content-Format when `None`) and
/// up to three `extra` options (ETag, Max-Age, Location-*), all on the stack.
pub fn content(
    cx: &mut AppContext<'_>,
    id: IncomingId,
    observed: Option<u64>,
    code: Code,
    format: Option<ContentFormat>,
    extra: &[CoapOption<'_>],
    payload: &[u8],
) {
    let mut cf = [0u8; 4];
    let mut options = [opt(OptionNumber::CONTENT_FORMAT, &[]); 1 + MAX_EXTRA_OPTIONS];
    let mut count = 0;
    if let Some(f) = format {
        options[0] = f.option(&mut cf);
        count = 1;
    }
    debug_assert!(extra.len() <= MAX_EXTRA_OPTIONS);
    for option in extra.iter().take(MAX_EXTRA_OPTIONS) {
        options[count] = *option;
        count += 1;
    }
    let response = Response {
        code,
        options: &options[..count],
        payload,
    };
    send(cx, id, observed, &response);
}

/// Answers `id` with error `code` and a diagnostic text (RFC 7252 §5.5.2).
pub fn error(cx: &mut AppContext<'_>, id: IncomingId, code: Code, diagnostic: &str) {
    send(
        cx,
        id,
        None,
        &Response::with_payload(code, diagnostic.as_bytes()),
    );
}
