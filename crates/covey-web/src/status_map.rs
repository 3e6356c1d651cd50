//! CoAP response codes as HTTP status codes (RFC 8075 §7, Table 4 and the 4.22/4.29 codes
//! registered since).

use axum::http::StatusCode;
use covey_core::Code;

/// The HTTP status for CoAP `code`; `has_body` picks 204 for an empty 2.02/2.04.
pub fn http_status(code: Code, has_body: bool) -> StatusCode {
    match (code.class(), code.detail()) {
        (2, 1) => StatusCode::CREATED,
        (2, 2) | (2, 4) if !has_body => StatusCode::NO_CONTENT,
        // 2.03 Valid answers a conditional request this proxy forwarded unchanged.
        (2, 3) => StatusCode::NOT_MODIFIED,
        (2, _) => StatusCode::OK,
        // RFC 8075: 4.01 Unauthorized becomes 403, since HTTP's 401 demands a challenge.
        (4, 1) | (4, 3) => StatusCode::FORBIDDEN,
        // 4.02 Bad Option and 4.05 (no Allow list to give) and 4.08 are client errors.
        (4, 0) | (4, 2) | (4, 5) | (4, 8) => StatusCode::BAD_REQUEST,
        (4, 4) => StatusCode::NOT_FOUND,
        (4, 6) => StatusCode::NOT_ACCEPTABLE,
        (4, 9) => StatusCode::CONFLICT,
        (4, 12) => StatusCode::PRECONDITION_FAILED,
        (4, 13) => StatusCode::PAYLOAD_TOO_LARGE,
        (4, 15) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        (4, 22) => StatusCode::UNPROCESSABLE_ENTITY,
        (4, 29) => StatusCode::TOO_MANY_REQUESTS,
        (4, _) => StatusCode::BAD_REQUEST,
        (5, 1) => StatusCode::NOT_IMPLEMENTED,
        (5, 2) | (5, 5) => StatusCode::BAD_GATEWAY,
        (5, 3) => StatusCode::SERVICE_UNAVAILABLE,
        (5, 4) => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The CoAP method for an HTTP method (RFC 8075 §7.1, RFC 8132 for PATCH), or `None` for
/// those with no CoAP counterpart (CONNECT, OPTIONS, TRACE), which get 501.
pub fn coap_method(method: &axum::http::Method) -> Option<Code> {
    match method.as_str() {
        // HEAD is a GET whose body the HTTP side drops.
        "GET" | "HEAD" => Some(Code::GET),
        "POST" => Some(Code::POST),
        "PUT" => Some(Code::PUT),
        "DELETE" => Some(Code::DELETE),
        "FETCH" => Some(Code::FETCH),
        "PATCH" => Some(Code::PATCH),
        "IPATCH" => Some(Code::IPATCH),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    #[test]
    fn success_codes_follow_the_table() {
        assert_eq!(http_status(Code::CREATED, false), StatusCode::CREATED);
        assert_eq!(http_status(Code::DELETED, false), StatusCode::NO_CONTENT);
        assert_eq!(http_status(Code::DELETED, true), StatusCode::OK);
        assert_eq!(http_status(Code::CHANGED, false), StatusCode::NO_CONTENT);
        assert_eq!(http_status(Code::CONTENT, true), StatusCode::OK);
        assert_eq!(http_status(Code::VALID, false), StatusCode::NOT_MODIFIED);
    }

    #[test]
    fn error_codes_follow_the_table() {
        let cases = [
            (Code::BAD_REQUEST, 400),
            (Code::UNAUTHORIZED, 403),
            (Code::BAD_OPTION, 400),
            (Code::FORBIDDEN, 403),
            (Code::NOT_FOUND, 404),
            (Code::METHOD_NOT_ALLOWED, 400),
            (Code::NOT_ACCEPTABLE, 406),
            (Code::REQUEST_ENTITY_INCOMPLETE, 400),
            (Code::CONFLICT, 409),
            (Code::PRECONDITION_FAILED, 412),
            (Code::REQUEST_ENTITY_TOO_LARGE, 413),
            (Code::UNSUPPORTED_CONTENT_FORMAT, 415),
            (Code::UNPROCESSABLE_ENTITY, 422),
            (Code::TOO_MANY_REQUESTS, 429),
            (Code::INTERNAL_SERVER_ERROR, 500),
            (Code::NOT_IMPLEMENTED, 501),
            (Code::BAD_GATEWAY, 502),
            (Code::SERVICE_UNAVAILABLE, 503),
            (Code::GATEWAY_TIMEOUT, 504),
            (Code::PROXYING_NOT_SUPPORTED, 502),
        ];
        for (code, status) in cases {
            assert_eq!(http_status(code, true).as_u16(), status, "{code:?}");
        }
    }

    #[test]
    fn methods_without_a_coap_counterpart_are_refused() {
        assert_eq!(coap_method(&Method::HEAD), Some(Code::GET));
        assert_eq!(coap_method(&Method::PATCH), Some(Code::PATCH));
        assert_eq!(coap_method(&Method::OPTIONS), None);
        assert_eq!(coap_method(&Method::TRACE), None);
        assert_eq!(coap_method(&Method::CONNECT), None);
    }
}
