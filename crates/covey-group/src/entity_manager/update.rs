//! `PUT /e/<name>/profile`: change any field but `ect`. The new members are validated like
//! at creation; for a multicast entity, new members join first (all or nothing), then the
//! change is stored, then removed members leave.

use super::create::{feed_membership, feed_probe, joined};
use super::respond::{Reply, Responder};
use super::{unknown_entity, EntityManager, Input, Task};
use crate::entity::Entity;
use crate::error_report::{Problem, Reason};
use crate::incoming::IncomingRequest;
use crate::member_oscore::Claimed;
use crate::membership::{Action, MemberReport, MembershipChange};
use crate::probe::{LocalEntities, Probe, ProbeSpec};
use crate::profile::{parse_change, Ect, PayloadFormat};
use crate::store::RecordState;
use crate::task_io::TaskIo;
use crate::timers::TaskId;
use crate::validation::{check_profile, numeric_operation, own_uris};
use covey_core::{Code, ContentFormat};
use covey_proto::{Endpoint, Instant, LogLevel};
use std::net::{Ipv6Addr, SocketAddr};

/// A profile change in progress.
#[derive(Debug)]
pub(crate) struct UpdateTask {
    to: Responder,
    accept: Option<ContentFormat>,
    new: Entity,
    added: Vec<(String, SocketAddr)>,
    removed: Vec<(String, SocketAddr)>,
    report: Vec<MemberReport>,
    /// The member contexts this change took on.
    claimed: Claimed,
    stage: UpdateStage,
}

#[derive(Debug)]
enum UpdateStage {
    Probe(Probe),
    Join(MembershipChange),
    Rollback(MembershipChange),
    Leave(MembershipChange),
    Done,
}

impl UpdateTask {
    pub(super) fn feed(&mut self, io: &mut TaskIo<'_>, local: &LocalEntities<'_>, input: Input) {
        match &mut self.stage {
            UpdateStage::Probe(p) => feed_probe(p, io, local, input),
            UpdateStage::Join(c) | UpdateStage::Rollback(c) | UpdateStage::Leave(c) => {
                feed_membership(c, io, input)
            }
            UpdateStage::Done => {}
        }
    }

    fn waiting(&self) -> bool {
        match &self.stage {
            UpdateStage::Probe(p) => !p.is_done(),
            UpdateStage::Join(c) | UpdateStage::Rollback(c) | UpdateStage::Leave(c) => !c.is_done(),
            UpdateStage::Done => false,
        }
    }
}

impl EntityManager {
    /// `PUT /e/<name>/profile`.
    pub(super) fn update(
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
        let Some(old) = self.entities.get(name) else {
            return self.send_reply(ep, now, &to, unknown_entity(name));
        };
        let Some(format) = PayloadFormat::of(req.content_format, &req.payload) else {
            let reply = Reply::error(
                Code::UNSUPPORTED_CONTENT_FORMAT,
                "a profile is application/json (50) or application/cbor (60)".into(),
            );
            return self.send_reply(ep, now, &to, reply);
        };
        let bad = |e: &dyn std::fmt::Display, problem: Problem| {
            Reply::refused(
                Code::BAD_REQUEST,
                format!("profile of {name} not changed: {e}"),
                problem,
            )
        };
        let mut given = false;
        let profile =
            match parse_change(format, &req.payload, self.config.max_members).and_then(|c| {
                given = c.oscore.is_some();
                c.apply(name, &old.profile, old.mcast_uri().as_deref())
            }) {
                Ok(p) => p,
                Err(e) => return self.send_reply(ep, now, &to, bad(&e, e.problem())),
            };
        let own = own_uris(name, &self.config.authorities);
        let members = match check_profile(name, &profile, &own) {
            Ok(m) => m,
            Err(e) => return self.send_reply(ep, now, &to, bad(&e, e.problem())),
        };
        let multicast = profile.ect == Ect::Multicast;
        if let Err(e) = self.sources.check(&members, multicast) {
            return self.send_reply(ep, now, &to, bad(&e, e.problem()));
        }
        let mut new = Entity::new(
            name.to_string(),
            profile,
            members,
            self.config.initial_response_size,
        );
        new.group = old.group;
        new.response_size = old.response_size;
        let added = new
            .members
            .iter()
            .filter(|m| !old.members.iter().any(|o| o.same_resource(m)))
            .map(|m| (m.uri.clone(), m.addr))
            .collect();
        let removed = old
            .members
            .iter()
            .filter(|o| !new.members.iter().any(|m| m.same_resource(o)))
            .map(|m| (m.uri.clone(), m.addr))
            .collect();
        let what = format!("profile of {name} not changed");
        let Some(claimed) = self.claim_contexts(ep, now, &to, (&new, given), &what) else {
            return;
        };
        let mut probe = Probe::new(ProbeSpec {
            name: name.to_string(),
            members: new.members.clone(),
            own,
            depth_limit: self.config.depth_limit,
            numbers_for: numeric_operation(&new.profile),
            timeout: self.config.validation_timeout,
        });
        self.busy.insert(name.to_string());
        let id = self.new_task();
        self.with_io(ep, now, id, |io, local| probe.start(io, local));
        let task = UpdateTask {
            to,
            accept: req.accept,
            new,
            added,
            removed,
            report: Vec::new(),
            claimed,
            stage: UpdateStage::Probe(probe),
        };
        self.advance(ep, now, id, Task::Update(task));
    }

    fn membership(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        id: TaskId,
        action: Action,
        group: Ipv6Addr,
        members: Vec<(String, SocketAddr)>,
    ) -> MembershipChange {
        let mut change = MembershipChange::new(
            action,
            group,
            &self.config.membership_path,
            members,
            self.config.validation_timeout,
        );
        self.with_io(ep, now, id, |io, _| change.start(io));
        change
    }

    pub(super) fn advance_update(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        id: TaskId,
        mut t: UpdateTask,
    ) -> Option<Task> {
        let name = t.new.name.clone();
        while !t.waiting() {
            match std::mem::replace(&mut t.stage, UpdateStage::Done) {
                UpdateStage::Probe(p) => {
                    let outcome = p.outcome();
                    if let Some(first) = outcome.problems.first() {
                        self.abandon(&name, &mut t.claimed);
                        let reply = Reply::refused(
                            Code::BAD_REQUEST,
                            format!(
                                "profile of {name} not changed: {}",
                                joined(&outcome.problems)
                            ),
                            first.problem(),
                        );
                        self.send_reply(ep, now, &t.to, reply);
                        return None;
                    }
                    t.new.nested = outcome.nested;
                    match t.new.group {
                        Some(g) if !t.added.is_empty() => {
                            let added = t.added.clone();
                            t.stage = UpdateStage::Join(self.membership(
                                ep,
                                now,
                                id,
                                Action::Join,
                                g,
                                added,
                            ));
                        }
                        _ => {
                            if !self.commit_update(ep, now, id, &mut t) {
                                return None;
                            }
                        }
                    }
                }
                UpdateStage::Join(change) => {
                    t.report.extend(change.report());
                    if change.all_ok() {
                        if !self.commit_update(ep, now, id, &mut t) {
                            return None;
                        }
                    } else {
                        let g = t.new.group.unwrap_or(Ipv6Addr::UNSPECIFIED);
                        let joined = change.succeeded();
                        t.stage = UpdateStage::Rollback(self.membership(
                            ep,
                            now,
                            id,
                            Action::Leave,
                            g,
                            joined,
                        ));
                    }
                }
                UpdateStage::Rollback(change) => {
                    self.abandon(&name, &mut t.claimed);
                    let mut text =
                        format!("profile of {name} not changed: not every new member joined\n");
                    for line in t.report.iter().filter(|r| !r.result.is_ok()) {
                        text.push_str(&format!("{line}\n"));
                    }
                    for line in change.report() {
                        text.push_str(&format!("rolled back: {line}\n"));
                    }
                    let problem = Problem::field("er", Reason::MemberRefused);
                    let reply = Reply::refused(Code::BAD_GATEWAY, text, problem);
                    self.send_reply(ep, now, &t.to, reply);
                    return None;
                }
                UpdateStage::Leave(change) => {
                    t.report.extend(change.report());
                    self.busy.remove(&name);
                    self.reply_updated(ep, now, &t);
                    return None;
                }
                UpdateStage::Done => return None,
            }
        }
        Some(Task::Update(t))
    }

    /// Stores the new profile; then removed members leave, or the client gets its answer.
    /// False when the task is over.
    fn commit_update(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        id: TaskId,
        t: &mut UpdateTask,
    ) -> bool {
        let name = t.new.name.clone();
        if let Err(e) = self.store.update(&t.new.record(RecordState::Active)) {
            self.abandon(&name, &mut t.claimed);
            let reply = self.store_failure(&name, e);
            self.send_reply(ep, now, &t.to, reply);
            return false;
        }
        self.settle_contexts(&t.new);
        self.entities.insert(name.clone(), t.new.clone());
        // Its members or how they are combined may have changed: observers register again.
        let why = format!("entity {name} changed; observe it again");
        self.end_observations(ep, now, &name, Code::SERVICE_UNAVAILABLE, &why);
        self.note(
            LogLevel::Info,
            format!("changed the profile of entity {name}"),
        );
        match t.new.group {
            Some(g) if !t.removed.is_empty() => {
                let removed = t.removed.clone();
                t.stage =
                    UpdateStage::Leave(self.membership(ep, now, id, Action::Leave, g, removed));
                true
            }
            _ => {
                self.busy.remove(&name);
                self.reply_updated(ep, now, t);
                false
            }
        }
    }

    fn reply_updated(&mut self, ep: &mut Endpoint, now: Instant, t: &UpdateTask) {
        let e = &t.new;
        let reply = if t.accept == Some(ContentFormat::JSON) {
            let doc = e.profile.document(&e.name, e.mcast_uri().as_deref());
            Reply::with(
                Code::CHANGED,
                ContentFormat::JSON,
                serde_json::to_vec(&doc).unwrap_or_default(),
            )
        } else {
            let mut text = format!(
                "changed the profile of {}\n",
                self.entity_uri(t.to.reached, &e.name)
            );
            for line in &t.report {
                text.push_str(&format!("{line}\n"));
            }
            Reply::with(Code::CHANGED, ContentFormat::TEXT_PLAIN, text.into_bytes())
        };
        self.reply_when_durable(ep, now, &t.to, reply);
    }
}
