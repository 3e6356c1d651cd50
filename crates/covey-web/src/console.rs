//! The web console: its page, script and style and the vendored uPlot that draws its chart
//! (embedded in the binary, so it works offline), and the two small JSON endpoints the page
//! needs besides the proxy.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Json, Response};
use covey_core::ContentFormat;
use serde::Deserialize;
use serde_json::json;

use super::WebState;
use covey_render::payload::Payload;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/console.js");
const STYLE: &str = include_str!("assets/console.css");
const UPLOT_SCRIPT: &str = include_str!("assets/vendor/uplot/uPlot.iife.min.js");
const UPLOT_STYLE: &str = include_str!("assets/vendor/uplot/uPlot.min.css");

/// `/`: the console page.
pub async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

/// `/console.js`.
pub async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

/// `/console.css`.
pub async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

/// `/vendor/uplot/uPlot.iife.min.js`: uPlot, which draws the live chart.
pub async fn uplot_script() -> Response {
    asset("text/javascript; charset=utf-8", UPLOT_SCRIPT)
}

/// `/vendor/uplot/uPlot.min.css`: uPlot's style.
pub async fn uplot_style() -> Response {
    asset("text/css; charset=utf-8", UPLOT_STYLE)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// `/api/info`: where the gateway's own Entity Manager is reached over CoAP.
pub async fn info(State(web): State<Arc<WebState>>) -> Json<serde_json::Value> {
    Json(json!({ "em": web.em_uri, "version": env!("CARGO_PKG_VERSION") }))
}

/// The query of `/api/render`.
#[derive(Debug, Deserialize)]
pub struct RenderQuery {
    /// The payload's Content-Format number, if it has one.
    cf: Option<u16>,
}

/// `POST /api/render?cf=N`: a payload decoded for people (JSON pretty, CBOR in diagnostic
/// notation, link format split, binary as hex), as the CLI shows it.
pub async fn render(Query(query): Query<RenderQuery>, body: Bytes) -> Json<serde_json::Value> {
    let payload = Payload::new(&body, query.cf.map(ContentFormat));
    Json(json!({ "json": payload.to_json(), "text": payload.body_text(false) }))
}
