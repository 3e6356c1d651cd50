//! The driver task: owns the engine and the sockets, feeds datagrams, time and commands in,
//! sends what the engine produces, and routes events to the async API, the service and a
//! hosted Apps.

use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use covey_core::Code;
use covey_proto::{
    AppId, AppSet, Endpoint, Event, IncomingId, Instant, LocalAddr, Received, RequestError,
    RequestParams, RespondError, Transmit,
};
use quinn_udp::RecvMeta;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Sleep;

use super::app_host::DriverHost;
use super::busy_poll::BusyPoll;
use super::command::{Command, Outgoing};
use super::exchanges::Exchanges;
use super::service::{ResponseFuture, Service};
use super::trace::{Trace, TraceDirection, TraceFn};
use crate::clock::Clock;
use crate::multicast::Membership;
use crate::socket::{
    canonical_ip, canonical_socket_addr, ErrorWatch, RecvBatch, SendBatch, Socket, Unreachable,
};
use crate::{Error, Request, Response};

/// Commands handled per wake-up before the task sends, so a busy client cannot starve sockets.
const COMMAND_BUDGET: usize = 64;

/// ICMP errors read per socket and wake-up, so a flood of them cannot starve the rest.
const SOCKET_ERROR_BUDGET: usize = 32;

/// Everything the task owns.
pub(crate) struct Task {
    pub ep: Endpoint,
    pub clock: Clock,
    pub sockets: Vec<Arc<Socket>>,
    /// Error readiness of each socket (ICMP errors queued).
    pub error_watches: Vec<ErrorWatch>,
    pub commands: mpsc::Receiver<Command>,
    pub commands_open: bool,
    pub responses: mpsc::UnboundedReceiver<HandlerDone>,
    pub responder: mpsc::UnboundedSender<HandlerDone>,
    pub exchanges: Exchanges,
    pub service: Option<Arc<dyn Service>>,
    pub apps: AppSet,
    /// Group memberships of the sockets, for the App's host.
    pub membership: Membership,
    pub handlers_running: usize,
    pub recv: RecvBatch,
    pub send_buf: Vec<u8>,
    /// Datagrams waiting for one `sendmmsg`, one batch per socket.
    pub send_batches: Vec<SendBatch>,
    /// The waker of the one in-place poll of a handler (made once, not per request).
    pub noop_waker: Waker,
    /// Adaptive busy polling of the sockets after datagrams arrived.
    pub busy_poll: BusyPoll,
    pub trace: Option<TraceFn>,
    pub grace: Duration,
    pub closing: Option<Closing>,
    pub sleep: Pin<Box<Sleep>>,
    pub next_socket: usize,
}

/// A shutdown in progress.
pub(crate) struct Closing {
    deadline: tokio::time::Instant,
    done: Vec<oneshot::Sender<()>>,
}

/// A spawned handler's response: the request, its observable resource, the response.
pub(crate) type HandlerDone = (IncomingId, Option<u64>, Response);

/// What woke the task.
enum Wakeup {
    Command(Command),
    CommandsClosed,
    Respond(IncomingId, Option<u64>, Response),
    Datagrams(usize, usize),
    RecvError(usize, io::Error),
    /// The socket has ICMP errors queued.
    SocketErrors(usize),
    Timer,
}

impl Task {
    /// Runs until shut down.
    pub async fn run(mut self) {
        let mut host = DriverHost {
            membership: &self.membership,
        };
        self.apps.start(&mut self.ep, self.clock.now(), &mut host);
        loop {
            self.process_events();
            self.flush().await;
            if self.finished() {
                break;
            }
            self.arm_timer();
            let wake = poll_fn(|cx| self.poll_wake(cx)).await;
            match wake {
                Wakeup::Command(command) => {
                    self.on_command(command);
                    for _ in 1..COMMAND_BUDGET {
                        match self.commands.try_recv() {
                            Ok(command) => self.on_command(command),
                            Err(_) => break,
                        }
                    }
                }
                Wakeup::CommandsClosed => self.begin_closing(None),
                Wakeup::Respond(id, observable, response) => {
                    self.handlers_running = self.handlers_running.saturating_sub(1);
                    let now = self.clock.now();
                    self.respond(now, id, observable, &response);
                }
                Wakeup::Datagrams(socket, count) => self.on_datagrams(socket, count),
                Wakeup::RecvError(socket, e) => {
                    tracing::debug!(socket = %self.sockets[socket].local_addr(), "receive error: {e}");
                    // With IP_RECVERR a receive reports a queued ICMP error once; the error
                    // queue says which destination it is about.
                    self.on_socket_errors(socket);
                }
                Wakeup::SocketErrors(socket) => self.on_socket_errors(socket),
                Wakeup::Timer => {}
            }
            let now = self.clock.now();
            if self.ep.poll_timeout().is_some_and(|t| t <= now) {
                self.ep.handle_timeout(now);
            }
            if self
                .closing
                .as_ref()
                .is_some_and(|c| tokio::time::Instant::now() >= c.deadline)
            {
                self.abort_all();
                self.process_events();
                self.flush().await;
                break;
            }
        }
        if let Some(closing) = self.closing.take() {
            for done in closing.done {
                let _ = done.send(());
            }
        }
        tracing::debug!("driver stopped");
    }

    fn poll_wake(&mut self, cx: &mut Context<'_>) -> Poll<Wakeup> {
        if let Poll::Ready(Some((id, observable, response))) = self.responses.poll_recv(cx) {
            return Poll::Ready(Wakeup::Respond(id, observable, response));
        }
        if self.commands_open {
            match self.commands.poll_recv(cx) {
                Poll::Ready(Some(c)) => return Poll::Ready(Wakeup::Command(c)),
                Poll::Ready(None) => {
                    self.commands_open = false;
                    return Poll::Ready(Wakeup::CommandsClosed);
                }
                Poll::Pending => {}
            }
        }
        let n = self.sockets.len();
        for k in 0..n {
            let i = (self.next_socket + k) % n;
            let (mut slices, meta, slots) = self.recv.parts();
            match self.sockets[i].poll_recv(cx, &mut slices[..slots], &mut meta[..slots]) {
                Poll::Ready(Ok(count)) => {
                    self.next_socket = (i + 1) % n;
                    return Poll::Ready(Wakeup::Datagrams(i, count));
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Wakeup::RecvError(i, e)),
                Poll::Pending => {}
            }
        }
        for (i, watch) in self.error_watches.iter_mut().enumerate() {
            if watch.poll(cx).is_ready() {
                return Poll::Ready(Wakeup::SocketErrors(i));
            }
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Wakeup::Timer);
        }
        if self.busy_poll.wants_clock() {
            // Busy poll: traffic is flowing, so look for the next datagram directly instead
            // of sleeping in epoll (a wake-up costs more than the gap between requests).
            if self.busy_poll.keep_spinning(std::time::Instant::now()) {
                for k in 0..n {
                    let i = (self.next_socket + k) % n;
                    let (mut slices, meta, slots) = self.recv.parts();
                    match self.sockets[i].try_recv(&mut slices[..slots], &mut meta[..slots]) {
                        Ok(count) => {
                            self.next_socket = (i + 1) % n;
                            return Poll::Ready(Wakeup::Datagrams(i, count));
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Poll::Ready(Wakeup::RecvError(i, e)),
                    }
                }
                // Yield, so other tasks (spawned handlers, callers) still run in between.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        Poll::Pending
    }

    fn arm_timer(&mut self) {
        let far = tokio::time::Instant::now() + Duration::from_secs(3600);
        let mut at = self
            .ep
            .poll_timeout()
            .map_or(far, |t| self.clock.to_tokio(t));
        if let Some(c) = &self.closing {
            at = at.min(c.deadline);
        }
        // Only ever moved earlier: a sleep that fires before the engine's (later) deadline
        // is one cheap spurious wake-up, while resetting it for every request is not.
        if at < self.sleep.deadline() || self.sleep.is_elapsed() {
            self.sleep.as_mut().reset(at);
        }
    }

    fn on_datagrams(&mut self, socket: usize, count: usize) {
        if self.busy_poll.is_on() {
            self.busy_poll.on_datagrams(std::time::Instant::now());
        }
        // Taken out so events can be processed between datagrams while the batch is read.
        let recv = std::mem::take(&mut self.recv);
        for i in 0..count {
            for (meta, datagram) in recv.datagrams(i) {
                self.on_datagram(socket, meta, datagram);
            }
        }
        self.recv = recv;
    }

    fn on_datagram(&mut self, socket: usize, meta: &RecvMeta, datagram: &[u8]) {
        let remote = canonical_socket_addr(meta.addr);
        let group = meta.dst_ip.map(canonical_ip).filter(|ip| ip.is_multicast());
        if let Some(trace) = &self.trace {
            trace(&Trace {
                direction: TraceDirection::Received,
                peer: remote,
                datagram,
            });
        }
        let mut local = group.map_or(LocalAddr::UNICAST, LocalAddr::multicast);
        if self.sockets.len() > 1 {
            // The engine answers from the socket a peer last reached.
            local = local.on_socket(self.sockets[socket].local_addr());
        }
        self.ep
            .handle_datagram(self.clock.now(), remote, local, datagram);
    }

    fn on_command(&mut self, command: Command) {
        let now = self.clock.now();
        match command {
            Command::Request {
                ticket,
                remote,
                request,
                mut waiter,
            } => {
                if self.closing.is_some() {
                    waiter.send(Err(Error::Shutdown));
                    return;
                }
                match self.start_request(now, remote, &request) {
                    Ok(id) => self.exchanges.insert(id, ticket, remote, waiter),
                    Err(e) => {
                        waiter.send(Err(e));
                    }
                }
            }
            Command::Ping {
                ticket,
                remote,
                mut waiter,
            } => {
                if self.closing.is_some() {
                    waiter.send(Err(Error::Shutdown));
                    return;
                }
                match self.ep.ping(now, remote) {
                    Ok(id) => self.exchanges.insert(id, ticket, remote, waiter),
                    Err(e) => {
                        waiter.send(Err(request_error(e)));
                    }
                }
            }
            Command::Cancel { ticket } => {
                if let Some(id) = self.exchanges.remove_ticket(ticket) {
                    self.ep.cancel(now, id);
                }
            }
            Command::Deregister { ticket } => {
                if let Some(old) = self.exchanges.id_of(ticket) {
                    match self.ep.cancel_observation(now, old) {
                        Ok(new) => self.exchanges.rekey(old, new),
                        Err(_) => self.exchanges.finish(old),
                    }
                }
            }
            Command::Notify {
                resource,
                response,
                kind,
                reply,
            } => {
                let notified = response.options.with_coap(|options| {
                    let r = covey_proto::Response {
                        code: response.code,
                        options,
                        payload: &response.payload,
                    };
                    self.ep.notify_as(now, resource, &r, kind)
                });
                let _ = reply.send(notified);
            }
            Command::Stats(reply) => {
                let _ = reply.send(self.ep.stats().clone());
            }
            Command::Shutdown(done) => self.begin_closing(Some(done)),
        }
    }

    fn start_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        request: &Outgoing,
    ) -> Result<covey_proto::RequestId, Error> {
        let params = RequestParams {
            confirmable: request.confirmable,
            token: request.token,
        };
        request
            .options
            .with_coap(|options| {
                let r = covey_proto::Request {
                    method: request.method,
                    options,
                    payload: &request.payload,
                };
                self.ep.send_request(now, remote, &r, params)
            })
            .map_err(request_error)
    }

    /// Hands every pending engine event to whoever it belongs to.
    fn process_events(&mut self) {
        let now = self.clock.now();
        while let Some((owner, event)) = self.ep.poll_app_event() {
            match event {
                Event::Request(id) => self.on_request(now, id),
                Event::Response { id, key, last } if self.exchanges.contains(id) => {
                    let Some(received) = self.ep.response(key) else {
                        continue;
                    };
                    let response = Response::from_received(&received);
                    if !self.exchanges.deliver(id, response, last) {
                        self.ep.cancel(now, id);
                    }
                }
                Event::Failed { id, failure } if self.exchanges.contains(id) => {
                    let remote = self
                        .exchanges
                        .remote(id)
                        .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
                    self.exchanges
                        .fail(id, Error::from_failure(failure, remote));
                }
                Event::Finished(id) if self.exchanges.contains(id) => self.exchanges.finish(id),
                Event::Pong(id) if self.exchanges.contains(id) => {
                    let mut pong = Response::new(Code::EMPTY);
                    pong.source = self.exchanges.remote(id);
                    self.exchanges.deliver(id, pong, true);
                }
                other => {
                    let mut host = DriverHost {
                        membership: &self.membership,
                    };
                    if !self
                        .apps
                        .deliver(&mut self.ep, now, &mut host, owner, other)
                    {
                        tracing::trace!(?other, "event nobody waits for");
                    }
                }
            }
        }
        // Futures dropped without cancelling (e.g. a panicking caller): stop their exchanges.
        if self.exchanges.len() > 0 {
            for id in self.exchanges.abandoned() {
                self.exchanges.fail(id, Error::Cancelled);
                self.ep.cancel(now, id);
            }
        }
    }

    fn on_request(&mut self, now: Instant, id: IncomingId) {
        let Some(received) = self.ep.request(id) else {
            return;
        };
        // The router answers what it knows and what no App serves (its bare 4.04 tells a
        // client this is no server of that App); the Apps the rest.
        let apps = &mut self.apps;
        let service = self
            .service
            .clone()
            .filter(|s| s.accepts(&received) || !any_app_serves(apps, &received));
        let Some(service) = service else {
            let mut host = DriverHost {
                membership: &self.membership,
            };
            self.apps
                .deliver(&mut self.ep, now, &mut host, AppId(0), Event::Request(id));
            return;
        };
        let request = Request::from_received(&received, received.group);
        if self.closing.is_some() {
            let busy = Response::error(Code::SERVICE_UNAVAILABLE, "shutting down");
            self.respond(now, id, None, &busy);
            return;
        }
        let observable = service.observable(&request);
        // Polled once in place: most handlers are ready at once and need no task.
        let polled = catch_unwind(AssertUnwindSafe(|| {
            let mut future = service.call(request);
            let mut cx = Context::from_waker(&self.noop_waker);
            match future.as_mut().poll(&mut cx) {
                Poll::Ready(response) => Ok(response),
                Poll::Pending => Err(future),
            }
        }));
        match polled {
            Ok(Ok(response)) => self.respond(now, id, observable, &response),
            Ok(Err(future)) => self.spawn_handler(id, observable, future),
            Err(_) => {
                tracing::error!("request handler panicked");
                let failed = Response::error(Code::INTERNAL_SERVER_ERROR, "handler failed");
                self.respond(now, id, None, &failed);
            }
        }
    }

    fn spawn_handler(&mut self, id: IncomingId, observable: Option<u64>, future: ResponseFuture) {
        self.handlers_running += 1;
        let guard = RespondGuard {
            id,
            observable,
            tx: Some(self.responder.clone()),
        };
        tokio::spawn(async move {
            let mut guard = guard;
            let response = future.await;
            guard.send(response);
        });
    }

    /// Answers `id`; through the observe registry when the resource is observable.
    fn respond(
        &mut self,
        now: Instant,
        id: IncomingId,
        observable: Option<u64>,
        response: &Response,
    ) {
        let result = response.options.with_coap(|options| {
            let r = covey_proto::Response {
                code: response.code,
                options,
                payload: &response.payload,
            };
            match observable {
                Some(resource) => self
                    .ep
                    .respond_observable(now, id, resource, &r)
                    .map(|_| ()),
                None => self.ep.respond(now, id, &r),
            }
        });
        match result {
            Ok(()) => {}
            Err(RespondError::TooLarge) => {
                tracing::warn!(size = response.payload.len(), "response too large to send");
            }
            Err(e) => tracing::debug!("response not sent: {e}"),
        }
    }

    /// Sends everything the engine has queued, in one `sendmmsg` batch per socket.
    async fn flush(&mut self) {
        let now = self.clock.now();
        while let Some(t) = self.ep.poll_transmit(now, &mut self.send_buf) {
            let datagram = &self.send_buf[..t.size];
            if let Some(trace) = &self.trace {
                trace(&Trace {
                    direction: TraceDirection::Sent,
                    peer: t.destination,
                    datagram,
                });
            }
            let Some(i) = self.socket_for(&t) else {
                let e = io::Error::new(
                    io::ErrorKind::Unsupported,
                    "no bound socket of this address family",
                );
                self.on_send_error(now, t.destination, e);
                continue;
            };
            if self.send_batches[i].is_full() {
                self.send_pending(now, i).await;
            }
            self.send_batches[i].push(t.destination, &self.send_buf[..t.size]);
        }
        for i in 0..self.send_batches.len() {
            if !self.send_batches[i].is_empty() {
                self.send_pending(now, i).await;
            }
        }
    }

    /// The socket a datagram leaves on: the one the engine names, else the first that can
    /// reach the destination's address family.
    fn socket_for(&self, t: &Transmit) -> Option<usize> {
        if let Some(local) = t.source.socket {
            if let Some(i) = self.sockets.iter().position(|s| s.local_addr() == local) {
                return Some(i);
            }
        }
        self.sockets.iter().position(|s| s.can_reach(t.destination))
    }

    /// Sends the batch of socket `i` until it is empty; a datagram the kernel refuses is
    /// reported and dropped, the rest still go.
    async fn send_pending(&mut self, now: Instant, i: usize) {
        while let Some((destination, _)) = self.send_batches[i].front() {
            let sent = self.sockets[i].send_batch(&mut self.send_batches[i]).await;
            if let Err(e) = sent {
                self.send_batches[i].skip();
                self.on_send_error(now, destination, e);
            }
        }
    }

    /// A send failed: exchanges towards that address fail now instead of timing out.
    fn on_send_error(&mut self, now: Instant, destination: SocketAddr, e: io::Error) {
        tracing::debug!(%destination, "send failed: {e}");
        for id in self.exchanges.towards(destination) {
            self.ep.cancel(now, id);
            self.exchanges.fail(
                id,
                Error::Unreachable {
                    addr: destination,
                    reason: e.to_string(),
                },
            );
        }
    }

    /// Reads the ICMP errors queued on socket `i`: requests to a destination the network
    /// reported unreachable fail now instead of after every retransmission.
    fn on_socket_errors(&mut self, i: usize) {
        let now = self.clock.now();
        let socket = self.sockets[i].clone();
        socket.drain_errors(SOCKET_ERROR_BUDGET, |u| self.on_unreachable(now, u));
    }

    /// Fails the exchanges towards an unreachable destination: those of the async API with
    /// what the network said, the hosted App's through the engine (which also slows new
    /// requests to it down to PROBING_RATE). Served requests and observers are unaffected.
    fn on_unreachable(&mut self, now: Instant, unreachable: Unreachable) {
        let Unreachable {
            destination,
            reason,
        } = unreachable;
        tracing::debug!(%destination, "unreachable: {reason}");
        for id in self.exchanges.towards(destination) {
            self.ep.cancel(now, id);
            self.exchanges.fail(
                id,
                Error::Unreachable {
                    addr: destination,
                    reason: reason.to_string(),
                },
            );
        }
        self.ep.handle_unreachable(now, destination);
    }

    fn begin_closing(&mut self, done: Option<oneshot::Sender<()>>) {
        let closing = self.closing.get_or_insert_with(|| Closing {
            deadline: tokio::time::Instant::now() + self.grace,
            done: Vec::new(),
        });
        closing.done.extend(done);
    }

    fn finished(&self) -> bool {
        self.closing.is_some()
            && self.exchanges.len() == 0
            && self.handlers_running == 0
            && self.ep.outstanding_requests() == 0
    }

    /// The grace period is over: whatever is still running fails.
    fn abort_all(&mut self) {
        let now = self.clock.now();
        for id in self.exchanges.ids() {
            self.ep.cancel(now, id);
            self.exchanges.fail(id, Error::Shutdown);
        }
    }
}

/// Whether an App of `apps` serves `request`.
fn any_app_serves(apps: &mut AppSet, request: &Received<'_>) -> bool {
    (0..apps.len()).any(|i| {
        apps.get_mut(AppId(i as u16))
            .is_some_and(|app| app.serves(request))
    })
}

/// The engine's refusal to start a request, as the API's error.
fn request_error(e: RequestError) -> Error {
    match e {
        RequestError::Overload => Error::Overload,
        RequestError::TooLarge => Error::TooLarge,
        _ => Error::InvalidRequest(e.to_string()),
    }
}

/// Sends the handler's response back to the task, or 5.00 if the handler panicked.
struct RespondGuard {
    id: IncomingId,
    observable: Option<u64>,
    tx: Option<mpsc::UnboundedSender<HandlerDone>>,
}

impl RespondGuard {
    fn send(&mut self, response: Response) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send((self.id, self.observable, response));
        }
    }
}

impl Drop for RespondGuard {
    fn drop(&mut self) {
        self.observable = None;
        self.send(Response::error(
            Code::INTERNAL_SERVER_ERROR,
            "handler failed",
        ));
    }
}

/// A waker for the one in-place poll of a handler; the spawned task polls it properly.
pub(crate) fn noop_waker() -> Waker {
    Waker::from(Arc::new(NoopWake))
}

/// Wakes nobody.
struct NoopWake;

impl Wake for NoopWake {
    fn wake(self: Arc<Self>) {}
}
