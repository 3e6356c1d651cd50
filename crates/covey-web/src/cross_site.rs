//! Protection against cross-site requests: any page a browser shows can make it send
//! requests to the console, GET included, and through the proxy a GET sends chosen bytes to
//! a chosen UDP port. So a request is refused when the browser says it comes from another
//! site (`Sec-Fetch-Site`) or names another origin (`Origin` versus `Host`), whatever its
//! method; only a navigation to the console page itself may come from elsewhere (a link).
//! Clients that are no browser (curl, scripts) send neither header and pass.

use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Middleware: lets same-origin requests through, answers 403 to the others.
pub async fn same_origin_only(request: Request, next: Next) -> Response {
    if is_same_origin(request.headers()) || is_page_navigation(&request) {
        next.run(request).await
    } else {
        (
            StatusCode::FORBIDDEN,
            "cross-site request refused: the console and its proxy answer only requests from \
             the console's own pages or from clients that are no browser\n",
        )
            .into_response()
    }
}

/// A browser opening the console page from a link: harmless, it changes nothing.
fn is_page_navigation(request: &Request) -> bool {
    let text = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
    matches!(*request.method(), Method::GET | Method::HEAD)
        && request.uri().path() == "/"
        && text("sec-fetch-mode") == Some("navigate")
        && text(header::ORIGIN.as_str()).is_none()
}

/// True unless the headers show a request from another origin.
fn is_same_origin(headers: &HeaderMap) -> bool {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site")) {
        if site != "same-origin" && site != "none" {
            return false;
        }
    }
    match (text(header::ORIGIN), text(header::HOST)) {
        (None, _) => true,
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(host)),
        (Some(_), None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn browsers_from_another_site_are_refused() {
        for site in ["cross-site", "same-site"] {
            assert!(!is_same_origin(&headers(&[("sec-fetch-site", site)])));
        }
        assert!(!is_same_origin(&headers(&[
            ("origin", "http://evil.example"),
            ("host", "127.0.0.1:8080")
        ])));
        assert!(!is_same_origin(&headers(&[("origin", "null")])));
        // A same-origin claim does not excuse a foreign Origin.
        assert!(!is_same_origin(&headers(&[
            ("sec-fetch-site", "same-origin"),
            ("origin", "http://evil.example"),
            ("host", "127.0.0.1:8080")
        ])));
    }

    #[test]
    fn the_console_itself_and_plain_clients_pass() {
        assert!(is_same_origin(&headers(&[(
            "sec-fetch-site",
            "same-origin"
        )])));
        assert!(is_same_origin(&headers(&[("sec-fetch-site", "none")])));
        assert!(is_same_origin(&headers(&[
            ("origin", "http://127.0.0.1:8080"),
            ("host", "127.0.0.1:8080")
        ])));
        assert!(is_same_origin(&HeaderMap::new()));
    }

    #[test]
    fn only_the_console_page_may_be_opened_from_a_link() {
        let navigate = |method: Method, path: &str| {
            let mut r = Request::builder().method(method).uri(path);
            r = r
                .header("sec-fetch-site", "cross-site")
                .header("sec-fetch-mode", "navigate");
            r.body(Body::empty()).unwrap()
        };
        assert!(is_page_navigation(&navigate(Method::GET, "/")));
        assert!(!is_page_navigation(&navigate(
            Method::GET,
            "/hc/coap://127.0.0.1:11211/x"
        )));
        assert!(!is_page_navigation(&navigate(Method::POST, "/")));
    }
}
