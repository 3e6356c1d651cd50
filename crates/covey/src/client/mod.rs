//! The async client: `Client::get(uri).await`, a request builder, pings.

mod builder;
mod cancel;
mod stream;
mod target;

use std::net::SocketAddr;
use std::time::Duration;

use covey_core::Code;
use covey_proto::Config;
use tokio::sync::{mpsc, oneshot};

pub use builder::RequestBuilder;
pub use stream::ResponseStream;
pub use target::{resolve, resolve_blocking, Target};

use crate::driver::{Command, Driver, DriverBuilder, Outgoing, TraceFn, Waiter};
use crate::dtls::DtlsConfig;
use crate::{Error, Response};
use cancel::CancelGuard;

/// A CoAP client on its own socket; clones share it. It stops when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct Client {
    driver: Driver,
}

/// How to build a [`Client`].
#[derive(Debug, Default)]
pub struct ClientBuilder {
    driver: DriverBuilder,
}

impl ClientBuilder {
    /// A builder with defaults: a dual-stack socket on an ephemeral port.
    pub fn new() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Binds to `addr` instead of `[::]:0`.
    pub fn bind(mut self, addr: SocketAddr) -> ClientBuilder {
        self.driver = self.driver.bind(addr);
        self
    }

    /// The engine's configuration.
    pub fn config(mut self, config: Config) -> ClientBuilder {
        self.driver = self.driver.config(config);
        self
    }

    /// Speaks DTLS (`coaps://`) with these credentials.
    pub fn dtls(mut self, config: DtlsConfig) -> ClientBuilder {
        self.driver = self.driver.dtls(config);
        self
    }

    /// Adds an OSCORE security context, which requests name with
    /// [`RequestBuilder::oscore`] by its place among these calls (0 for the first).
    pub fn oscore_context(
        mut self,
        context: covey_proto::covey_oscore::SecurityContext,
    ) -> ClientBuilder {
        self.driver = self.driver.oscore_context(context);
        self
    }

    /// Calls `trace` for every datagram sent and received.
    pub fn trace(mut self, trace: TraceFn) -> ClientBuilder {
        self.driver = self.driver.trace(trace);
        self
    }

    /// Starts the client on the current tokio runtime.
    pub fn build(self) -> Result<Client, Error> {
        Ok(Client {
            driver: self.driver.spawn()?,
        })
    }
}

impl Client {
    /// A client with defaults on the current tokio runtime.
    pub fn new() -> Result<Client, Error> {
        ClientBuilder::new().build()
    }

    /// A builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// A client sending through an existing driver (e.g. a server's).
    pub fn from_driver(driver: Driver) -> Client {
        Client { driver }
    }

    /// The driver underneath.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// A one-shot GET on a client of its own: `Client::get(uri).await`.
    pub fn get(uri: impl Into<String>) -> RequestBuilder {
        RequestBuilder::new(None, Code::GET, uri)
    }

    /// A one-shot PUT on a client of its own.
    pub fn put(uri: impl Into<String>) -> RequestBuilder {
        RequestBuilder::new(None, Code::PUT, uri)
    }

    /// A one-shot POST on a client of its own.
    pub fn post(uri: impl Into<String>) -> RequestBuilder {
        RequestBuilder::new(None, Code::POST, uri)
    }

    /// A one-shot DELETE on a client of its own.
    pub fn delete(uri: impl Into<String>) -> RequestBuilder {
        RequestBuilder::new(None, Code::DELETE, uri)
    }

    /// A one-shot FETCH on a client of its own.
    pub fn fetch(uri: impl Into<String>) -> RequestBuilder {
        RequestBuilder::new(None, Code::FETCH, uri)
    }

    /// A request with `method` to `uri` sent on this client.
    pub fn request(&self, method: Code, uri: impl Into<String>) -> RequestBuilder {
        RequestBuilder::new(Some(self.clone()), method, uri)
    }

    /// Sends a CoAP ping (an empty CON) and returns the round-trip time of its reset.
    pub async fn ping(&self, uri: &str) -> Result<Duration, Error> {
        let target = target::resolve(uri).await?;
        // A ping names no source: on a driver with coap and coaps sockets it leaves from the
        // one the peer last reached, else the first that reaches it.
        target::source(uri, &target, self.driver.roles())?;
        let start = tokio::time::Instant::now();
        let ticket = self.driver.ticket();
        let (tx, rx) = oneshot::channel();
        self.driver
            .command(Command::Ping {
                ticket,
                remote: target.remote,
                waiter: Waiter::Once(tx),
            })
            .await?;
        let guard = CancelGuard::new(self.driver.clone(), ticket);
        let result = rx.await;
        guard.disarm();
        result.map_err(|_| Error::Shutdown)??;
        Ok(start.elapsed())
    }

    /// Stops the client once in-flight requests have ended.
    pub async fn shutdown(&self) {
        self.driver.shutdown().await;
    }

    /// Resolves and hands `request` to the driver; answers go to `waiter`.
    async fn start(
        &self,
        request: RequestBuilder,
        waiter: Waiter,
    ) -> Result<(u64, SocketAddr, Option<Duration>), Error> {
        let target = match request.resolved.clone() {
            Some(target) => target,
            None => target::resolve(&request.uri).await?,
        };
        let source = target::source(&request.uri, &target, self.driver.roles())?;
        let token = request.parsed_token()?;
        let multicast = target.remote.ip().is_multicast();
        let mut options = target.options;
        for (number, value) in request.options.iter() {
            options.push(number, value);
        }
        let outgoing = Outgoing {
            method: request.method,
            options,
            payload: request.payload,
            // Multicast requests are always non-confirmable (RFC 7252 §8.1).
            confirmable: request.confirmable && !multicast,
            token,
            source,
            oscore: request.oscore,
            edhoc_message_3: request.edhoc_message_3,
        };
        let ticket = self.driver.ticket();
        self.driver
            .command(Command::Request {
                ticket,
                remote: target.remote,
                request: outgoing,
                waiter,
            })
            .await?;
        Ok((ticket, target.remote, request.timeout))
    }

    /// Resolves, sends and waits for the (first) response of `request`.
    pub(crate) async fn execute(&self, request: RequestBuilder) -> Result<Response, Error> {
        let (tx, rx) = oneshot::channel();
        let (ticket, remote, timeout) = self.start(request, Waiter::Once(tx)).await?;
        let guard = CancelGuard::new(self.driver.clone(), ticket);
        let result = match timeout {
            Some(limit) => match tokio::time::timeout(limit, rx).await {
                Ok(r) => r,
                // The guard cancels the exchange in the driver.
                Err(_) => return Err(Error::Timeout(remote)),
            },
            None => rx.await,
        };
        guard.disarm();
        result.map_err(|_| Error::Shutdown)?
    }

    /// Sends `request` and streams every response (observe, multicast).
    pub(crate) async fn stream(&self, request: RequestBuilder) -> Result<ResponseStream, Error> {
        let (tx, rx) = mpsc::channel(stream::STREAM_BUFFER);
        let (ticket, _, _) = self.start(request, Waiter::Stream(tx)).await?;
        Ok(ResponseStream::new(rx, self.driver.clone(), ticket))
    }
}
