//! Waiting for the store: a reply that reports a change (created, changed, deleted) goes
//! out, and a multicast creation asks its members to join, only once the store made the
//! change durable, so a crash never loses what a client was told or strands members in a
//! group nobody remembers. Synchronous stores are durable at once; for a store that writes
//! in the background the EM looks again every [`POLL`] while something waits (a sans-IO
//! App is woken by its engine only).

use super::respond::{Reply, Responder};
use super::{EntityManager, Input};
use crate::timers::TaskId;
use covey_core::Code;
use covey_proto::{Duration, Endpoint, Instant, LogLevel};

/// How often the EM checks a background store while something waits for it.
const POLL: Duration = Duration::from_millis(1);

/// The task id of the EM's own store-polling timer (tasks count from 1).
pub(super) const STORE_POLL: TaskId = 0;

/// What runs once the writes before it are durable.
#[derive(Debug)]
pub(super) enum AfterWrite {
    /// Answer a client.
    Reply(Responder, Reply),
    /// Move a task on with [`Input::Written`].
    Resume(TaskId),
}

impl EntityManager {
    /// Sends `reply` once every write made so far is durable.
    pub(super) fn reply_when_durable(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: &Responder,
        reply: Reply,
    ) {
        self.when_durable(ep, now, AfterWrite::Reply(to.clone(), reply));
    }

    /// Whether every write made so far is durable (true for a synchronous store).
    pub(super) fn all_durable(&mut self) -> bool {
        let accepted = self.store.accepted();
        self.store.durable().is_ok_and(|d| d >= accepted)
    }

    /// Resumes task `id` once every write made so far is durable: at the end of this
    /// callback at the earliest, as the task is not among the tasks while it runs.
    pub(super) fn resume_when_durable(&mut self, now: Instant, id: TaskId) {
        self.after_write
            .push_back((self.store.accepted(), AfterWrite::Resume(id)));
        self.poll_store(now);
    }

    fn when_durable(&mut self, ep: &mut Endpoint, now: Instant, then: AfterWrite) {
        self.after_write.push_back((self.store.accepted(), then));
        self.release_durable(ep, now);
    }

    fn poll_store(&mut self, now: Instant) {
        if self.store_poll.is_none() {
            self.store_poll = Some(self.timers.add(now + POLL, STORE_POLL, 0));
        }
    }

    /// Runs what waits for writes that are now durable, and keeps polling while anything
    /// still waits.
    pub(super) fn release_durable(&mut self, ep: &mut Endpoint, now: Instant) {
        if self.after_write.is_empty() {
            return;
        }
        let durable = self.store.durable();
        while let Some((mark, _)) = self.after_write.front() {
            if durable.as_ref().is_ok_and(|d| d < mark) {
                break;
            }
            let Some((_, then)) = self.after_write.pop_front() else {
                break;
            };
            let written = durable.as_ref().map(|_| ()).map_err(Clone::clone);
            match (then, written) {
                (AfterWrite::Reply(to, reply), Ok(())) => self.send_reply(ep, now, &to, reply),
                (AfterWrite::Reply(to, _), Err(e)) => {
                    let text = format!("not saved: {e}");
                    self.note(LogLevel::Error, text.clone());
                    let reply = Reply::error(Code::INTERNAL_SERVER_ERROR, text);
                    self.send_reply(ep, now, &to, reply);
                }
                (AfterWrite::Resume(id), written) => {
                    self.step(ep, now, id, Input::Written(written))
                }
            }
        }
        if !self.after_write.is_empty() {
            self.poll_store(now);
        }
    }

    /// The store-polling timer fired.
    pub(super) fn store_polled(&mut self, ep: &mut Endpoint, now: Instant) {
        self.store_poll = None;
        self.release_durable(ep, now);
    }
}
