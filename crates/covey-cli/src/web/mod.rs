//! The HTTP side of `covey gateway`: the web console (entities, queries, live plots, a
//! resource explorer) and the HTTP–CoAP proxy at `/hc/` that the console and any HTTP
//! client use to reach CoAP servers, the gateway's own Entity Manager included.

mod allowed_hosts;
pub mod coap_client;
mod connection_limit;
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

use allowed_hosts::AllowedHosts;
use connection_limit::LimitedListener;

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

/// HTTP connections served at once unless told otherwise: a browser opens about six, and
/// each open observation holds one.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// What the HTTP side serves and whom it answers.
#[derive(Debug, Clone)]
pub struct WebOptions {
    /// `coap://host:port` of the gateway's own Entity Manager.
    pub em_uri: String,
    /// Largest request body forwarded (the CoAP side's block-wise limit).
    pub max_body: usize,
    /// Host names requests may name besides the bound address and localhost.
    pub host_names: Vec<String>,
    /// HTTP connections served at once; further ones wait to be accepted.
    pub max_connections: usize,
}

/// A bound, not yet serving, HTTP side.
pub struct WebServer {
    listener: TcpListener,
    router: Router,
    max_connections: usize,
}

impl WebServer {
    /// Binds `addr`; the proxy sends through `client`.
    pub async fn bind(
        addr: SocketAddr,
        client: covey::Client,
        options: WebOptions,
    ) -> std::io::Result<WebServer> {
        let listener = TcpListener::bind(addr).await?;
        let hosts = AllowedHosts::new(listener.local_addr()?, &options.host_names);
        let state = Arc::new(WebState {
            client,
            em_uri: options.em_uri,
            max_body: options.max_body,
            timeout: PROXY_TIMEOUT,
            observations: Arc::new(Semaphore::new(MAX_OBSERVATIONS)),
        });
        Ok(WebServer {
            listener,
            router: router(state, options.max_body, hosts),
            max_connections: options.max_connections,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves on the current runtime until the process ends.
    pub fn spawn(self) {
        let listener = LimitedListener::new(self.listener, self.max_connections);
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, self.router).await {
                tracing::error!("the web console stopped: {e}");
            }
        });
    }
}

fn router(state: Arc<WebState>, max_body: usize, hosts: AllowedHosts) -> Router {
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
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(hosts),
            allowed_hosts::known_hosts_only,
        ))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state)
}
