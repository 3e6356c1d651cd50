//! One node's drive loop, shared by the tokio driver, the simulator and the tests: an
//! [`Endpoint`] and the [`App`]s it hosts, fed datagrams and time, with the Apps run after
//! every input so their requests, responses and timers reach the engine at once.

use crate::app::{App, AppSet, Host};
use crate::endpoint::{Endpoint, LocalAddr, Reception, Transmit};
use crate::time::Instant;
use core::net::SocketAddr;

/// An [`Endpoint`] and the [`App`]s it hosts, driven as one. A node without Apps leaves
/// its events in the endpoint for the caller's [`Endpoint::poll_event`].
pub struct Node<A: ?Sized + App = dyn App + Send> {
    /// The engine.
    pub endpoint: Endpoint,
    /// The Apps it hosts, each known to the engine by its index.
    pub apps: AppSet<A>,
}

impl<A: ?Sized + App> Node<A> {
    /// A node running `apps` on `endpoint`; call [`start`](Self::start) before feeding it.
    pub fn new(endpoint: Endpoint, apps: AppSet<A>) -> Self {
        Node { endpoint, apps }
    }

    /// Starts every App (first requests, first timers) and runs what they caused.
    pub fn start(&mut self, now: Instant, host: &mut dyn Host) {
        self.apps.start(&mut self.endpoint, now, host);
        self.dispatch(now, host);
    }

    /// Feeds a datagram from `remote` to the engine, then runs the Apps on what it caused.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        local: LocalAddr,
        datagram: &[u8],
        host: &mut dyn Host,
    ) -> Reception {
        let reception = self.endpoint.handle_datagram(now, remote, local, datagram);
        self.dispatch(now, host);
        reception
    }

    /// Runs the engine's timers due at `now`, then the Apps on what they caused.
    pub fn handle_timeout(&mut self, now: Instant, host: &mut dyn Host) {
        self.endpoint.handle_timeout(now);
        self.dispatch(now, host);
    }

    /// Hands the engine's pending events to the Apps (none without Apps: they stay for
    /// [`Endpoint::poll_event`]); hosts call it after acting on the endpoint from outside.
    pub fn dispatch(&mut self, now: Instant, host: &mut dyn Host) {
        if !self.apps.is_empty() {
            self.apps.dispatch(&mut self.endpoint, now, host);
        }
    }

    /// The next datagram to send, written into `buf`; see [`Endpoint::poll_transmit`].
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.endpoint.poll_transmit(now, buf)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.endpoint.poll_timeout()
    }
}

impl<A: ?Sized + App> core::fmt::Debug for Node<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Node")
            .field("endpoint", &self.endpoint)
            .field("apps", &self.apps)
            .finish()
    }
}
