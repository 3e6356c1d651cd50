//! Observing an entity (RFC 7641): a GET of `/e/<name>` with Observe 0 registers the client
//! with the engine, and the EM observes every member once for all the entity's observers.
//! Each member notification recomputes the entity's answer from the latest value of every
//! member, with the query's own code, and notifies the observers. When the last observer
//! goes, the member observations are cancelled (Observe 1); deleting or changing the entity
//! ends its observations with an error notification (RFC 7641 §3.2, §4.2).

use super::query::{combined_reply, Answers, QueryParams, ReplyTo};
use super::respond::{Reply, Responder};
use super::EntityManager;
use crate::incoming::IncomingRequest;
use crate::member_value::extract;
use crate::operation::Operation;
use crate::query::Overrides;
use crate::reply::{MemberReply, ReplyKind};
use crate::response::MemberResponse;
use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, Endpoint, Instant, Request, RequestId, RequestParams, Response};
use std::collections::BTreeMap;

/// Engine resource ids of entity views start here, clear of the small ids other Apps on
/// the same engine pick for their resources.
const RESOURCE_BASE: u64 = 0x454d_0000_0000_0000;

/// Seconds a client refused for lack of room waits before registering again.
const RETRY_AFTER: u32 = 30;

/// How the reply to a GET of an entity takes part in an observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ObserveAs {
    /// A plain response.
    Plain,
    /// Registers the client as an observer of `resource`, a view of entity `entity`.
    Register {
        /// The entity.
        entity: String,
        /// The engine resource of the client's view.
        resource: u64,
    },
    /// Ends the client's observation of entity `entity`, if any (Observe 1).
    Deregister {
        /// The entity.
        entity: String,
    },
}

/// What observers see of an entity: observers with the same view share one engine resource,
/// so one notification serves them all.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct View {
    accept: ContentFormat,
    op: Operation,
    enr: usize,
    entity_uri: String,
}

/// The EM's observation of one member.
#[derive(Debug, Default)]
struct Watch {
    /// The registration, while the member may notify.
    request: Option<RequestId>,
    /// Whether the member answered the registration (or it failed).
    heard: bool,
    /// Its latest successful answer and when it arrived.
    latest: Option<(MemberResponse, Instant)>,
}

/// An observed entity.
#[derive(Debug)]
struct Observed {
    /// When the member observations started: member times are relative to it.
    started: Instant,
    members: Vec<String>,
    /// One per member once a client is registered; empty before.
    watches: Vec<Watch>,
    views: BTreeMap<View, u64>,
    /// Registrations whose first answer (a query) is still being collected.
    pending: usize,
}

/// The observed entities and the member observations that feed them.
#[derive(Debug, Default)]
pub(crate) struct Observations {
    entities: BTreeMap<String, Observed>,
    /// Member registration requests: entity and member index.
    routes: BTreeMap<RequestId, (String, usize)>,
    next_resource: u64,
}

impl Observations {
    /// Member observations held (or about to be) for all observed entities.
    fn member_observations(&self) -> usize {
        self.entities.values().map(|o| o.members.len()).sum()
    }
}

impl EntityManager {
    /// Entities with observers (or a registration under way).
    pub fn observed_entities(&self) -> usize {
        self.observations.entities.len()
    }

    /// Member observations the EM holds for the observed entities.
    pub fn member_observations(&self) -> usize {
        self.observations.routes.len()
    }

    /// `GET /e/<name>` with Observe 0: the first answer is a query; a success registers
    /// the client. Entities with nested members are answered once, without Observe.
    pub(super) fn observe_entity(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        mut to: Responder,
        req: &IncomingRequest,
        name: &str,
        overrides: Overrides,
    ) {
        let params = QueryParams::from_request(req, overrides.clone());
        let Some(e) = self.entities.get(name) else {
            return self.send_reply(ep, now, &to, super::unknown_entity(name));
        };
        if e.has_nested() {
            // Their members are entities, queried with the nesting checks a query makes.
            return self.start_query(ep, now, ReplyTo::Client(to), name, params);
        }
        let members = e.member_uris();
        let view = View {
            accept: req.accept.unwrap_or(ContentFormat::TEXT_PLAIN),
            op: overrides.eo.unwrap_or(e.profile.default_operation()),
            enr: overrides.enr.map_or(e.profile.enr(), |n| n as usize),
            entity_uri: self.entity_uri(to.reached, name),
        };
        if !self.observations.entities.contains_key(name) {
            if let Some(reply) = self.observation_refused(name, members.len()) {
                return self.send_reply(ep, now, &to, reply);
            }
            let observed = Observed {
                started: now,
                members,
                watches: Vec::new(),
                views: BTreeMap::new(),
                pending: 0,
            };
            self.observations
                .entities
                .insert(name.to_string(), observed);
        }
        let next = RESOURCE_BASE + self.observations.next_resource;
        let Some(observed) = self.observations.entities.get_mut(name) else {
            return;
        };
        let resource = *observed.views.entry(view).or_insert(next);
        if resource == next {
            self.observations.next_resource += 1;
        }
        observed.pending += 1;
        to.observe = ObserveAs::Register {
            entity: name.to_string(),
            resource,
        };
        self.start_query(ep, now, ReplyTo::Client(to), name, params);
    }

    /// Why one more entity with `members` members cannot be observed, if it cannot.
    fn observation_refused(&self, name: &str, members: usize) -> Option<Reply> {
        let limit = self.config.max_member_observations;
        if members > limit {
            return Some(Reply::error(
                Code::BAD_REQUEST,
                format!(
                    "entity {name} has {}; the EM observes {limit} member resources at most",
                    crate::plural::members(members)
                ),
            ));
        }
        let text = if self.observations.entities.len() >= self.config.max_observed_entities {
            format!(
                "the EM observes as many entities as it may ({}); try again in {RETRY_AFTER} s",
                self.config.max_observed_entities
            )
        } else if self.observations.member_observations() + members > limit {
            format!(
                "the EM observes as many member resources as it may ({limit}); try again in \
                 {RETRY_AFTER} s"
            )
        } else {
            return None;
        };
        Some(Reply {
            max_age: Some(RETRY_AFTER),
            ..Reply::error(Code::SERVICE_UNAVAILABLE, text)
        })
    }

    /// The first answer of a registration to `resource` of `entity` was sent: the members
    /// are observed from the first registered client on, and each registration asks again
    /// the members whose observation ended.
    pub(super) fn registration_answered(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        entity: &str,
        resource: u64,
        registered: bool,
    ) {
        let observed = self
            .observations
            .entities
            .get_mut(entity)
            .filter(|o| o.views.values().any(|r| *r == resource));
        let Some(observed) = observed else {
            // The entity was deleted or changed while the answer was collected.
            if registered {
                let text = format!("entity {entity} was deleted or changed; observe it again");
                ep.notify(
                    now,
                    resource,
                    &Response::with_payload(Code::NOT_FOUND, text.as_bytes()),
                );
            }
            return;
        };
        observed.pending -= 1;
        if registered {
            self.watch_members(ep, now, entity);
        }
    }

    /// Registers the EM as an observer of every member of `entity` it does not observe
    /// (yet, or any more: a member that answered without Observe is asked again, which
    /// refreshes its value).
    fn watch_members(&mut self, ep: &mut Endpoint, now: Instant, entity: &str) {
        let (Some(e), Some(o)) = (
            self.entities.get(entity),
            self.observations.entities.get_mut(entity),
        ) else {
            return;
        };
        if o.watches.is_empty() {
            o.started = now;
            o.watches = e.members.iter().map(|_| Watch::default()).collect();
        }
        for (index, (m, w)) in e.members.iter().zip(&mut o.watches).enumerate() {
            if w.request.is_some() {
                continue;
            }
            let path = m.options();
            let mut options: Vec<_> = path.iter().map(|(n, v)| opt(*n, v)).collect();
            options.push(opt(OptionNumber::OBSERVE, &[]));
            let request = Request {
                method: Code::GET,
                options: &options,
                payload: &[],
            };
            let params = RequestParams {
                confirmable: true,
                source: self.sources.source(m.addr, m.secure),
                owner: self.app,
                ..RequestParams::default()
            };
            // A member with a context is observed under it, never in the clear.
            let sent = match self.member_oscore.context_for(ep, &mut *self.store, m.addr) {
                Ok(Some(context)) => {
                    ep.send_protected_request(now, m.addr, &request, params, context)
                }
                Ok(None) => ep.send_request(now, m.addr, &request, params),
                Err(e) => Err(e),
            };
            match sent {
                Ok(id) => {
                    w.request = Some(id);
                    self.observations
                        .routes
                        .insert(id, (entity.to_string(), index));
                }
                // A member the request cannot go to counts as heard, with its last value.
                Err(_) => w.heard = true,
            }
        }
    }

    /// A response to a member registration (its first answer or a notification): true when
    /// `id` is one. An answer without Observe (`last`) ends that member's observation; its
    /// latest value stays in use.
    pub(super) fn member_answered(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        id: RequestId,
        response: Option<MemberResponse>,
        last: bool,
    ) -> bool {
        let Some((entity, index)) = self.observations.routes.get(&id).cloned() else {
            return false;
        };
        if last {
            self.observations.routes.remove(&id);
        }
        let Some(w) = self
            .observations
            .entities
            .get_mut(&entity)
            .and_then(|o| o.watches.get_mut(index))
        else {
            return true;
        };
        w.heard = true;
        if last {
            w.request = None;
        }
        // An error keeps the last value: the observation shows the freshest known state.
        if let Some(r) = response.filter(|r| r.code.is_success()) {
            w.latest = Some((r, now));
        }
        self.notify_entity(ep, now, &entity);
        true
    }

    /// A member registration failed or ended without an answer: true when `id` is one.
    pub(super) fn member_lost(&mut self, ep: &mut Endpoint, now: Instant, id: RequestId) -> bool {
        self.member_answered(ep, now, id, None, true)
    }

    /// Notifies every observer of `entity` of its answer from the members' latest values,
    /// once every member answered its registration.
    fn notify_entity(&mut self, ep: &mut Endpoint, now: Instant, entity: &str) {
        if !self.sweep_entity(ep, now, entity) {
            return;
        }
        let Some(o) = self.observations.entities.get(entity) else {
            return;
        };
        if o.watches.is_empty() || o.watches.iter().any(|w| !w.heard) {
            return;
        }
        let replies: Vec<MemberReply> = o
            .members
            .iter()
            .zip(&o.watches)
            .filter_map(|(member, w)| {
                let (r, at) = w.latest.as_ref()?;
                Some(MemberReply {
                    member: member.clone(),
                    code: r.code,
                    value: extract(r.content_format, &r.payload),
                    after: at.saturating_duration_since(o.started),
                })
            })
            .collect();
        let base_time = self.base_time(o.started, now.saturating_duration_since(o.started));
        let mut sent = Vec::with_capacity(o.views.len());
        for (view, resource) in &o.views {
            let answers = Answers {
                successes: replies.len(),
                silent: replies.len() < o.members.len(),
                replies: replies.clone(),
                not_needed: Vec::new(),
                base_time,
            };
            let reply = combined_reply(
                ep,
                view.entity_uri.clone(),
                ReplyKind::Query(view.op),
                view.accept,
                &o.members,
                view.enr,
                answers,
            );
            sent.push((*resource, reply));
        }
        for (resource, reply) in sent {
            notify(ep, now, resource, &reply);
        }
    }

    /// Observers of entity `name` that went (Observe 1, an RST, the engine dropping them)
    /// leave their view; without views its member observations are cancelled. Run when one
    /// deregisters and before each notification, not after every event: counting a view's
    /// observers scans the engine's observer table. Returns whether `name` is still observed.
    pub(super) fn sweep_entity(&mut self, ep: &mut Endpoint, now: Instant, name: &str) -> bool {
        let Some(o) = self.observations.entities.get_mut(name) else {
            return false;
        };
        if o.pending > 0 {
            return true;
        }
        o.views
            .retain(|_, resource| ep.observer_count(*resource) > 0);
        if !o.views.is_empty() {
            return true;
        }
        self.unwatch(ep, now, name);
        false
    }

    /// Ends the observations of entity `name` (deleted, or changed: `code`) with an error
    /// notification saying why, and cancels its member observations.
    pub(super) fn end_observations(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        name: &str,
        code: Code,
        why: &str,
    ) {
        let Some(o) = self.observations.entities.get(name) else {
            return;
        };
        let resources: Vec<u64> = o.views.values().copied().collect();
        for resource in resources {
            ep.notify(now, resource, &Response::with_payload(code, why.as_bytes()));
        }
        self.unwatch(ep, now, name);
    }

    /// Forgets entity `name`'s observation, cancelling its member observations politely.
    fn unwatch(&mut self, ep: &mut Endpoint, now: Instant, name: &str) {
        let Some(o) = self.observations.entities.remove(name) else {
            return;
        };
        for id in o.watches.iter().filter_map(|w| w.request) {
            self.observations.routes.remove(&id);
            // The deregistration's answer matches no route and is dropped.
            if ep.cancel_observation(now, id).is_err() {
                ep.cancel(now, id);
            }
        }
    }
}

/// Sends `reply` to the observers of `resource`; an error ends their observations.
fn notify(ep: &mut Endpoint, now: Instant, resource: u64, reply: &Reply) {
    let mut cf = [0u8; 4];
    let mut options = Vec::new();
    if let Some(format) = reply.content_format {
        options.push(opt(
            OptionNumber::CONTENT_FORMAT,
            uint::encode(u32::from(format.0), &mut cf),
        ));
    }
    ep.notify(
        now,
        resource,
        &Response {
            code: reply.code,
            options: &options,
            payload: &reply.body,
        },
    );
}
