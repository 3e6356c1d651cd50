//! The tokio driver: one task owns a `covey_proto::Endpoint` and the UDP sockets; [`Driver`]
//! is the cloneable handle the async [`Client`](crate::Client) and
//! [`Server`](crate::Server) talk to it through.

mod app_host;
mod busy_poll;
mod command;
mod driver_apps;
mod exchanges;
mod service;
mod socket_roles;
mod task;
mod trace;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use covey_proto::covey_oscore::SecurityContext;
use covey_proto::{App, AppSet, Config, Endpoint, Node, Stats};

use driver_apps::DriverApps;
pub(crate) use socket_roles::SocketRoles;
use tokio::sync::{mpsc, oneshot};

pub(crate) use command::{Command, Outgoing, Waiter};
pub use service::{ResponseFuture, Service};
pub use trace::{Trace, TraceDirection, TraceFn};

use crate::dtls::{DtlsConfig, SessionTable};
use crate::multicast::Membership;
use crate::socket::{self, RecvBatch, SendBatch};
use crate::Error;

/// Commands that may wait in the channel before callers are slowed down.
const COMMAND_QUEUE: usize = 1024;

/// How to build a driver: sockets, engine configuration, what serves requests.
pub struct DriverBuilder {
    config: Config,
    binds: Vec<SocketAddr>,
    /// Which of `binds` speak DTLS (none named: all of them, when DTLS is configured).
    secure_binds: Vec<bool>,
    share_port: bool,
    seed: Option<u64>,
    service: Option<Arc<dyn Service>>,
    apps: AppSet,
    trace: Option<TraceFn>,
    max_groups: usize,
    multicast_interface: u32,
    groups: Vec<(IpAddr, Option<u32>)>,
    grace: Duration,
    busy_poll: Duration,
    dtls: Option<DtlsConfig>,
    oscore: Vec<(SecurityContext, Option<SequenceReservation>)>,
    edhoc: Option<covey_proto::EdhocConfig>,
}

pub use covey_proto::SequenceReservation;

impl std::fmt::Debug for DriverBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverBuilder")
            .field("binds", &self.binds)
            .field("service", &self.service.is_some())
            .field("apps", &self.apps.len())
            .finish_non_exhaustive()
    }
}

impl Default for DriverBuilder {
    fn default() -> DriverBuilder {
        DriverBuilder {
            config: Config::default(),
            binds: Vec::new(),
            secure_binds: Vec::new(),
            share_port: false,
            seed: None,
            service: None,
            apps: AppSet::new(),
            trace: None,
            max_groups: 16,
            multicast_interface: 0,
            groups: Vec::new(),
            grace: Duration::from_secs(5),
            busy_poll: Duration::ZERO,
            dtls: None,
            oscore: Vec::new(),
            edhoc: None,
        }
    }
}

impl DriverBuilder {
    /// A builder with RFC 7252 defaults and no socket yet.
    pub fn new() -> DriverBuilder {
        DriverBuilder::default()
    }

    /// Adds a socket bound to `addr` (repeatable); `[::]` is dual-stack. Without any,
    /// `[::]:0` (or `0.0.0.0:0` where IPv6 is missing) is bound.
    pub fn bind(mut self, addr: SocketAddr) -> DriverBuilder {
        self.binds.push(addr);
        self.secure_binds.push(false);
        self
    }

    /// Adds a socket bound to `addr` that speaks DTLS (`coaps`) while the others added with
    /// [`bind`](Self::bind) speak plain `coap`; needs [`dtls`](Self::dtls).
    pub fn bind_secure(mut self, addr: SocketAddr) -> DriverBuilder {
        self.binds.push(addr);
        self.secure_binds.push(true);
        self
    }

    /// Lets other sockets that share it bind the same port too (SO_REUSEADDR and
    /// SO_REUSEPORT), as several multicast servers on one host need; off by default, so a
    /// busy port is an error.
    pub fn share_port(mut self, share: bool) -> DriverBuilder {
        self.share_port = share;
        self
    }

    /// The engine's configuration.
    pub fn config(mut self, config: Config) -> DriverBuilder {
        self.config = config;
        self
    }

    /// The engine's PRNG seed (random by default).
    pub fn seed(mut self, seed: u64) -> DriverBuilder {
        self.seed = Some(seed);
        self
    }

    /// What answers incoming requests (the server's router).
    pub fn service(mut self, service: Arc<dyn Service>) -> DriverBuilder {
        self.service = Some(service);
        self
    }

    /// Hosts an `App` (repeatable: Apps are offered requests in the order added, before the
    /// service when they claim them); each gets its own timers and the events of the
    /// requests it sends.
    pub fn app(mut self, app: Box<dyn App + Send>) -> DriverBuilder {
        self.apps.push(app);
        self
    }

    /// Calls `trace` for every datagram sent and received.
    pub fn trace(mut self, trace: TraceFn) -> DriverBuilder {
        self.trace = Some(trace);
        self
    }

    /// The most multicast groups joined at once (default 16).
    pub fn max_groups(mut self, max: usize) -> DriverBuilder {
        self.max_groups = max;
        self
    }

    /// The interface index multicast groups are joined on by default (0: the kernel's choice).
    pub fn multicast_interface(mut self, index: u32) -> DriverBuilder {
        self.multicast_interface = index;
        self
    }

    /// Joins `group` at start (on `interface`, or the default).
    pub fn join(mut self, group: IpAddr, interface: Option<u32>) -> DriverBuilder {
        self.groups.push((group, interface));
        self
    }

    /// How long a shutdown waits for in-flight exchanges before failing them (default 5 s).
    pub fn shutdown_grace(mut self, grace: Duration) -> DriverBuilder {
        self.grace = grace;
        self
    }

    /// After datagrams arrive, keep polling the sockets for up to `spin` before sleeping
    /// (default zero: off). Under steady traffic this saves the wake-up from `epoll` per
    /// request (much lower latency) at the cost of a busy CPU while it lasts; it is
    /// adaptive: a spin that catches nothing turns spinning off until datagrams again come
    /// that close together, so sparse traffic costs next to nothing.
    pub fn busy_poll(mut self, spin: Duration) -> DriverBuilder {
        self.busy_poll = spin;
        self
    }

    /// Secures the sockets with DTLS (`coaps`): datagrams on the wire are DTLS records, one
    /// session per peer, and requests carry the identity the peer proved. Every socket when
    /// none was added with [`bind_secure`](Self::bind_secure), else only those.
    pub fn dtls(mut self, config: DtlsConfig) -> DriverBuilder {
        self.dtls = Some(config);
        self
    }

    /// Serves OSCORE-protected requests whose kid is `context`'s Recipient ID, and protects
    /// their responses; a client's requests are protected with it when they ask for it by
    /// its place among these calls ([`RequestBuilder::oscore`](crate::RequestBuilder::oscore)).
    /// Repeatable, up to `Config::max_oscore_contexts`.
    pub fn oscore_context(mut self, context: SecurityContext) -> DriverBuilder {
        self.oscore.push((context, None));
        self
    }

    /// [`oscore_context`](Self::oscore_context) for a context whose sequence numbers are
    /// reserved ahead in stable storage: `reserve` raises its limit as it nears.
    pub fn oscore_context_reserving(
        mut self,
        context: SecurityContext,
        reserve: SequenceReservation,
    ) -> DriverBuilder {
        self.oscore.push((context, Some(reserve)));
        self
    }

    /// Answers EDHOC (RFC 9528) at /.well-known/edhoc with `config`; each completed session
    /// adds its OSCORE context, under which the peer's later requests are served.
    pub fn edhoc(mut self, config: covey_proto::EdhocConfig) -> DriverBuilder {
        self.edhoc = Some(config);
        self
    }

    /// Binds the sockets and starts the driver task on the current tokio runtime.
    pub fn spawn(mut self) -> Result<Driver, Error> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        // Refused before any socket is bound.
        self.config.validate()?;
        let dtls = match self.dtls.take() {
            Some(config) => {
                Some(SessionTable::new(config).map_err(|e| Error::Dtls(e.to_string()))?)
            }
            None => None,
        };
        let named_secure = self.secure_binds.iter().any(|&s| s);
        if named_secure && dtls.is_none() {
            return Err(Error::Dtls(
                "a secured socket needs DTLS credentials (a pre-shared key or a certificate)"
                    .into(),
            ));
        }
        let _entered = runtime.enter();
        let sockets = bind_all(&self.binds, self.share_port)?;
        let secured: Vec<bool> = match named_secure {
            true => self.secure_binds.clone(),
            false => vec![dtls.is_some(); sockets.len()],
        };
        let roles = SocketRoles::new(&sockets, &secured);
        let local_addrs: Vec<SocketAddr> = sockets.iter().map(|s| s.local_addr()).collect();
        let membership = Membership::new(&sockets, self.max_groups, self.multicast_interface);
        for (group, interface) in &self.groups {
            membership
                .join(*group, *interface)
                .map_err(|e| Error::io("cannot join multicast group", std::io::Error::other(e)))?;
        }
        let gro = sockets.iter().map(|s| s.gro_segments()).max().unwrap_or(1);
        let max_message_size = self.config.max_message_size;
        // Records are larger than the plaintext they carry, and handshake flights fill the
        // DTLS MTU: a datagram buffer too small would drop them.
        let max_datagram = dtls.as_ref().map_or(max_message_size, |t| {
            t.limits().max_datagram(max_message_size)
        });
        let seed = self.seed.unwrap_or_else(random_seed);
        let (commands_tx, commands_rx) = mpsc::channel(COMMAND_QUEUE);
        let (responder, responses) = mpsc::unbounded_channel();
        // A DTLS peer's address is verified by the cookie exchange: secured sockets are
        // free of the amplification budget, plain ones beside them are not.
        if roles.any_secured() && !roles.is_mixed() {
            self.config.amplification.enabled = false;
        }
        let mut endpoint = Endpoint::new(self.config, seed)?;
        let mut oscore = Vec::new();
        let mut reservations = Vec::new();
        for (context, reserve) in self.oscore.drain(..) {
            let id = endpoint.add_oscore_context(context)?;
            oscore.push(id);
            if let Some(reserve) = reserve {
                reservations.push((id, reserve));
            }
        }
        if let Some(edhoc) = self.edhoc.take() {
            endpoint.enable_edhoc(edhoc);
        }
        for secured in roles.secured_addrs() {
            endpoint.trust_socket(secured);
        }
        let task = task::Task {
            node: Node::new(
                endpoint,
                DriverApps::new(self.service, self.apps, responder),
            ),
            clock: crate::clock::Clock::new(),
            error_watches: sockets
                .iter()
                .cloned()
                .map(socket::ErrorWatch::new)
                .collect(),
            sockets,
            commands: commands_rx,
            commands_open: true,
            responses,
            membership: membership.clone(),
            recv: RecvBatch::new(max_datagram, gro),
            send_buf: vec![0; max_message_size.max(64)],
            send_batches: (0..local_addrs.len())
                .map(|_| SendBatch::new(socket::SEND_BATCH_MAX, max_datagram.max(64)))
                .collect(),
            busy_poll: busy_poll::BusyPoll::new(self.busy_poll),
            trace: self.trace,
            grace: self.grace,
            closing: None,
            sleep: Box::pin(tokio::time::sleep(Duration::from_secs(3600))),
            next_socket: 0,
            dtls,
            roles: roles.clone(),
            oscore,
            reservations,
        };
        tracing::debug!(?local_addrs, "driver started");
        runtime.spawn(task.run());
        Ok(Driver {
            inner: Arc::new(Inner {
                commands: commands_tx,
                local_addrs,
                membership,
                next_ticket: AtomicU64::new(1),
                roles,
            }),
        })
    }
}

fn bind_all(binds: &[SocketAddr], share: bool) -> Result<Vec<Arc<socket::Socket>>, Error> {
    if binds.is_empty() {
        let any6 = SocketAddr::from(([0u16; 8], 0));
        let socket = socket::bind(any6, false)
            .or_else(|_| socket::bind(SocketAddr::from(([0, 0, 0, 0], 0)), false))
            .map_err(|e| Error::io("cannot bind a UDP socket", e))?;
        return Ok(vec![Arc::new(socket)]);
    }
    binds
        .iter()
        .map(|addr| {
            socket::bind(*addr, share)
                .map(Arc::new)
                .map_err(|e| Error::io(format!("cannot bind {addr}"), e))
        })
        .collect()
}

fn random_seed() -> u64 {
    let mut h = RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    h.finish()
}

/// A handle to a running driver; clones share it. When every handle is gone the driver
/// shuts down gracefully.
#[derive(Clone, Debug)]
pub struct Driver {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    commands: mpsc::Sender<Command>,
    local_addrs: Vec<SocketAddr>,
    membership: Membership,
    next_ticket: AtomicU64,
    roles: SocketRoles,
}

impl Driver {
    /// A builder.
    pub fn builder() -> DriverBuilder {
        DriverBuilder::new()
    }

    /// A builder hosting `app` (see [`DriverBuilder::app`]).
    pub fn with_app(app: Box<dyn App + Send>) -> DriverBuilder {
        DriverBuilder::new().app(app)
    }

    /// The addresses the sockets are bound to.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.inner.local_addrs
    }

    /// Whether the sockets (some of them, see [`secured_addrs`](Self::secured_addrs)) speak
    /// DTLS (`coaps`).
    pub fn is_secured(&self) -> bool {
        self.inner.roles.any_secured()
    }

    /// The addresses of the sockets that speak DTLS (`coaps`); the others speak plain `coap`.
    pub fn secured_addrs(&self) -> Vec<SocketAddr> {
        self.inner.roles.secured_addrs()
    }

    /// Which sockets speak DTLS, for choosing where a request leaves from.
    pub(crate) fn roles(&self) -> &SocketRoles {
        &self.inner.roles
    }

    /// The multicast memberships of the sockets.
    pub fn membership(&self) -> &Membership {
        &self.inner.membership
    }

    /// The engine's counters.
    pub async fn stats(&self) -> Result<Stats, Error> {
        let (tx, rx) = oneshot::channel();
        self.command(Command::Stats(tx)).await?;
        rx.await.map_err(|_| Error::Shutdown)
    }

    /// The DTLS session table's sessions, handshakes and counters (`None` without DTLS).
    pub async fn dtls_state(&self) -> Result<Option<crate::dtls::DtlsState>, Error> {
        let (tx, rx) = oneshot::channel();
        self.command(Command::DtlsState(tx)).await?;
        rx.await.map_err(|_| Error::Shutdown)
    }

    /// Stops the driver once in-flight exchanges have finished or failed (see
    /// [`DriverBuilder::shutdown_grace`]); returns when it has stopped.
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.command(Command::Shutdown(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }

    pub(crate) async fn command(&self, command: Command) -> Result<(), Error> {
        self.inner
            .commands
            .send(command)
            .await
            .map_err(|_| Error::Shutdown)
    }

    pub(crate) fn try_command(&self, command: Command) {
        let _ = self.inner.commands.try_send(command);
    }

    pub(crate) fn ticket(&self) -> u64 {
        self.inner.next_ticket.fetch_add(1, Ordering::Relaxed)
    }
}
