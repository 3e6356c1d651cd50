//! The HTTP side of `covey gateway`: the web console (entities, queries, live plots, a
//! resource explorer) and the HTTP–CoAP proxy at `/hc/` that the console and any HTTP
//! client use to reach CoAP servers, the gateway's own Entity Manager included.

pub mod coap_client;
mod console;
mod cross_site;
mod media_type;
mod observe_events;
pub mod proxy;
mod status_map;
mod target_uri;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::routing::{any, get, post};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long the proxy waits for a CoAP response: past the longest confirmable exchange
/// (MAX_TRANSMIT_WAIT, 93 s with RFC 7252's parameters), so the CoAP side times out first.
pub const PROXY_TIMEOUT: Duration = Duration::from_secs(100);

/// Observations held open through the proxy at once (each is one CoAP exchange and one
/// HTTP stream).
pub const MAX_OBSERVATIONS: usize = 64;

/// What the HTTP handlers share.
pub struct WebState {
    /// The CoAP client the proxy sends with.
    client: covey::Client,
    /// `coap://host:port` of the gateway's own Entity Manager.
    em_uri: String,
    /// Largest request body forwarded (the CoAP side's block-wise limit).
    max_body: usize,
    /// How long to wait for a CoAP response.
    timeout: Duration,
    /// Permits for open observations.
    observations: Arc<Semaphore>,
}

/// A bound, not yet serving, HTTP side.
pub struct WebServer {
    listener: TcpListener,
    router: Router,
}

impl WebServer {
    /// Binds `addr`; the proxy sends through `client`, the console manages the EM at `em_uri`.
    pub async fn bind(
        addr: SocketAddr,
        client: covey::Client,
        em_uri: String,
        max_body: usize,
    ) -> std::io::Result<WebServer> {
        let listener = TcpListener::bind(addr).await?;
        let state = Arc::new(WebState {
            client,
            em_uri,
            max_body,
            timeout: PROXY_TIMEOUT,
            observations: Arc::new(Semaphore::new(MAX_OBSERVATIONS)),
        });
        Ok(WebServer {
            listener,
            router: router(state, max_body),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves on the current runtime until the process ends.
    pub fn spawn(self) {
        tokio::spawn(async move {
            if let Err(e) = axum::serve(self.listener, self.router).await {
                tracing::error!("the web console stopped: {e}");
            }
        });
    }
}

fn router(state: Arc<WebState>, max_body: usize) -> Router {
    Router::new()
        .route("/", get(console::index))
        .route("/console.js", get(console::script))
        .route("/console.css", get(console::style))
        .route("/api/info", get(console::info))
        .route("/api/render", post(console::render))
        .route("/hc", any(proxy::forward))
        .route("/hc/", any(proxy::forward))
        .route("/hc/{*target}", any(proxy::forward))
        .layer(axum::middleware::from_fn(cross_site::same_origin_only))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state)
}
