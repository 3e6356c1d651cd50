//! What the driver runs on its engine node: the async API's exchanges, the service (router
//! and async handlers) and the hosted Apps. covey-proto's `Node` hands it every engine
//! event after each input, as it does in the simulator and the tests.

use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use covey_core::Code;
use covey_proto::{
    AppContext, AppId, AppSet, Apps, Endpoint, Event, IncomingId, Instant, Received, RespondError,
};
use tokio::sync::mpsc;

use super::exchanges::Exchanges;
use super::service::{ResponseFuture, Service};
use crate::{Error, Request, Response};

/// A spawned handler's response: the request, its observable resource, the response.
pub(crate) type HandlerDone = (IncomingId, Option<u64>, Response);

/// The driver's applications on its node.
pub(crate) struct DriverApps {
    /// Requests and pings of the async API, waiting for their answers.
    pub exchanges: Exchanges,
    /// The router and async handlers, if the driver serves.
    pub service: Option<Arc<dyn Service>>,
    /// The hosted Apps.
    pub apps: AppSet,
    /// Spawned handlers not yet answered.
    pub handlers_running: usize,
    /// Where spawned handlers send their response.
    pub responder: mpsc::UnboundedSender<HandlerDone>,
    /// The waker of the one in-place poll of a handler (made once, not per request).
    pub noop_waker: Waker,
    /// Shutting down: new requests to the service get 5.03.
    pub closing: bool,
}

impl DriverApps {
    /// Applications with no exchanges yet.
    pub fn new(
        service: Option<Arc<dyn Service>>,
        apps: AppSet,
        responder: mpsc::UnboundedSender<HandlerDone>,
    ) -> DriverApps {
        DriverApps {
            exchanges: Exchanges::default(),
            service,
            apps,
            handlers_running: 0,
            responder,
            noop_waker: Waker::from(Arc::new(NoopWake)),
            closing: false,
        }
    }

    fn on_request(&mut self, cx: &mut AppContext<'_>, id: IncomingId) {
        let (ep, now) = (&mut *cx.endpoint, cx.now);
        let Some(received) = ep.request(id) else {
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
            self.apps.deliver(cx, AppId(0), Event::Request(id));
            return;
        };
        let request = Request::from_received(&received, received.group);
        if self.closing {
            let busy = Response::error(Code::SERVICE_UNAVAILABLE, "shutting down");
            respond(ep, now, id, None, &busy);
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
            Ok(Ok(response)) => respond(ep, now, id, observable, &response),
            Ok(Err(future)) => self.spawn_handler(id, observable, future),
            Err(_) => {
                tracing::error!("request handler panicked");
                let failed = Response::error(Code::INTERNAL_SERVER_ERROR, "handler failed");
                respond(ep, now, id, None, &failed);
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
}

impl Apps for DriverApps {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.apps.start(cx);
    }

    /// Hands every pending engine event to whoever it belongs to.
    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        let now = cx.now;
        while let Some((owner, event)) = cx.poll_event() {
            let ep = &mut *cx.endpoint;
            match event {
                Event::Request(id) => self.on_request(cx, id),
                Event::Response { id, key, last } if self.exchanges.contains(id) => {
                    let Some(received) = ep.response(key) else {
                        continue;
                    };
                    let response = Response::from_received(&received);
                    if !self.exchanges.deliver(id, response, last) {
                        ep.cancel(now, id);
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
                    if !self.apps.deliver(cx, owner, other) {
                        tracing::trace!(?other, "event nobody waits for");
                    }
                }
            }
        }
        // Futures dropped without cancelling (e.g. a panicking caller): stop their exchanges.
        if self.exchanges.len() > 0 {
            for id in self.exchanges.abandoned() {
                self.exchanges.fail(id, Error::Cancelled);
                cx.endpoint.cancel(now, id);
            }
        }
    }
}

/// Answers `id`; through the observe registry when the resource is observable.
pub(crate) fn respond(
    ep: &mut Endpoint,
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
            Some(resource) => ep.respond_observable(now, id, resource, &r).map(|_| ()),
            None => ep.respond(now, id, &r),
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

/// Whether an App of `apps` serves `request`.
fn any_app_serves(apps: &mut AppSet, request: &Received<'_>) -> bool {
    (0..apps.len()).any(|i| {
        apps.get_mut(AppId(i as u16))
            .is_some_and(|app| app.serves(request))
    })
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

/// Wakes nobody: the one in-place poll of a handler; the spawned task polls it properly.
struct NoopWake;

impl Wake for NoopWake {
    fn wake(self: Arc<Self>) {}
}
