//! The HTTP–CoAP proxy (RFC 8075) at `/hc/`: an HTTP request becomes a CoAP request to the
//! target URI, the CoAP response an HTTP response. Block-wise transfers happen on the CoAP
//! side, out of the HTTP client's sight; `Accept: text/event-stream` turns a GET into an
//! observation streamed as Server-Sent Events.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use covey::{Error, OptionNumber};
use covey_core::Code;

use super::media_type;
use super::observe_events;
use super::proxy_reach;
use super::status_map::{coap_method, http_status};
use super::target_uri::{self, TargetError};
use super::WebState;

/// The header carrying the CoAP response code as CoAP writes it (`2.05`), for clients that
/// want more than the HTTP status says.
pub const COAP_CODE_HEADER: &str = "coap-code";

/// Forwards one HTTP request to its CoAP target and answers with the mapped response.
pub async fn forward(State(web): State<Arc<WebState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("", |p| p.as_str());
    let target = match target_uri::target(path) {
        Ok(t) => t,
        Err(e @ TargetError::Scheme(_)) => return failure(StatusCode::NOT_IMPLEMENTED, e),
        Err(e) => return failure(StatusCode::BAD_REQUEST, e),
    };
    let Some(method) = coap_method(&parts.method) else {
        return failure(
            StatusCode::NOT_IMPLEMENTED,
            format!("{} has no CoAP counterpart", parts.method),
        );
    };
    let text = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let format = match media_type::content_format(text(header::CONTENT_TYPE)) {
        Ok(f) => f,
        Err(m) => {
            return failure(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("no CoAP Content-Format for {m}"),
            )
        }
    };
    let resolved = match covey::client::resolve(&target).await {
        Ok(r) => r,
        Err(e) => return coap_failure(e),
    };
    if let Some((status, why)) = proxy_reach::refusal(resolved.remote, web.proxy_multicast) {
        return failure(status, why);
    }
    let accept_header = text(header::ACCEPT);
    if method == Code::GET && accept_header.is_some_and(|a| a.contains("text/event-stream")) {
        return observe_events::stream(&web, target, resolved).await;
    }
    let payload = match axum::body::to_bytes(body, web.max_body).await {
        Ok(b) => b,
        Err(_) => {
            return failure(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is over {} bytes", web.max_body),
            )
        }
    };
    let mut coap = web
        .client
        .request(method, target.clone())
        .resolved(resolved)
        .timeout(web.timeout)
        .payload(payload.to_vec());
    if let Some(cf) = format {
        coap = coap.content_format(cf);
    }
    if let Some(cf) = media_type::accept(accept_header) {
        coap = coap.accept(cf);
    }
    if let Some(tag) = text(header::IF_MATCH).and_then(etag_bytes) {
        coap = coap.if_match(tag);
    }
    if text(header::IF_NONE_MATCH) == Some("*") {
        coap = coap.if_none_match();
    }
    match coap.send().await {
        Ok(response) => http_response(response, &target),
        Err(e) => coap_failure(e),
    }
}

/// The HTTP form of a CoAP `response` to a request for `target`.
fn http_response(response: covey::Response, target: &str) -> Response {
    let status = http_status(response.code, !response.payload.is_empty());
    let mut headers = HeaderMap::new();
    let code = format!("{}.{:02}", response.code.class(), response.code.detail());
    insert(&mut headers, COAP_CODE_HEADER, &code);
    let format = response.content_format();
    if !response.payload.is_empty() {
        // A diagnostic payload (an error without Content-Format) is UTF-8 text (RFC 7252 §5.5.2).
        let content_type = match format {
            None if response.code.is_error() => "text/plain; charset=utf-8",
            f => media_type::content_type(f),
        };
        insert(&mut headers, header::CONTENT_TYPE.as_str(), content_type);
    }
    if let Some(tag) = response.options.get(OptionNumber::ETAG) {
        insert(
            &mut headers,
            header::ETAG.as_str(),
            &format!("\"{}\"", hex(tag)),
        );
    }
    if let Some(age) = response.options.uint(OptionNumber::MAX_AGE) {
        let value = format!("max-age={age}");
        insert(&mut headers, header::CACHE_CONTROL.as_str(), &value);
    }
    if let Some(location) = location(&response, target) {
        insert(&mut headers, header::LOCATION.as_str(), &location);
    }
    (status, headers, Body::from(response.payload)).into_response()
}

/// The `Location` for a Location-Path/Location-Query, as a proxy URI on the same server.
fn location(response: &covey::Response, target: &str) -> Option<String> {
    let segments: Vec<String> = response
        .options
        .get_all(OptionNumber::LOCATION_PATH)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    if segments.is_empty() {
        return None;
    }
    let after_scheme = target.strip_prefix("coap://")?;
    let authority = after_scheme.split(['/', '?']).next()?;
    let mut uri = format!(
        "{}coap://{authority}/{}",
        target_uri::PREFIX,
        segments.join("/")
    );
    let queries: Vec<String> = response
        .options
        .get_all(OptionNumber::LOCATION_QUERY)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    if !queries.is_empty() {
        uri.push('?');
        uri.push_str(&queries.join("&"));
    }
    Some(uri)
}

/// Why the CoAP side failed, as an HTTP error (RFC 8075 §7.2: a CoAP server that does not
/// answer is 504, one that cannot be reached or breaks the protocol 502).
pub fn coap_failure(e: Error) -> Response {
    let status = match &e {
        Error::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
        Error::Reset(_)
        | Error::Unreachable { .. }
        | Error::Protocol(_)
        | Error::BadResponse { .. }
        | Error::Resolve { .. } => StatusCode::BAD_GATEWAY,
        Error::InvalidUri { .. } | Error::InvalidRequest(_) => StatusCode::BAD_REQUEST,
        Error::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Error::Overload | Error::Shutdown | Error::MessageIdsExhausted(_) => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    failure(status, e)
}

/// An error answered by the proxy itself: one line of text.
pub fn failure(status: StatusCode, why: impl std::fmt::Display) -> Response {
    (status, format!("{why}\n")).into_response()
}

fn insert(headers: &mut HeaderMap, name: &str, value: &str) {
    if let (Ok(name), Ok(value)) = (
        header::HeaderName::try_from(name),
        HeaderValue::try_from(value),
    ) {
        headers.insert(name, value);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of an entity tag written as `"hex"` (the form this proxy gives out).
fn etag_bytes(tag: &str) -> Option<Vec<u8>> {
    let hex = tag.trim().trim_start_matches("W/").trim_matches('"');
    if hex.is_empty() || !hex.len().is_multiple_of(2) || hex.len() > 16 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_tags_round_trip_through_hex() {
        assert_eq!(etag_bytes("\"0a1b\""), Some(vec![0x0a, 0x1b]));
        assert_eq!(
            etag_bytes(&format!("\"{}\"", hex(&[1, 2, 255]))),
            Some(vec![1, 2, 255])
        );
        assert_eq!(etag_bytes("\"xyz\""), None);
        assert_eq!(etag_bytes("\"\""), None);
    }

    #[test]
    fn a_created_resource_is_located_through_the_proxy() {
        let mut r = covey::Response::new(Code::CREATED);
        r.options.push(OptionNumber::LOCATION_PATH, b"e".to_vec());
        r.options.push(OptionNumber::LOCATION_PATH, b"t1".to_vec());
        assert_eq!(
            location(&r, "coap://127.0.0.1:5683/e").as_deref(),
            Some("/hc/coap://127.0.0.1:5683/e/t1")
        );
    }
}
