//! `DELETE /e/<name>`: a multicast entity's members are asked to leave its group first; the
//! reply reports each member's result.

use super::create::{addresses, feed_membership};
use super::respond::{Reply, Responder};
use super::{unknown_entity, EntityManager, Input, Task};
use crate::incoming::IncomingRequest;
use crate::membership::{Action, MembershipChange};
use crate::task_io::TaskIo;
use crate::timers::TaskId;
use covey_core::{Code, ContentFormat};
use covey_proto::{Endpoint, Instant, LogLevel};
use serde_json::json;

/// A deletion waiting for the members to leave.
#[derive(Debug)]
pub(crate) struct DeleteTask {
    to: Responder,
    accept: Option<ContentFormat>,
    name: String,
    change: MembershipChange,
}

impl DeleteTask {
    pub(super) fn feed(&mut self, io: &mut TaskIo<'_>, input: Input) {
        feed_membership(&mut self.change, io, input);
    }
}

impl EntityManager {
    /// `DELETE /e/<name>`.
    pub(super) fn delete(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: Responder,
        req: &IncomingRequest,
        name: &str,
    ) {
        if self.busy.contains(name) {
            return self.send_reply(ep, now, &to, Reply::busy(name));
        }
        let Some(e) = self.entities.get(name) else {
            return self.send_reply(ep, now, &to, unknown_entity(name));
        };
        let Some(group) = e.group else {
            if let Err(err) = self.store.remove(name) {
                let reply = self.store_failure(name, err);
                return self.send_reply(ep, now, &to, reply);
            }
            self.entities.remove(name);
            self.member_oscore.keep_only(name, &[]);
            let why = format!("entity {name} was deleted");
            self.end_observations(ep, now, name, Code::NOT_FOUND, &why);
            self.note(LogLevel::Info, format!("deleted entity {name}"));
            let uri = self.entity_uri(to.reached, name);
            let reply = if req.accept == Some(ContentFormat::JSON) {
                let doc = json!({"entity": uri, "group": null, "left": 0, "members": []});
                Reply::with(
                    Code::DELETED,
                    ContentFormat::JSON,
                    serde_json::to_vec(&doc).unwrap_or_default(),
                )
            } else {
                Reply::with(
                    Code::DELETED,
                    ContentFormat::TEXT_PLAIN,
                    format!("deleted {uri}\n").into_bytes(),
                )
            };
            return self.reply_when_durable(ep, now, &to, reply);
        };
        let mut change = MembershipChange::new(
            Action::Leave,
            group,
            &self.config.membership_path,
            addresses(e),
            self.config.validation_timeout,
        );
        self.busy.insert(name.to_string());
        let id = self.new_task();
        self.with_io(ep, now, id, |io, _| change.start(io));
        let task = DeleteTask {
            to,
            accept: req.accept,
            name: name.to_string(),
            change,
        };
        self.advance(ep, now, id, Task::Delete(task));
    }

    pub(super) fn advance_delete(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        _id: TaskId,
        t: DeleteTask,
    ) -> Option<Task> {
        if !t.change.is_done() {
            return Some(Task::Delete(t));
        }
        self.busy.remove(&t.name);
        if let Err(err) = self.store.remove(&t.name) {
            return {
                let reply = self.store_failure(&t.name, err);
                self.send_reply(ep, now, &t.to, reply);
                None
            };
        }
        let group = self.entities.remove(&t.name).and_then(|e| e.group);
        self.member_oscore.keep_only(&t.name, &[]);
        let why = format!("entity {} was deleted", t.name);
        self.end_observations(ep, now, &t.name, Code::NOT_FOUND, &why);
        if let Some(g) = group {
            self.pool.release(g);
        }
        let report = t.change.report();
        let left = report.iter().filter(|r| r.result.is_ok()).count();
        self.note(
            LogLevel::Info,
            format!(
                "deleted entity {}; {left} of {} members left its group",
                t.name,
                report.len()
            ),
        );
        let uri = self.entity_uri(t.to.reached, &t.name);
        let reply = if t.accept == Some(ContentFormat::JSON) {
            let doc = json!({
                "entity": uri,
                "group": group.map(|g| g.to_string()),
                "left": left,
                "members": report.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            });
            Reply::with(
                Code::DELETED,
                ContentFormat::JSON,
                serde_json::to_vec(&doc).unwrap_or_default(),
            )
        } else {
            let mut text = format!(
                "deleted {uri}; {left} of {} left {}\n",
                crate::plural::members(report.len()),
                group.map(|g| g.to_string()).unwrap_or_default()
            );
            for line in &report {
                text.push_str(&format!("{line}\n"));
            }
            Reply::with(Code::DELETED, ContentFormat::TEXT_PLAIN, text.into_bytes())
        };
        self.reply_when_durable(ep, now, &t.to, reply);
        None
    }
}
