//! Sending a response from an App: options built on the stack, and a response that cannot
//! be sent logged rather than lost silently.

use covey_core::{uint, CoapOption, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, AppContext, IncomingId, LogLevel, RespondError, Response};

/// The Content-Format option for `format`, its value encoded into `buf`.
pub fn format_option(format: ContentFormat, buf: &mut [u8; 4]) -> CoapOption<'_> {
    opt(
        OptionNumber::CONTENT_FORMAT,
        uint::encode(u32::from(format.0), buf),
    )
}

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

/// Answers `id` with `code` and `payload` in `format` (no Content-Format when `None`).
pub fn content(
    cx: &mut AppContext<'_>,
    id: IncomingId,
    observed: Option<u64>,
    code: Code,
    format: Option<ContentFormat>,
    payload: &[u8],
) {
    let mut cf = [0u8; 4];
    let option;
    let options: &[CoapOption<'_>] = match format {
        Some(f) => {
            option = [format_option(f, &mut cf)];
            &option
        }
        None => &[],
    };
    let response = Response {
        code,
        options,
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
