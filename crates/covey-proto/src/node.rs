//! One node's drive loop, shared by the tokio driver, the simulator and the tests: an
//! [`Endpoint`] and the [`App`]s it hosts, fed datagrams and time, with the Apps run after
//! every input so their requests, responses and timers reach the engine at once.

use crate::app::{App, AppSet, Host};
use crate::endpoint::{Endpoint, LocalAddr, Reception, Transmit};
use crate::time::Instant;
use core::net::SocketAddr;

/// The applications a [`Node`] runs: started once, then handed the engine's events after
/// every input. An [`AppSet`] is the usual one; a host with needs of its own (a simulator's
/// instrumentation) wraps one.
pub trait Apps {
    /// Starts the applications (first requests, first timers).
    fn start(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host);

    /// Hands every pending event of `endpoint` to the applications.
    fn dispatch(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host);
}

/// An empty set takes no events: they stay in the endpoint for [`Endpoint::poll_event`].
impl<A: ?Sized + App> Apps for AppSet<A> {
    fn start(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host) {
        AppSet::start(self, endpoint, now, host);
    }

    fn dispatch(&mut self, endpoint: &mut Endpoint, now: Instant, host: &mut dyn Host) {
        if !self.is_empty() {
            AppSet::dispatch(self, endpoint, now, host);
        }
    }
}

/// An [`Endpoint`] and the applications it hosts, driven as one. A node with an empty
/// [`AppSet`] leaves its events in the endpoint for the caller's [`Endpoint::poll_event`].
pub struct Node<P: Apps = AppSet> {
    /// The engine.
    pub endpoint: Endpoint,
    /// The applications it hosts.
    pub apps: P,
}

impl<P: Apps> Node<P> {
    /// A node running `apps` on `endpoint`; call [`start`](Self::start) before feeding it.
    pub fn new(endpoint: Endpoint, apps: P) -> Self {
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

    /// Hands the engine's pending events to the applications; hosts call it after acting
    /// on the endpoint from outside (sending a request, say).
    pub fn dispatch(&mut self, now: Instant, host: &mut dyn Host) {
        self.apps.dispatch(&mut self.endpoint, now, host);
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

impl<P: Apps + core::fmt::Debug> core::fmt::Debug for Node<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Node")
            .field("endpoint", &self.endpoint)
            .field("apps", &self.apps)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AppContext, Config, Event, NullHost, Request, RequestParams, Response};
    use alloc::boxed::Box;
    use covey_core::Code;

    /// Answers every request 2.05 "hi".
    struct Hello;

    impl App for Hello {
        fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
            if let Event::Request(id) = event {
                let ok = Response::with_payload(Code::CONTENT, b"hi");
                cx.endpoint.respond(cx.now, id, &ok).unwrap();
            }
        }
    }

    /// One GET from a node without Apps to `server`; returns the client node's events.
    fn get_from(server: &mut Node<AppSet<dyn App>>) -> alloc::vec::Vec<Event> {
        let (c, s) = ("[::1]:1".parse().unwrap(), "[::1]:2".parse().unwrap());
        let mut client = Node::new(
            Endpoint::new(Config::default(), 1).unwrap(),
            AppSet::<dyn App>::new(),
        );
        let (now, mut buf) = (Instant::from_secs(1), [0u8; 1152]);
        client.start(now, &mut NullHost);
        server.start(now, &mut NullHost);
        let get = Request::new(Code::GET);
        client
            .endpoint
            .send_request(now, s, &get, RequestParams::default())
            .unwrap();
        while let Some(t) = client.poll_transmit(now, &mut buf) {
            let r =
                server.handle_datagram(now, c, LocalAddr::UNICAST, &buf[..t.size], &mut NullHost);
            assert_eq!(r, Reception::Accepted);
        }
        while let Some(t) = server.poll_transmit(now, &mut buf) {
            client.handle_datagram(now, s, LocalAddr::UNICAST, &buf[..t.size], &mut NullHost);
        }
        core::iter::from_fn(|| client.endpoint.poll_event()).collect()
    }

    #[test]
    fn apps_answer_after_each_input_and_without_apps_events_stay_for_poll_event() {
        let apps = AppSet::<dyn App>::new().with(Box::new(Hello));
        let mut server = Node::new(Endpoint::new(Config::default(), 2).unwrap(), apps);
        let events = get_from(&mut server);
        assert!(matches!(events[..], [Event::Response { last: true, .. }]));

        let mut bare = Node::new(
            Endpoint::new(Config::default(), 2).unwrap(),
            AppSet::<dyn App>::new(),
        );
        assert!(get_from(&mut bare).is_empty(), "no answer without an App");
        assert!(matches!(
            bare.endpoint.poll_event(),
            Some(Event::Request(_))
        ));
    }
}
