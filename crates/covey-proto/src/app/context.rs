//! What an App sees for one event: the engine, the time, its node, its timers and a random
//! source.

use super::host::{GroupError, Host, LogLevel};
use super::{AppHosting, AppId, PeerIdentity};
use crate::TimerId;
use crate::{Endpoint, Instant, Received};
#[cfg(feature = "client")]
use crate::{Request, RequestError, RequestId, RequestParams};
use core::fmt;
use core::net::{IpAddr, SocketAddr};

/// The host context of one App callback.
pub struct AppContext<'a> {
    /// The node's engine.
    pub endpoint: &'a mut Endpoint,
    /// The time of the event.
    pub now: Instant,
    hosting: &'a mut AppHosting,
    host: &'a mut dyn Host,
}

impl<'a> AppContext<'a> {
    /// A context for a callback at `now`.
    pub fn new(
        endpoint: &'a mut Endpoint,
        hosting: &'a mut AppHosting,
        now: Instant,
        host: &'a mut dyn Host,
    ) -> Self {
        AppContext {
            endpoint,
            now,
            hosting,
            host,
        }
    }

    /// The App this context runs: the owner of the requests and timers it starts.
    pub fn app_id(&self) -> AppId {
        self.hosting.acting()
    }

    /// Makes `app` the one acting; hosts of several Apps call it before each App runs.
    pub fn set_acting(&mut self, app: AppId) {
        self.hosting.set_acting(app);
    }

    /// The next event for the node's Apps with the App it belongs to: the engine's first,
    /// then fired timers. For hosts that route events themselves.
    pub fn poll_event(&mut self) -> Option<(AppId, crate::Event)> {
        self.hosting.poll_event(self.endpoint)
    }

    /// Sends a request whose responses and failure come back to this App. Apps send
    /// through here, not through `endpoint`, so that on a node of several Apps the answer
    /// finds its way home.
    #[cfg(feature = "client")]
    pub fn send_request(
        &mut self,
        remote: SocketAddr,
        request: &Request<'_>,
        params: RequestParams,
    ) -> Result<RequestId, RequestError> {
        let params = RequestParams {
            owner: self.hosting.acting(),
            ..params
        };
        self.endpoint
            .send_request(self.now, remote, request, params)
    }

    /// Sets a timer of this App that comes back as `Event::Timer(value)` at `at`; `None` when
    /// the node's `max_app_timers` are all set.
    pub fn set_timer(&mut self, at: Instant, value: u64) -> Option<TimerId> {
        self.hosting.set_timer(at, value)
    }

    /// Cancels a timer of this App.
    pub fn cancel_timer(&mut self, timer: TimerId) {
        self.hosting.cancel_timer(timer);
    }

    /// 64 random bits from the node's App stream, seeded from the node's seed, so a run
    /// is reproducible.
    pub fn random_u64(&mut self) -> u64 {
        self.hosting.random_u64()
    }

    /// A uniform draw in [0, 1) from the node's App stream.
    pub fn random_f64(&mut self) -> f64 {
        (self.random_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Joins multicast group `group` on this node.
    pub fn join_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        if !group.is_multicast() {
            return Err(GroupError::NotMulticast);
        }
        self.host.join_group(group)
    }

    /// Leaves multicast group `group`.
    pub fn leave_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        self.host.leave_group(group)
    }

    /// The groups this node is a member of.
    pub fn groups(&self) -> alloc::vec::Vec<IpAddr> {
        self.host.groups()
    }

    /// Writes a log line through the host (the tokio driver sends it to `tracing`).
    pub fn log(&mut self, level: LogLevel, message: fmt::Arguments<'_>) {
        self.host.log(level, message);
    }

    /// The identity the sender of `request` authenticated with, if it came over a secured
    /// session or OSCORE-protected (which names the request itself, so it comes first).
    pub fn peer_identity(&self, request: &Received<'_>) -> Option<PeerIdentity> {
        #[cfg(feature = "edhoc")]
        if let Some(kid) = request.edhoc_kid {
            return Some(PeerIdentity::Edhoc(kid.into()));
        }
        #[cfg(feature = "oscore")]
        if let Some(kid) = request.oscore_kid {
            return Some(PeerIdentity::Oscore(kid.to_vec()));
        }
        self.host.peer_identity(request.source, request.local)
    }

    /// The host's secured (`coaps`) local socket that reaches `destination`, if it has one:
    /// the `source` of requests to a peer that must be reached over DTLS.
    pub fn secure_socket(&self, destination: SocketAddr) -> Option<SocketAddr> {
        self.host.secure_socket(destination)
    }

    /// The host's plain (`coap`) local socket that reaches `destination`, when it also has
    /// secured ones; `None` when any socket will do.
    pub fn plain_socket(&self, destination: SocketAddr) -> Option<SocketAddr> {
        self.host.plain_socket(destination)
    }

    /// The host, e.g. to build a context for a nested App.
    pub fn host(&mut self) -> &mut dyn Host {
        self.host
    }
}

impl fmt::Debug for AppContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppContext")
            .field("now", &self.now)
            .finish()
    }
}
