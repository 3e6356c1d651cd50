//! The driver task: owns the engine node and the sockets, feeds datagrams, time and commands
//! in, and sends what the engine produces; the node hands the engine's events to the
//! driver's applications (`DriverApps`).

use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use covey_proto::{IncomingId, Instant, LocalAddr, Node, RequestError, RequestParams, Transmit};
use quinn_udp::RecvMeta;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Sleep;

use super::app_host::DriverHost;
use super::busy_poll::BusyPoll;
use super::command::{Command, Outgoing};
use super::driver_apps::{respond, DriverApps, HandlerDone};
use super::socket_roles::SocketRoles;
use super::trace::{Trace, TraceDirection, TraceFn};
use crate::clock::Clock;
use crate::dtls::SessionTable;
use crate::multicast::Membership;
use crate::socket::{
    canonical_ip, canonical_socket_addr, on_loopback, ErrorWatch, RecvBatch, SendBatch, Socket,
    Unreachable,
};
use crate::{Error, Response};

/// The App host over the task's fields (a macro so the node stays borrowable beside it).
macro_rules! driver_host {
    ($task:ident) => {
        DriverHost {
            membership: &$task.membership,
            dtls: $task.dtls.as_ref(),
            roles: &$task.roles,
        }
    };
}

/// Commands handled per wake-up before the task sends, so a busy client cannot starve sockets.
const COMMAND_BUDGET: usize = 64;

/// ICMP errors read per socket and wake-up, so a flood of them cannot starve the rest.
const SOCKET_ERROR_BUDGET: usize = 32;

/// Everything the task owns.
pub(crate) struct Task {
    /// The engine and what runs on it, in covey-proto's drive loop.
    pub node: Node<DriverApps>,
    pub clock: Clock,
    pub sockets: Vec<Arc<Socket>>,
    /// Error readiness of each socket (ICMP errors queued).
    pub error_watches: Vec<ErrorWatch>,
    pub commands: mpsc::Receiver<Command>,
    pub commands_open: bool,
    pub responses: mpsc::UnboundedReceiver<HandlerDone>,
    /// Group memberships of the sockets, for the App's host.
    pub membership: Membership,
    pub recv: RecvBatch,
    pub send_buf: Vec<u8>,
    /// Datagrams waiting for one `sendmmsg`, one batch per socket.
    pub send_batches: Vec<SendBatch>,
    /// Adaptive busy polling of the sockets after datagrams arrived.
    pub busy_poll: BusyPoll,
    pub trace: Option<TraceFn>,
    pub grace: Duration,
    pub closing: Option<Closing>,
    pub sleep: Pin<Box<Sleep>>,
    pub next_socket: usize,
    /// The DTLS sessions when (some of) the sockets speak coaps: records on the wire,
    /// plaintext in the engine.
    pub dtls: Option<SessionTable>,
    /// Which sockets speak coaps (through `dtls`) and which plain coap.
    pub roles: SocketRoles,
    /// The OSCORE contexts the builder was given, in its order.
    pub oscore: Vec<covey_proto::OscoreContextId>,
    /// Those whose sequence numbers are reserved ahead, with what reserves more.
    pub reservations: Vec<(covey_proto::OscoreContextId, super::SequenceReservation)>,
}

/// A shutdown in progress.
pub(crate) struct Closing {
    deadline: tokio::time::Instant,
    done: Vec<oneshot::Sender<()>>,
}

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
        let mut host = driver_host!(self);
        self.node.start(self.clock.now(), &mut host);
        loop {
            self.dispatch();
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
                    let apps = &mut self.node.apps;
                    apps.handlers_running = apps.handlers_running.saturating_sub(1);
                    let now = self.clock.now();
                    respond(&mut self.node.endpoint, now, id, observable, &response);
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
            if let Some(table) = &mut self.dtls {
                let now = std::time::Instant::now();
                if table.poll_timeout().is_some_and(|t| t <= now) {
                    table.handle_timeout(now);
                }
            }
            self.fail_handshakes();
            self.renew_reservations();
            let now = self.clock.now();
            if self.node.poll_timeout().is_some_and(|t| t <= now) {
                let mut host = driver_host!(self);
                self.node.handle_timeout(now, &mut host);
            }
            if self
                .closing
                .as_ref()
                .is_some_and(|c| tokio::time::Instant::now() >= c.deadline)
            {
                self.abort_all();
                self.dispatch();
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

    /// Lets each reserving OSCORE context reserve more sequence numbers as it nears its
    /// limit (a round of work uses far fewer than a reservation leaves).
    fn renew_reservations(&mut self) {
        for (id, reserve) in &mut self.reservations {
            self.node.endpoint.renew_oscore_reservation(*id, reserve);
        }
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
            .node
            .poll_timeout()
            .map_or(far, |t| self.clock.to_tokio(t));
        if let Some(c) = &self.closing {
            at = at.min(c.deadline);
        }
        if let Some(t) = self.dtls.as_ref().and_then(SessionTable::poll_timeout) {
            at = at.min(tokio::time::Instant::from_std(t));
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
        let mut local = group.map_or(LocalAddr::UNICAST, LocalAddr::multicast);
        if let Some(destination) = meta.dst_ip.map(canonical_ip).filter(|_| group.is_none()) {
            // Apps name themselves by the address a client used (the EM's entity URIs).
            local = local.sent_to(destination);
        }
        if let Some(on_loopback) = on_loopback(meta) {
            // The engine drops a loopback source that came in elsewhere (spoofed), and
            // management trusts only what came in on loopback.
            local = local.arrived_on_loopback(on_loopback);
        }
        if self.sockets.len() > 1 {
            // The engine answers from the socket a peer last reached.
            local = local.on_socket(self.sockets[socket].local_addr());
        }
        let table = match &mut self.dtls {
            Some(table) if self.roles.is_secured(socket) => table,
            _ => {
                self.deliver(remote, local, datagram);
                return;
            }
        };
        if group.is_some() {
            // DTLS has no multicast: a secured endpoint ignores group traffic.
            return;
        }
        table.handle_datagram(
            std::time::Instant::now(),
            self.sockets[socket].local_addr(),
            remote,
            datagram,
        );
        while let Some((_, remote, plaintext)) =
            self.dtls.as_mut().and_then(SessionTable::poll_received)
        {
            self.deliver(remote, local, &plaintext);
            if let Some(table) = self.dtls.as_mut() {
                table.recycle(plaintext);
            }
        }
    }

    /// Hands a plaintext datagram to the engine.
    fn deliver(&mut self, remote: SocketAddr, local: LocalAddr, datagram: &[u8]) {
        if let Some(trace) = &self.trace {
            trace(&Trace {
                direction: TraceDirection::Received,
                peer: remote,
                datagram,
            });
        }
        let mut host = driver_host!(self);
        self.node
            .handle_datagram(self.clock.now(), remote, local, datagram, &mut host);
    }

    /// Fails the requests waiting on DTLS handshakes that failed, with the reason.
    fn fail_handshakes(&mut self) {
        let now = self.clock.now();
        while let Some((addr, reason)) = self.dtls.as_mut().and_then(SessionTable::poll_failure) {
            self.fail_towards(now, addr, || Error::Handshake {
                addr,
                reason: reason.clone(),
            });
        }
    }

    /// Fails the async API's exchanges towards `destination` now, with `error`.
    fn fail_towards(&mut self, now: Instant, destination: SocketAddr, error: impl Fn() -> Error) {
        for id in self.node.apps.exchanges.towards(destination) {
            self.node.endpoint.cancel(now, id);
            self.node.apps.exchanges.fail(id, error());
        }
    }

    /// Hands the engine's pending events to the async API, the service and the Apps (after
    /// commands, handler responses and shutdown steps, which act on the engine directly).
    fn dispatch(&mut self) {
        let mut host = driver_host!(self);
        self.node.dispatch(self.clock.now(), &mut host);
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
                    Ok(id) => self.node.apps.exchanges.insert(id, ticket, remote, waiter),
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
                match self.node.endpoint.ping(now, remote) {
                    Ok(id) => self.node.apps.exchanges.insert(id, ticket, remote, waiter),
                    Err(e) => {
                        waiter.send(Err(request_error(e)));
                    }
                }
            }
            Command::Cancel { ticket } => {
                if let Some(id) = self.node.apps.exchanges.remove_ticket(ticket) {
                    self.node.endpoint.cancel(now, id);
                }
            }
            Command::Deregister { ticket } => {
                if let Some(old) = self.node.apps.exchanges.id_of(ticket) {
                    match self.node.endpoint.cancel_observation(now, old) {
                        Ok(new) => self.node.apps.exchanges.rekey(old, new),
                        Err(_) => self.node.apps.exchanges.finish(old),
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
                    self.node.endpoint.notify_as(now, resource, &r, kind)
                });
                let _ = reply.send(notified);
            }
            Command::Stats(reply) => {
                let _ = reply.send(self.node.endpoint.stats().clone());
            }
            Command::DtlsState(reply) => {
                let _ = reply.send(self.dtls.as_ref().map(SessionTable::state));
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
            source: request.source,
            ..RequestParams::default()
        };
        request
            .options
            .with_coap(|options| {
                let r = covey_proto::Request {
                    method: request.method,
                    options,
                    payload: &request.payload,
                };
                match request.oscore {
                    None => self.node.endpoint.send_request(now, remote, &r, params),
                    Some(n) => {
                        let context = self.oscore.get(n).copied().ok_or(RequestError::Oscore)?;
                        let endpoint = &mut self.node.endpoint;
                        match &request.edhoc_message_3 {
                            Some(m3) => endpoint.send_edhoc_oscore_request(
                                now,
                                remote,
                                &r,
                                params,
                                (context, m3),
                            ),
                            None => {
                                endpoint.send_protected_request(now, remote, &r, params, context)
                            }
                        }
                    }
                }
            })
            .map_err(request_error)
    }

    /// Sends everything the engine has queued, in one `sendmmsg` batch per socket.
    async fn flush(&mut self) {
        let now = self.clock.now();
        while let Some(t) = self.node.endpoint.poll_transmit(now, &mut self.send_buf) {
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
            if let Some(table) = self.dtls.as_mut().filter(|_| self.roles.is_secured(i)) {
                if t.destination.ip().is_multicast() {
                    // DTLS has no multicast.
                    continue;
                }
                let local = self.sockets[i].local_addr();
                table.send(std::time::Instant::now(), local, t.destination, datagram);
                continue;
            }
            if self.send_batches[i].is_full() {
                self.send_pending(now, i).await;
            }
            self.send_batches[i].push(t.destination, &self.send_buf[..t.size]);
        }
        while let Some(record) = self.dtls.as_mut().and_then(SessionTable::poll_transmit) {
            let Some(i) = self
                .sockets
                .iter()
                .position(|s| s.local_addr() == record.local)
            else {
                continue;
            };
            if self.send_batches[i].is_full() {
                self.send_pending(now, i).await;
            }
            self.send_batches[i].push(record.remote, &record.datagram);
            if let Some(table) = self.dtls.as_mut() {
                table.recycle(record.datagram);
            }
        }
        self.fail_handshakes();
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
        self.fail_towards(now, destination, || Error::Unreachable {
            addr: destination,
            reason: e.to_string(),
        });
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
    /// requests to it down to PROBING_RATE). When the destination's host says its port is
    /// closed, the observations it registered from there end too; served requests, and
    /// observers behind a route that may come back, are unaffected.
    fn on_unreachable(&mut self, now: Instant, unreachable: Unreachable) {
        let Unreachable {
            destination,
            reason,
            port_closed,
        } = unreachable;
        tracing::debug!(%destination, "unreachable: {reason}");
        self.fail_towards(now, destination, || Error::Unreachable {
            addr: destination,
            reason: reason.to_string(),
        });
        if port_closed {
            let ended = self.node.endpoint.handle_port_closed(now, destination);
            if ended > 0 {
                tracing::debug!(%destination, "{reason}: {ended} observation(s) ended");
            }
        } else {
            self.node.endpoint.handle_unreachable(now, destination);
        }
    }

    fn begin_closing(&mut self, done: Option<oneshot::Sender<()>>) {
        self.node.apps.closing = true;
        let closing = self.closing.get_or_insert_with(|| Closing {
            deadline: tokio::time::Instant::now() + self.grace,
            done: Vec::new(),
        });
        closing.done.extend(done);
    }

    fn finished(&self) -> bool {
        self.closing.is_some()
            && self.node.apps.exchanges.len() == 0
            && self.node.apps.handlers_running == 0
            && self.node.endpoint.outstanding_requests() == 0
    }

    /// The grace period is over: whatever is still running fails.
    fn abort_all(&mut self) {
        let now = self.clock.now();
        for id in self.node.apps.exchanges.ids() {
            self.node.endpoint.cancel(now, id);
            self.node.apps.exchanges.fail(id, Error::Shutdown);
        }
    }
}

/// The engine's refusal to start a request, as the API's error.
fn request_error(e: RequestError) -> Error {
    match e {
        RequestError::Overload => Error::Overload,
        RequestError::TooLarge => Error::TooLarge,
        _ => Error::InvalidRequest(e.to_string()),
    }
}
