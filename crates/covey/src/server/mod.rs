//! The async server: resources by path with async handlers, `/.well-known/core`, and hosted
//! Apps (such as covey-group's `/mc` group-membership resource).

mod resource;
mod router;
mod well_known;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use covey_proto::{App, Config};

pub use covey_proto::NotificationType;
pub use resource::{handler, Attributes, Handler, Resource};
pub use router::Router;
pub use well_known::WELL_KNOWN_CORE;

use crate::driver::{Driver, DriverBuilder, TraceFn};
use crate::dtls::DtlsConfig;
use crate::multicast::Membership;
use crate::{Client, Error, Response};

/// How to build a [`Server`]: sockets, resources, multicast.
#[derive(Debug, Default)]
pub struct ServerBuilder {
    driver: DriverBuilder,
    bound: bool,
    secured: bool,
    routes: Vec<(String, bool, Resource)>,
    /// Link-format entries of resources the Apps serve.
    app_links: Vec<String>,
}

impl ServerBuilder {
    /// A builder with no resources; it binds `[::]:5683` (`[::]:5684` with DTLS) unless told
    /// otherwise.
    pub fn new() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// Binds a socket to `addr` (repeatable).
    pub fn bind(mut self, addr: SocketAddr) -> ServerBuilder {
        self.driver = self.driver.bind(addr);
        self.bound = true;
        self
    }

    /// Lets other servers that share it bind the same port (see
    /// [`DriverBuilder::share_port`]).
    pub fn share_port(mut self, share: bool) -> ServerBuilder {
        self.driver = self.driver.share_port(share);
        self
    }

    /// The engine's configuration.
    pub fn config(mut self, config: Config) -> ServerBuilder {
        self.driver = self.driver.config(config);
        self
    }

    /// Adds a socket bound to `addr` that serves `coaps://` while those added with
    /// [`bind`](Self::bind) serve `coap://` (needs [`dtls`](Self::dtls)).
    pub fn bind_secure(mut self, addr: SocketAddr) -> ServerBuilder {
        self.driver = self.driver.bind_secure(addr);
        self.bound = true;
        self
    }

    /// Serves `coaps://` with these credentials: only, unless sockets were added with
    /// [`bind_secure`](Self::bind_secure) (the default port becomes 5684).
    pub fn dtls(mut self, config: DtlsConfig) -> ServerBuilder {
        self.driver = self.driver.dtls(config);
        self.secured = true;
        self
    }

    /// Serves OSCORE-protected requests with `context` (see
    /// [`DriverBuilder::oscore_context`]).
    pub fn oscore_context(
        mut self,
        context: covey_proto::covey_oscore::SecurityContext,
    ) -> ServerBuilder {
        self.driver = self.driver.oscore_context(context);
        self
    }

    /// Serves OSCORE-protected requests with `context`, whose sequence numbers `reserve`
    /// keeps reserved ahead (see [`DriverBuilder::oscore_context_reserving`]).
    pub fn oscore_context_reserving(
        mut self,
        context: covey_proto::covey_oscore::SecurityContext,
        reserve: crate::driver::SequenceReservation,
    ) -> ServerBuilder {
        self.driver = self.driver.oscore_context_reserving(context, reserve);
        self
    }

    /// Answers EDHOC at /.well-known/edhoc (see [`DriverBuilder::edhoc`]).
    pub fn edhoc(mut self, config: covey_proto::EdhocConfig) -> ServerBuilder {
        self.driver = self.driver.edhoc(config);
        self
    }

    /// Calls `trace` for every datagram sent and received.
    pub fn trace(mut self, trace: TraceFn) -> ServerBuilder {
        self.driver = self.driver.trace(trace);
        self
    }

    /// Serves `resource` at `path`.
    pub fn resource(mut self, path: &str, resource: Resource) -> ServerBuilder {
        self.routes.push((path.to_string(), false, resource));
        self
    }

    /// Serves `resource` at `path` and every path below it.
    pub fn subtree(mut self, path: &str, resource: Resource) -> ServerBuilder {
        self.routes.push((path.to_string(), true, resource));
        self
    }

    /// Lists a resource an App serves in `/.well-known/core`: `link` is one link-format
    /// entry, e.g. `</mc>;rt="core.mc"`.
    pub fn app_link(mut self, link: &str) -> ServerBuilder {
        self.app_links.push(link.to_string());
        self
    }

    /// Joins a multicast group at start.
    pub fn join(mut self, group: std::net::IpAddr, interface: Option<u32>) -> ServerBuilder {
        self.driver = self.driver.join(group, interface);
        self
    }

    /// The interface index groups are joined on by default (0: the kernel's choice).
    pub fn multicast_interface(mut self, index: u32) -> ServerBuilder {
        self.driver = self.driver.multicast_interface(index);
        self
    }

    /// The most multicast groups joined at once.
    pub fn max_groups(mut self, max: usize) -> ServerBuilder {
        self.driver = self.driver.max_groups(max);
        self
    }

    /// Hosts an `App` for requests no resource answers, and for its own exchanges
    /// (repeatable: each request goes to the first App that serves it; one that neither a
    /// resource nor an App serves gets the router's 4.04).
    pub fn app(mut self, app: Box<dyn App + Send>) -> ServerBuilder {
        self.driver = self.driver.app(app);
        self
    }

    /// How long a shutdown waits for in-flight exchanges.
    pub fn shutdown_grace(mut self, grace: Duration) -> ServerBuilder {
        self.driver = self.driver.shutdown_grace(grace);
        self
    }

    /// Keeps polling the sockets for `spin` after each datagram before sleeping (see
    /// [`DriverBuilder::busy_poll`]).
    pub fn busy_poll(mut self, spin: Duration) -> ServerBuilder {
        self.driver = self.driver.busy_poll(spin);
        self
    }

    /// Binds and starts serving on the current tokio runtime.
    pub fn start(mut self) -> Result<Server, Error> {
        if !self.bound {
            let port = if self.secured {
                crate::dtls::DEFAULT_PORT
            } else {
                crate::DEFAULT_PORT
            };
            self.driver = self.driver.bind(SocketAddr::from(([0u16; 8], port)));
        }
        let mut router = Router::new(self.routes);
        router.add_links(&self.app_links);
        let router = Arc::new(router);
        let driver = self.driver.service(router.clone()).spawn()?;
        Ok(Server { driver, router })
    }
}

/// A running CoAP server; it stops when [`shutdown`](Server::shutdown) is called or every
/// handle to its driver is dropped.
#[derive(Debug, Clone)]
pub struct Server {
    driver: Driver,
    router: Arc<Router>,
}

impl Server {
    /// A builder.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }

    /// The addresses the server listens on.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        self.driver.local_addrs()
    }

    /// The driver underneath.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The multicast memberships of the server's sockets.
    pub fn membership(&self) -> &Membership {
        self.driver.membership()
    }

    /// The router (e.g. for its `/.well-known/core` document).
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// A client sending from the server's own sockets.
    pub fn client(&self) -> Client {
        Client::from_driver(self.driver.clone())
    }

    /// Sends the current representation of the observable resource at `path` (from its GET
    /// handler) to every observer; returns how many were notified.
    pub async fn notify(&self, path: &str) -> Result<usize, Error> {
        let Some((resource, kind, handler)) = self.router.observable_get(path) else {
            return Err(not_observable(path));
        };
        let mut options = crate::Options::new();
        for segment in path.trim_matches('/').split('/').filter(|s| !s.is_empty()) {
            options.push(covey_core::OptionNumber::URI_PATH, segment);
        }
        let request = crate::Request {
            method: covey_core::Code::GET,
            options,
            payload: Vec::new(),
            source: self.local_addrs()[0],
            confirmable: true,
            multicast_group: None,
        };
        let response = handler(request).await;
        self.send_notification(resource, kind, response).await
    }

    /// Sends `response` to every observer of the observable resource at `path`; an error
    /// response (e.g. 4.04 after the resource was deleted) ends their observations
    /// (RFC 7641 §4.2). Returns how many were notified.
    pub async fn notify_with(&self, path: &str, response: Response) -> Result<usize, Error> {
        let Some((resource, kind)) = self.router.observable(path) else {
            return Err(not_observable(path));
        };
        self.send_notification(resource, kind, response).await
    }

    async fn send_notification(
        &self,
        resource: u64,
        kind: NotificationType,
        response: Response,
    ) -> Result<usize, Error> {
        let (reply, count) = tokio::sync::oneshot::channel();
        self.driver
            .command(crate::driver::Command::Notify {
                resource,
                response,
                kind,
                reply,
            })
            .await?;
        count.await.map_err(|_| Error::Shutdown)
    }

    /// Stops serving once in-flight exchanges have ended.
    pub async fn shutdown(&self) {
        self.driver.shutdown().await;
    }
}

fn not_observable(path: &str) -> Error {
    Error::InvalidRequest(format!("{path} is not an observable resource"))
}
