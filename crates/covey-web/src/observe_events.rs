//! CoAP Observe (RFC 7641) as Server-Sent Events: each notification is one event named after
//! its response code, with the Observe number as its id and the payload rendered as text
//! (CBOR in diagnostic notation, other binary data as hex). Closing the HTTP stream ends the
//! observation.

use std::convert::Infallible;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use covey::client::Target;
use covey_core::Code;

use super::proxy::{coap_failure, failure};
use super::WebState;
use covey_render::payload::Payload;

/// Observes `target` (resolved as `resolved`) and streams its notifications; at most
/// `web.observations` at once.
pub async fn stream(web: &Arc<WebState>, target: String, resolved: Target) -> Response {
    let Ok(permit) = web.observations.clone().try_acquire_owned() else {
        return failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many observations through this gateway at once",
        );
    };
    let responses = match web
        .client
        .request(Code::GET, target)
        .resolved(resolved)
        .observe()
        .await
    {
        Ok(s) => s,
        Err(e) => return coap_failure(e),
    };
    let events = futures_util::stream::unfold(Some((responses, permit)), |state| async move {
        let (mut responses, permit) = state?;
        let event = match responses.next().await? {
            Ok(r) => notification(&r),
            // The stream ends after a failure: nothing more will come.
            Err(e) => {
                return Some((
                    Ok(Event::default().event("error").data(e.to_string())),
                    None,
                ))
            }
        };
        Some((Ok::<_, Infallible>(event), Some((responses, permit))))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// One notification as an event.
fn notification(response: &covey::Response) -> Event {
    let code = format!("{}.{:02}", response.code.class(), response.code.detail());
    let text = Payload::new(&response.payload, response.content_format()).body_text(false);
    let mut event = Event::default().event(code).data(text.trim_end());
    if let Some(n) = response.observe() {
        event = event.id(n.to_string());
    }
    event
}
