//! Several Apps on one node: requests by what each App serves, responses and timers by the
//! App that started the exchange or set the timer.

use super::{App, AppContext, AppId};
use crate::{Event, Response};
use alloc::boxed::Box;
use alloc::vec::Vec;
use covey_core::Code;

/// Apps composed on one node, each known to the engine by its index as an [`AppId`].
/// `A` is `dyn App + Send` for hosts on other threads, `dyn App` for single-threaded ones.
pub struct AppSet<A: ?Sized + App = dyn App + Send> {
    apps: Vec<Box<A>>,
}

impl<A: ?Sized + App> Default for AppSet<A> {
    fn default() -> Self {
        AppSet { apps: Vec::new() }
    }
}

impl<A: ?Sized + App> AppSet<A> {
    /// An empty set: every request is answered 4.04.
    pub fn new() -> Self {
        AppSet::default()
    }

    /// Adds `app` after those already there (it is offered requests after them).
    pub fn with(mut self, app: Box<A>) -> Self {
        self.push(app);
        self
    }

    /// Adds `app` after those already there.
    pub fn push(&mut self, app: Box<A>) {
        self.apps.push(app);
    }

    /// The App with id `id`.
    pub fn get_mut(&mut self, id: AppId) -> Option<&mut A> {
        self.apps.get_mut(id.0 as usize).map(|a| &mut **a)
    }

    /// Number of Apps.
    pub fn len(&self) -> usize {
        self.apps.len()
    }

    /// True when the set has no App.
    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
    }

    /// Starts every App, in order.
    pub fn start(&mut self, cx: &mut AppContext<'_>) {
        for (i, app) in self.apps.iter_mut().enumerate() {
            cx.set_acting(AppId(i as u16));
            app.start(cx);
        }
        cx.set_acting(AppId(0));
    }

    /// Hands every pending event of the engine and every fired timer to the App it belongs
    /// to; a request no App serves is answered 4.04. This is the drive step every host runs
    /// after feeding the engine a datagram or a timeout.
    pub fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        while let Some((owner, event)) = cx.poll_event() {
            self.deliver(cx, owner, event);
        }
        cx.set_acting(AppId(0));
    }

    /// Routes one event: a request to the first App that serves it, anything else to its
    /// owner. Returns false when no App took it.
    pub fn deliver(&mut self, cx: &mut AppContext<'_>, owner: AppId, event: Event) -> bool {
        let target = match event {
            Event::Request(id) => {
                let Some(request) = cx.endpoint.request(id) else {
                    return false;
                };
                match self.apps.iter().position(|a| a.serves(&request)) {
                    Some(i) => i,
                    None => {
                        // A diagnostic payload is implicitly text/plain (RFC 7252 §5.5.2).
                        let response =
                            Response::with_payload(Code::NOT_FOUND, b"no resource at this path");
                        let _ = cx.endpoint.respond(cx.now, id, &response);
                        return false;
                    }
                }
            }
            _ => owner.0 as usize,
        };
        let Some(app) = self.apps.get_mut(target) else {
            return false;
        };
        cx.set_acting(AppId(target as u16));
        app.handle_event(cx, event);
        true
    }
}

impl<A: ?Sized + App> core::fmt::Debug for AppSet<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AppSet")
            .field("apps", &self.apps.len())
            .finish()
    }
}
