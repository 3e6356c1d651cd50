//! What a task of the EM acts through: the engine, the clock, and the tables that route
//! the engine's answers and timers back to the task.

use crate::member_oscore::MemberOscore;
use crate::sources::Sources;
use crate::store::Store;
use crate::timers::{TaskId, TimerKey, Timers};
use covey_proto::{AppId, Endpoint, Instant, Request, RequestError, RequestId, RequestParams};
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// A task's view of the engine for one event.
pub(crate) struct TaskIo<'a> {
    /// The engine.
    pub ep: &'a mut Endpoint,
    /// The time of the event.
    pub now: Instant,
    routes: &'a mut BTreeMap<RequestId, TaskId>,
    timers: &'a mut Timers,
    task: TaskId,
    /// The sockets requests to members leave from.
    sources: Sources,
    /// The EM's App id on its node: the owner of the requests it sends.
    app: AppId,
    /// The members' OSCORE contexts.
    member_oscore: &'a mut MemberOscore,
    /// Where their sequence numbers are reserved.
    store: &'a mut dyn Store,
}

impl<'a> TaskIo<'a> {
    pub fn new(
        ep: &'a mut Endpoint,
        now: Instant,
        routes: &'a mut BTreeMap<RequestId, TaskId>,
        timers: &'a mut Timers,
        task: TaskId,
        (sources, app): (Sources, AppId),
        (member_oscore, store): (&'a mut MemberOscore, &'a mut dyn Store),
    ) -> TaskIo<'a> {
        TaskIo {
            ep,
            now,
            routes,
            timers,
            task,
            sources,
            app,
            member_oscore,
            store,
        }
    }

    /// Sends a request whose answer comes back to this task, over DTLS when `secure` (a
    /// `coaps://` member), protected with OSCORE when the member has a context.
    pub fn send(
        &mut self,
        remote: SocketAddr,
        secure: bool,
        request: &Request<'_>,
        params: RequestParams,
    ) -> Result<RequestId, RequestError> {
        let params = RequestParams {
            source: self.sources.source(remote, secure),
            owner: self.app,
            ..params
        };
        let id = match self
            .member_oscore
            .context_for(self.ep, self.store, remote)?
        {
            Some(context) => self
                .ep
                .send_protected_request(self.now, remote, request, params, context)?,
            None => self.ep.send_request(self.now, remote, request, params)?,
        };
        self.routes.insert(id, self.task);
        Ok(id)
    }

    /// Abandons a request of this task.
    pub fn cancel(&mut self, id: RequestId) {
        if self.routes.get(&id) == Some(&self.task) {
            self.routes.remove(&id);
            self.ep.cancel(self.now, id);
        }
    }

    /// Wakes this task with `tag` at `at`.
    pub fn set_timer(&mut self, at: Instant, tag: u8) -> TimerKey {
        self.timers.add(at, self.task, tag)
    }

    /// Cancels a timer of this task.
    pub fn cancel_timer(&mut self, key: TimerKey) {
        self.timers.cancel(key);
    }
}
