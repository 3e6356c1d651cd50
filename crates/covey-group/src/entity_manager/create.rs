//! `POST /e`: parse and check the profile, validate the members over the network, and for
//! multicast entities assign a group address and have every member join it — all or
//! nothing. A creation is stored in one transaction (multicast: pending, then active).

use super::respond::{Reply, Responder};
use super::{EntityManager, Input, ReachedAt, Task};
use crate::entity::Entity;
use crate::error_report::{Problem, Reason};
use crate::incoming::IncomingRequest;
use crate::member_oscore::Claimed;
use crate::membership::{Action, MemberReport, MembershipChange};
use crate::probe::{LocalEntities, Probe, ProbeSpec};
use crate::profile::{parse_entity, Ect, PayloadFormat};
use crate::store::{RecordState, StoreError};
use crate::task_io::TaskIo;
use crate::timers::TaskId;
use crate::validation::{check_profile, numeric_operation, own_uris, ValidationError};
use covey_core::{Code, ContentFormat};
use covey_proto::{Endpoint, Instant, LogLevel};
use serde_json::json;

/// A creation in progress.
#[derive(Debug)]
pub(crate) struct CreateTask {
    to: Responder,
    accept: Option<ContentFormat>,
    entity: Entity,
    /// The member contexts this creation took on.
    claimed: Claimed,
    stage: CreateStage,
}

#[derive(Debug)]
enum CreateStage {
    /// Asking the members.
    Probe(Probe),
    /// Waiting for the pending record (name and group reserved) to be durable before any
    /// member joins; `None` while it is not.
    Reserve(Option<Result<(), StoreError>>),
    /// Members joining the group.
    Join(MembershipChange),
    /// Members that joined leaving again, after `joins` failed.
    Rollback {
        change: MembershipChange,
        joins: Vec<MemberReport>,
    },
    Done,
}

/// Feeds an input to a membership change.
pub(super) fn feed_membership(c: &mut MembershipChange, io: &mut TaskIo<'_>, input: Input) {
    match input {
        Input::Response(id, r) => c.on_response(io, id, r),
        Input::Failed(id, f) => c.on_failed(io, id, f),
        Input::Timer(tag) => c.on_timer(io, tag),
        Input::Finished(_) | Input::Local(..) | Input::Written(_) => {}
    }
}

/// Feeds an input to a probe.
pub(super) fn feed_probe(
    p: &mut Probe,
    io: &mut TaskIo<'_>,
    local: &LocalEntities<'_>,
    input: Input,
) {
    match input {
        Input::Response(id, r) => p.on_response(io, local, id, r),
        Input::Failed(id, f) => p.on_failed(io, id, f),
        Input::Timer(tag) => p.on_timer(io, tag),
        Input::Finished(_) | Input::Local(..) | Input::Written(_) => {}
    }
}

impl CreateTask {
    pub(super) fn feed(&mut self, io: &mut TaskIo<'_>, local: &LocalEntities<'_>, input: Input) {
        match &mut self.stage {
            CreateStage::Probe(p) => feed_probe(p, io, local, input),
            CreateStage::Join(c) | CreateStage::Rollback { change: c, .. } => {
                feed_membership(c, io, input)
            }
            CreateStage::Reserve(written) => {
                if let Input::Written(w) = input {
                    *written = Some(w);
                }
            }
            CreateStage::Done => {}
        }
    }

    fn waiting(&self) -> bool {
        match &self.stage {
            CreateStage::Probe(p) => !p.is_done(),
            CreateStage::Join(c) | CreateStage::Rollback { change: c, .. } => !c.is_done(),
            CreateStage::Reserve(written) => written.is_none(),
            CreateStage::Done => false,
        }
    }
}

/// The reply to a creation whose name is taken: 4.12 when the client asked with
/// If-None-Match (RFC 7252 §5.10.8.2), 4.00 otherwise.
pub(super) fn duplicate(name: &str, if_none_match: bool) -> Reply {
    if if_none_match {
        Reply::refused(
            Code::PRECONDITION_FAILED,
            format!("entity {name} already exists (If-None-Match)"),
            Problem::field("name", Reason::PreconditionFailed),
        )
    } else {
        Reply::refused(
            Code::BAD_REQUEST,
            format!("an entity named {name} already exists"),
            Problem::field("name", Reason::Exists),
        )
    }
}

/// The reply to a creation refused by a validation rule.
fn not_created(name: &str, e: &ValidationError) -> Reply {
    Reply::refused(
        Code::BAD_REQUEST,
        format!("entity {name} not created: {e}"),
        e.problem(),
    )
}

/// Validation problems as one diagnostic line.
pub(super) fn joined(problems: &[ValidationError]) -> String {
    let texts: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    texts.join("; ")
}

/// Member (URI, address) pairs of an entity.
pub(super) fn addresses(e: &Entity) -> Vec<(String, std::net::SocketAddr)> {
    e.members.iter().map(|m| (m.uri.clone(), m.addr)).collect()
}

impl EntityManager {
    /// `POST /e`.
    pub(super) fn create(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: Responder,
        req: &IncomingRequest,
    ) {
        let Some(format) = PayloadFormat::of(req.content_format, &req.payload) else {
            let reply = Reply::error(
                Code::UNSUPPORTED_CONTENT_FORMAT,
                "an entity is created from application/json (50) or application/cbor (60)".into(),
            );
            return self.send_reply(ep, now, &to, reply);
        };
        let spec = match parse_entity(format, &req.payload, self.config.max_members) {
            Ok(s) => s,
            Err(e) => {
                let reply = Reply::refused(Code::BAD_REQUEST, e.to_string(), e.problem());
                return self.send_reply(ep, now, &to, reply);
            }
        };
        let name = spec.name.clone();
        if self.entities.contains_key(&name) || self.busy.contains(&name) {
            return self.send_reply(ep, now, &to, duplicate(&name, req.if_none_match));
        }
        if !req.if_match.is_empty() {
            // RFC 7252 §5.10.8.1: If-Match needs a current representation; there is none.
            let reply = Reply::error(
                Code::PRECONDITION_FAILED,
                format!("entity {name} does not exist (If-Match)"),
            );
            return self.send_reply(ep, now, &to, reply);
        }
        if self.entities.len() + self.busy.len() >= self.config.max_entities {
            let reply = Reply::error(
                Code::SERVICE_UNAVAILABLE,
                format!(
                    "this EM holds its maximum of {} entities",
                    self.config.max_entities
                ),
            );
            return self.send_reply(ep, now, &to, reply);
        }
        let own = own_uris(&name, &self.config.authorities);
        let members = match check_profile(&name, &spec.profile, &own) {
            Ok(m) => m,
            Err(e) => return self.send_reply(ep, now, &to, not_created(&name, &e)),
        };
        let multicast = spec.profile.ect == Ect::Multicast;
        if let Err(e) = self.sources.check(&members, multicast) {
            return self.send_reply(ep, now, &to, not_created(&name, &e));
        }
        let entity = Entity::new(
            name.clone(),
            spec.profile,
            members,
            self.config.initial_response_size,
        );
        let given = !entity.profile.oscore.is_empty();
        let what = format!("entity {name} not created");
        let Some(claimed) = self.claim_contexts(ep, now, &to, (&entity, given), &what) else {
            return;
        };
        let mut probe = Probe::new(ProbeSpec {
            name: name.clone(),
            members: entity.members.clone(),
            own,
            depth_limit: self.config.depth_limit,
            numbers_for: numeric_operation(&entity.profile),
            timeout: self.config.validation_timeout,
        });
        self.busy.insert(name);
        let id = self.new_task();
        self.with_io(ep, now, id, |io, local| probe.start(io, local));
        let task = CreateTask {
            to,
            accept: req.accept,
            entity,
            claimed,
            stage: CreateStage::Probe(probe),
        };
        self.advance(ep, now, id, Task::Create(task));
    }

    pub(super) fn advance_create(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        id: TaskId,
        mut t: CreateTask,
    ) -> Option<Task> {
        while !t.waiting() {
            match std::mem::replace(&mut t.stage, CreateStage::Done) {
                CreateStage::Probe(p) => {
                    let outcome = p.outcome();
                    let name = t.entity.name.clone();
                    if let Some(first) = outcome.problems.first() {
                        self.abandon(&name, &mut t.claimed);
                        let reply = Reply::refused(
                            Code::BAD_REQUEST,
                            format!("entity {name} not created: {}", joined(&outcome.problems)),
                            first.problem(),
                        );
                        self.send_reply(ep, now, &t.to, reply);
                        return None;
                    }
                    t.entity.nested = outcome.nested;
                    for size in outcome.sizes.into_iter().filter(|s| *s > 0) {
                        t.entity.response_size.sample(size);
                    }
                    if t.entity.profile.ect == Ect::Unicast {
                        self.commit_creation(ep, now, t, RecordState::Active, Vec::new());
                        return None;
                    }
                    let Some(group) = self.pool.allocate() else {
                        self.abandon(&name, &mut t.claimed);
                        let reply = Reply::error(
                            Code::SERVICE_UNAVAILABLE,
                            format!(
                                "entity {name} not created: every group address of {} is in use",
                                self.pool.range()
                            ),
                        );
                        self.send_reply(ep, now, &t.to, reply);
                        return None;
                    };
                    t.entity.group = Some(group);
                    // Reserve name and address before any member joins.
                    let record = t.entity.record(RecordState::Pending);
                    if let Err(e) = self.store.insert(&record, Some(self.pool.cursor())) {
                        self.pool.release(group);
                        self.abandon(&name, &mut t.claimed);
                        let reply = self.store_failure(&name, e);
                        self.send_reply(ep, now, &t.to, reply);
                        return None;
                    }
                    if self.all_durable() {
                        t.stage = CreateStage::Reserve(Some(Ok(())));
                    } else {
                        t.stage = CreateStage::Reserve(None);
                        self.resume_when_durable(now, id);
                    }
                }
                CreateStage::Reserve(None) => {
                    t.stage = CreateStage::Reserve(None);
                    break;
                }
                CreateStage::Reserve(Some(Err(e))) => {
                    let name = t.entity.name.clone();
                    if let Some(g) = t.entity.group {
                        self.pool.release(g);
                    }
                    self.abandon(&name, &mut t.claimed);
                    let reply = self.store_failure(&name, e);
                    self.send_reply(ep, now, &t.to, reply);
                    return None;
                }
                CreateStage::Reserve(Some(Ok(()))) => {
                    let group = t.entity.group.unwrap_or(std::net::Ipv6Addr::UNSPECIFIED);
                    let mut change = MembershipChange::new(
                        Action::Join,
                        group,
                        &self.config.membership_path,
                        addresses(&t.entity),
                        self.config.validation_timeout,
                    );
                    self.with_io(ep, now, id, |io, _| change.start(io));
                    t.stage = CreateStage::Join(change);
                }
                CreateStage::Join(change) => {
                    let joins = change.report();
                    if change.all_ok() {
                        self.commit_creation(ep, now, t, RecordState::Active, joins);
                        return None;
                    }
                    let group = t.entity.group.unwrap_or(std::net::Ipv6Addr::UNSPECIFIED);
                    let mut leave = MembershipChange::new(
                        Action::Leave,
                        group,
                        &self.config.membership_path,
                        change.succeeded(),
                        self.config.validation_timeout,
                    );
                    self.with_io(ep, now, id, |io, _| leave.start(io));
                    t.stage = CreateStage::Rollback {
                        change: leave,
                        joins,
                    };
                }
                CreateStage::Rollback { change, joins } => {
                    let name = t.entity.name.clone();
                    if let Err(e) = self.store.remove(&name) {
                        self.note(LogLevel::Error, format!("rollback of {name}: {e}"));
                    }
                    if let Some(g) = t.entity.group {
                        self.pool.release(g);
                    }
                    self.abandon(&name, &mut t.claimed);
                    let mut text = format!(
                        "entity {name} not created: not every member joined {}\n",
                        t.entity.group.map(|g| g.to_string()).unwrap_or_default()
                    );
                    for line in joins.iter().filter(|r| !r.result.is_ok()) {
                        text.push_str(&format!("{line}\n"));
                    }
                    for line in change.report() {
                        text.push_str(&format!("rolled back: {line}\n"));
                    }
                    self.note(
                        LogLevel::Warn,
                        text.lines().next().unwrap_or_default().to_string(),
                    );
                    let problem = Problem::field("er", Reason::MemberRefused);
                    let reply = Reply::refused(Code::BAD_GATEWAY, text, problem);
                    self.send_reply(ep, now, &t.to, reply);
                    return None;
                }
                CreateStage::Done => return None,
            }
        }
        Some(Task::Create(t))
    }

    /// Stores a created entity (pending multicast ones become active) and answers 2.01.
    fn commit_creation(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        mut t: CreateTask,
        state: RecordState,
        joins: Vec<MemberReport>,
    ) {
        let name = t.entity.name.clone();
        let record = t.entity.record(state);
        let stored = if t.entity.group.is_some() {
            self.store.update(&record)
        } else {
            self.store.insert(&record, None)
        };
        self.busy.remove(&name);
        if let Err(e) = stored {
            self.member_oscore
                .give_back(&name, std::mem::take(&mut t.claimed));
            // A multicast entity whose members joined stays pending in the store; the next
            // start asks them to leave.
            let reply = self.store_failure(&name, e);
            return self.send_reply(ep, now, &t.to, reply);
        }
        let reply = self.created_reply(&t.entity, t.accept, t.to.reached, &joins);
        self.reply_when_durable(ep, now, &t.to, reply);
        self.note(
            LogLevel::Info,
            format!(
                "created entity {name} ({} members, {})",
                t.entity.members.len(),
                t.entity.profile.ect.name()
            ),
        );
        self.settle_contexts(&t.entity);
        self.entities.insert(name, t.entity);
    }

    fn created_reply(
        &self,
        e: &Entity,
        accept: Option<ContentFormat>,
        reached: Option<ReachedAt>,
        joins: &[MemberReport],
    ) -> Reply {
        let uri = self.entity_uri(reached, &e.name);
        let mcast = e.mcast_uri();
        let mut reply = if accept == Some(ContentFormat::JSON) {
            let doc = json!({
                "entity": uri,
                "name": e.name,
                "ect": e.profile.ect.name(),
                "members": e.members.len(),
                "mcastURI": mcast,
                "joined": joins.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            });
            Reply::with(
                Code::CREATED,
                ContentFormat::JSON,
                serde_json::to_vec(&doc).unwrap_or_default(),
            )
        } else {
            let mut text = format!(
                "created {uri} ({}, {})\n",
                crate::plural::members(e.members.len()),
                e.profile.ect.name()
            );
            if let Some(m) = &mcast {
                text.push_str(&format!("mcastURI: {m}\n"));
            }
            for line in joins {
                text.push_str(&format!("{line}\n"));
            }
            Reply::with(Code::CREATED, ContentFormat::TEXT_PLAIN, text.into_bytes())
        };
        reply.location = Some(format!("e/{}", e.name));
        reply
    }
}

impl EntityManager {
    /// The reply when the store refuses a change; a failing store is logged too.
    pub(super) fn store_failure(&mut self, name: &str, e: StoreError) -> Reply {
        match e {
            StoreError::Duplicate(_) => duplicate(name, false),
            other => {
                let text = format!("entity {name} not saved: {other}");
                self.note(LogLevel::Error, text.clone());
                Reply::error(Code::INTERNAL_SERVER_ERROR, text)
            }
        }
    }
}
