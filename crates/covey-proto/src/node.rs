//! One node's drive loop, shared by the tokio driver, the simulator and the tests: an
//! [`Endpoint`] and the [`App`]s it hosts, fed datagrams and time, with the Apps run after
//! every input so their requests, responses and timers reach the engine at once. The node,
//! not the engine, hosts the Apps: their timers, their random stream, which one acts.

use crate::app::{App, AppContext, AppHosting, AppSet, Host};
use crate::endpoint::{Endpoint, LocalAddr, Reception, Transmit};
use crate::time::Instant;
use core::net::SocketAddr;

/// The applications a [`Node`] runs: started once, then handed the engine's events after
/// every input. An [`AppSet`] is the usual one; a host with needs of its own (a simulator's
/// instrumentation) wraps one.
pub trait Apps {
    /// Starts the applications (first requests, first timers).
    fn start(&mut self, cx: &mut AppContext<'_>);

    /// Hands every pending event of the engine and every fired timer to the applications.
    fn dispatch(&mut self, cx: &mut AppContext<'_>);
}

/// An empty set takes no events: they stay in the endpoint for [`Endpoint::poll_event`].
impl<A: ?Sized + App> Apps for AppSet<A> {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        AppSet::start(self, cx);
    }

    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        if !self.is_empty() {
            AppSet::dispatch(self, cx);
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
    /// Their timers, their random stream and which of them acts.
    pub hosting: AppHosting,
}

impl<P: Apps> Node<P> {
    /// A node running `apps` on `endpoint`; call [`start`](Self::start) before feeding it.
    pub fn new(endpoint: Endpoint, apps: P) -> Self {
        let hosting = AppHosting::new(&endpoint);
        Node {
            endpoint,
            apps,
            hosting,
        }
    }

    /// Reboots the engine: `fresh` takes the old endpoint's place, and the Apps' timers and
    /// random stream start over from its seed as they would on a rebooted node. The Apps keep
    /// their own state. Returns the old endpoint (for its counters).
    pub fn replace_endpoint(&mut self, fresh: Endpoint) -> Endpoint {
        self.hosting = AppHosting::new(&fresh);
        core::mem::replace(&mut self.endpoint, fresh)
    }

    /// Starts every App (first requests, first timers) and runs what they caused.
    pub fn start(&mut self, now: Instant, host: &mut dyn Host) {
        let cx = &mut AppContext::new(&mut self.endpoint, &mut self.hosting, now, host);
        self.apps.start(cx);
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

    /// Runs the engine's and the Apps' timers due at `now`, then the Apps on what they
    /// caused: the engine's events first, then the Apps' timers.
    pub fn handle_timeout(&mut self, now: Instant, host: &mut dyn Host) {
        self.endpoint.handle_timeout(now);
        self.hosting.expire(now);
        self.dispatch(now, host);
    }

    /// Hands the engine's pending events to the applications; hosts call it after acting
    /// on the endpoint from outside (sending a request, say).
    pub fn dispatch(&mut self, now: Instant, host: &mut dyn Host) {
        let cx = &mut AppContext::new(&mut self.endpoint, &mut self.hosting, now, host);
        self.apps.dispatch(cx);
    }

    /// The next datagram to send, written into `buf`; see [`Endpoint::poll_transmit`].
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.endpoint.poll_transmit(now, buf)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.endpoint.poll_timeout(), self.hosting.next_deadline()) {
            (Some(engine), Some(apps)) => Some(engine.min(apps)),
            (engine, apps) => engine.or(apps),
        }
    }
}

impl<P: Apps + core::fmt::Debug> core::fmt::Debug for Node<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Node")
            .field("endpoint", &self.endpoint)
            .field("apps", &self.apps)
            .field("hosting", &self.hosting)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AppContext, Config, Event, Response};
    #[cfg(feature = "client")]
    use crate::{NullHost, Request, RequestParams};
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
    #[cfg(feature = "client")]
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
    #[cfg(feature = "client")]
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

    #[test]
    fn a_replaced_endpoint_starts_the_apps_timers_and_random_stream_over() {
        let apps = AppSet::<dyn App>::new().with(Box::new(Hello));
        let mut node = Node::new(Endpoint::new(Config::default(), 7).unwrap(), apps);
        let first = node.hosting.random_u64();
        node.hosting
            .set_timer(Instant::from_secs(5), 1)
            .expect("timer set");
        assert_eq!(node.poll_timeout(), Some(Instant::from_secs(5)));

        node.replace_endpoint(Endpoint::new(Config::default(), 7).unwrap());
        assert_eq!(
            node.poll_timeout(),
            None,
            "the old timers went with the old engine"
        );
        assert_eq!(
            node.hosting.random_u64(),
            first,
            "the stream restarts from the seed"
        );
    }
}
