//! The HTTP side of `covey gateway`: the web console (entities, queries, live plots, a
//! resource explorer) and the HTTP–CoAP proxy at `/hc/` that the console and any HTTP
//! client use to reach CoAP servers, the gateway's own Entity Manager included.
//!
//! [`WebServer::bind`] takes the CoAP client the proxy sends with (configured by
//! [`coap_client::config`]) and [`WebOptions`]; [`WebServer::spawn`] serves on the current
//! tokio runtime. `covey bench-proxy` runs the same server to measure the proxy.

mod allowed_hosts;
pub mod coap_client;
mod connection_limit;
mod connection_timeouts;
mod console;
mod cross_site;
mod em_uri;
mod media_type;
mod observe_events;
pub mod proxy;
mod proxy_reach;
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
use connection_limit::{ConnectionLimits, LimitedListener};
use connection_timeouts::{ConnectionActivity, ConnectionTimeouts, TimedListener};
pub use em_uri::em_uri;

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
    /// Whether the proxy sends to multicast groups.
    proxy_multicast: bool,
}

/// HTTP connections served at once unless told otherwise: a browser opens about six, and
/// each open observation holds one.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// HTTP connections served at once from one client address (an IPv6 /64) unless told
/// otherwise: a browser opens at most six per site, so one address cannot take them all.
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 32;

/// How long a client has to send a request's head (request line and headers) once it has
/// started, unless told otherwise: a slow sender cannot hold a connection for long.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay open with no request in progress unless told otherwise,
/// the time a browser keeps it alive between requests.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// HTTP connections served at once from one address (an IPv6 /64); further ones are
    /// refused with 503.
    pub max_connections_per_address: usize,
    /// How long a request's head may take to arrive once started.
    pub header_timeout: Duration,
    /// How long a connection may stay open with no request in progress.
    pub idle_timeout: Duration,
    /// Whether the proxy sends to multicast groups.
    pub proxy_multicast: bool,
}

/// A bound, not yet serving, HTTP side.
pub struct WebServer {
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    timeouts: ConnectionTimeouts,
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
            proxy_multicast: options.proxy_multicast,
        });
        Ok(WebServer {
            listener,
            router: router(state, options.max_body, hosts),
            limits: ConnectionLimits {
                total: options.max_connections,
                per_address: options.max_connections_per_address,
            },
            timeouts: ConnectionTimeouts {
                header: options.header_timeout,
                idle: options.idle_timeout,
            },
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves on the current runtime until the process ends.
    pub fn spawn(self) {
        let listener = LimitedListener::new(self.listener, self.limits);
        let listener = TimedListener::new(listener, self.timeouts);
        let service = self
            .router
            .into_make_service_with_connect_info::<ConnectionActivity>();
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, service).await {
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
        .route(
            "/vendor/uplot/uPlot.iife.min.js",
            get(console::uplot_script),
        )
        .route("/vendor/uplot/uPlot.min.css", get(console::uplot_style))
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
        .layer(axum::middleware::from_fn(
            connection_timeouts::track_requests,
        ))
        .with_state(state)
}
