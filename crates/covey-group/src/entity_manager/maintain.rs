//! Start-up work: creations interrupted by a crash are undone (their members asked to leave,
//! the pending record removed), and the members of every multicast entity are asked to
//! join again, which re-verifies (and repairs) the memberships after a restart.

use super::create::{addresses, feed_membership};
use super::{EntityManager, Input, Task};
use crate::membership::{Action, MembershipChange};
use crate::task_io::TaskIo;
use crate::timers::TaskId;
use covey_proto::{Endpoint, Instant, LogLevel};
use std::net::Ipv6Addr;

/// One start-up check.
#[derive(Debug)]
pub(crate) struct MaintainTask {
    name: String,
    group: Ipv6Addr,
    /// Undoing an interrupted creation (else re-verifying a membership).
    undo: bool,
    change: MembershipChange,
}

impl MaintainTask {
    pub(super) fn feed(&mut self, io: &mut TaskIo<'_>, input: Input) {
        feed_membership(&mut self.change, io, input);
    }
}

impl EntityManager {
    pub(super) fn start_maintenance(&mut self, ep: &mut Endpoint, now: Instant) {
        for e in std::mem::take(&mut self.leftovers) {
            let Some(group) = e.group else {
                let _ = self.store.remove(&e.name);
                self.busy.remove(&e.name);
                self.member_oscore.keep_only(&e.name, &[]);
                continue;
            };
            self.spawn_maintenance(ep, now, e.name.clone(), group, addresses(&e), true);
        }
        let multicast: Vec<_> = self
            .entities
            .values()
            .filter_map(|e| e.group.map(|g| (e.name.clone(), g, addresses(e))))
            .collect();
        for (name, group, members) in multicast {
            self.spawn_maintenance(ep, now, name, group, members, false);
        }
    }

    fn spawn_maintenance(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        name: String,
        group: Ipv6Addr,
        members: Vec<(String, std::net::SocketAddr)>,
        undo: bool,
    ) {
        let action = if undo { Action::Leave } else { Action::Join };
        let mut change = MembershipChange::new(
            action,
            group,
            &self.config.membership_path,
            members,
            self.config.validation_timeout,
        );
        let id = self.new_task();
        self.with_io(ep, now, id, |io, _| change.start(io));
        let task = MaintainTask {
            name,
            group,
            undo,
            change,
        };
        self.advance(ep, now, id, Task::Maintain(task));
    }

    pub(super) fn advance_maintain(
        &mut self,
        _ep: &mut Endpoint,
        _now: Instant,
        _id: TaskId,
        t: MaintainTask,
    ) -> Option<Task> {
        if !t.change.is_done() {
            return Some(Task::Maintain(t));
        }
        let report = t.change.report();
        let failed: Vec<String> = report
            .iter()
            .filter(|r| !r.result.is_ok())
            .map(|r| r.member.clone())
            .collect();
        if t.undo {
            match self.store.remove(&t.name) {
                Ok(()) => {
                    self.pool.release(t.group);
                    self.busy.remove(&t.name);
                    self.member_oscore.keep_only(&t.name, &[]);
                    self.note(
                        LogLevel::Warn,
                        format!(
                            "undid the interrupted creation of {}: {} of {} left {}",
                            t.name,
                            report.len() - failed.len(),
                            crate::plural::members(report.len()),
                            t.group
                        ),
                    );
                }
                Err(e) => self.note(
                    LogLevel::Error,
                    format!("could not undo the creation of {}: {e}", t.name),
                ),
            }
        } else {
            if !failed.is_empty() {
                self.note(
                    LogLevel::Warn,
                    format!(
                        "entity {}: {} did not re-join {}: {}",
                        t.name,
                        crate::plural::members(failed.len()),
                        t.group,
                        failed.join(" ")
                    ),
                );
            }
            if let Some(e) = self.entities.get_mut(&t.name) {
                e.unjoined = failed;
            }
        }
        None
    }
}
