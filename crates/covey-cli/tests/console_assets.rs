//! The web console's files as `covey gateway` serves them, without a browser: the page, its
//! script and style and the vendored uPlot, each with its content type and the same cache
//! header, and the page loading uPlot from where it is served.

mod gateway_support;
mod support;

use std::time::Duration;

use gateway_support::{gateway_with_http, Scratch};
use reqwest::blocking::Client;
use reqwest::StatusCode;

/// Path, content type and a text the body holds.
const ASSETS: [(&str, &str, &str); 5] = [
    (
        "/",
        "text/html; charset=utf-8",
        "<title>Covey console</title>",
    ),
    (
        "/console.js",
        "text/javascript; charset=utf-8",
        "\"use strict\"",
    ),
    ("/console.css", "text/css; charset=utf-8", "body"),
    (
        "/vendor/uplot/uPlot.iife.min.js",
        "text/javascript; charset=utf-8",
        "var uPlot=",
    ),
    (
        "/vendor/uplot/uPlot.min.css",
        "text/css; charset=utf-8",
        ".uplot",
    ),
];

fn header(r: &reqwest::blocking::Response, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

#[test]
fn the_console_and_the_vendored_uplot_are_served_with_their_types() {
    let scratch = Scratch::new("console-assets");
    let (_gateway, base) = gateway_with_http(&scratch.join("e.db"));
    let client = Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("HTTP client");
    let mut headers = Vec::new();
    let mut page = String::new();
    for (path, content_type, needle) in ASSETS {
        let r = client.get(format!("{base}{path}")).send().unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert_eq!(
            header(&r, "content-type").as_deref(),
            Some(content_type),
            "{path}"
        );
        let mut others: Vec<(String, String)> = r
            .headers()
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "content-type" | "content-length" | "date"))
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        others.sort();
        headers.push((path, others));
        let body = r.text().unwrap();
        assert!(body.contains(needle), "{path} holds {needle}");
        if path == "/" {
            page = body;
        }
    }
    let (first, rest) = headers.split_first().unwrap();
    assert!(
        first
            .1
            .iter()
            .any(|(k, v)| k == "cache-control" && v == "no-cache"),
        "{first:?}"
    );
    for h in rest {
        assert_eq!(h.1, first.1, "{} has the headers of {}", h.0, first.0);
    }
    for (path, _, _) in &ASSETS[1..] {
        assert!(
            page.contains(&format!("\"{path}\"")),
            "the page loads {path}"
        );
    }
}
