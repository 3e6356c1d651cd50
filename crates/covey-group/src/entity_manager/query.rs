//! Using an entity: `GET /e/<name>` (with use-time overrides) and `PUT/POST/DELETE
//! /e/<name>?fanout`, fanned out to the members and answered with one combined reply.

use super::respond::{error_payload_limit, Reply, Responder};
use super::{EntityManager, Input, Task};
use crate::admission::Refusal;
use crate::delay::auto_delay;
use crate::fanout::{Fanout, FanoutSpec, Mode, Outcome, Target};
use crate::incoming::IncomingRequest;
use crate::member_value::extract;
use crate::probe::{LocalEntities, Lookup};
use crate::profile::{Delay, Ect, Emt};
use crate::query::Overrides;
use crate::reply::{combine, MemberReply, ReplyKind, REPLY_FORMATS};
use crate::response::MemberResponse;
use crate::task_io::TaskIo;
use crate::timers::TaskId;
use crate::visited::{entity_key, VISITED};
use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_proto::{Duration, Endpoint, Instant};
use std::net::{IpAddr, SocketAddr};

/// Who gets a query's combined reply.
#[derive(Debug, Clone)]
pub(crate) enum ReplyTo {
    /// A client.
    Client(Responder),
    /// A query of this EM whose member `index` is this (nested) entity.
    Parent {
        /// The parent query's task.
        task: TaskId,
        /// The member's index in the parent.
        index: usize,
    },
}

/// What a query asks, beyond the entity.
#[derive(Debug, Clone)]
pub(crate) struct QueryParams {
    /// GET, or the method of a fan-out.
    pub method: Code,
    /// The payload of a fan-out.
    pub payload: Vec<u8>,
    /// Its Content-Format.
    pub content_format: Option<ContentFormat>,
    /// The reply's format.
    pub accept: Option<ContentFormat>,
    /// The Hop-Limit the query came with.
    pub hop_limit: Option<u8>,
    /// Use-time overrides.
    pub overrides: Overrides,
    /// The entities the query passed through before this one.
    pub visited: Vec<[u8; 4]>,
    /// The client whose query this is (a nested query's too), for its share.
    pub client: Option<IpAddr>,
}

impl QueryParams {
    /// The parameters of a client's request (its client is set when the query starts).
    pub fn from_request(req: &IncomingRequest, overrides: Overrides) -> QueryParams {
        QueryParams {
            method: req.method,
            payload: req.payload.clone(),
            content_format: req.content_format,
            accept: req.accept,
            hop_limit: req.hop_limit,
            overrides,
            visited: req.visited.clone(),
            client: None,
        }
    }
}

/// A query or fan-out in progress.
#[derive(Debug)]
pub(crate) struct QueryTask {
    reply_to: ReplyTo,
    name: String,
    entity_uri: String,
    kind: ReplyKind,
    accept: ContentFormat,
    members: Vec<String>,
    /// Members that are this EM's own entities (by member index): name and the use-time
    /// overrides of the member's URI.
    local_names: Vec<Option<(String, Overrides)>>,
    params: QueryParams,
    /// The entities passed through, this one included.
    visited: Vec<[u8; 4]>,
    hop_out: u8,
    enr: usize,
    /// Member requests in flight reserved for it (given back when it ends).
    reserved: usize,
    /// Whether it is counted among its client's queries in progress (a client's own query,
    /// not a nested one).
    counted: bool,
    fanout: Fanout,
}

impl QueryTask {
    pub(super) fn feed(&mut self, io: &mut TaskIo<'_>, input: Input) {
        match input {
            Input::Response(id, r) => self.fanout.on_response(io, id, r),
            Input::Failed(id, f) => self.fanout.on_failed(io, id, f),
            Input::Finished(id) => self.fanout.on_finished(id),
            Input::Timer(tag) => self.fanout.on_timer(io, tag),
            Input::Local(index, r) => self.fanout.on_local_response(io, index, r),
            Input::Written(_) => {}
        }
    }

    /// Local members to ask now: (index, entity name, parameters).
    pub(super) fn local_requests(&mut self) -> Vec<(usize, String, QueryParams)> {
        let fanout = self.params.overrides.fanout;
        self.fanout
            .take_local_requests()
            .into_iter()
            .filter_map(|i| {
                let (name, overrides) = self.local_names.get(i)?.clone()?;
                let params = QueryParams {
                    method: self.params.method,
                    payload: self.params.payload.clone(),
                    content_format: self.params.content_format,
                    accept: Some(ContentFormat::SENML_CBOR),
                    hop_limit: Some(self.hop_out),
                    overrides: Overrides {
                        fanout,
                        ..overrides
                    },
                    visited: self.visited.clone(),
                    client: self.params.client,
                };
                Some((i, name, params))
            })
            .collect()
    }
}

/// The answer to a query that was not admitted: 4.00 over the per-query budget (asking
/// again cannot help), else 5.03 with Max-Age.
fn refusal_reply(name: &str, refusal: Refusal) -> Reply {
    let (retry_after, text) = match refusal {
        Refusal::OverBudget { needed, budget } => {
            return Reply::error(
                Code::BAD_REQUEST,
                format!(
                    "entity {name} needs {needed} member requests or more; \
                     one query may cause {budget} at most"
                ),
            )
        }
        Refusal::ClientRate { retry_after } => (
            retry_after,
            format!("too many member requests from your address; try again in {retry_after} s"),
        ),
        Refusal::Busy { retry_after } => (
            retry_after,
            format!(
                "entity {name} has as many member requests in flight as it may; \
                 try again in {retry_after} s"
            ),
        ),
        Refusal::ClientBusy { retry_after } => (
            retry_after,
            format!(
                "your address (or its network) has as many queries and member requests in \
                 flight as it may; try again in {retry_after} s"
            ),
        ),
    };
    Reply {
        max_age: Some(retry_after),
        ..Reply::error(Code::SERVICE_UNAVAILABLE, text)
    }
}

fn uint_option(number: OptionNumber, value: u32) -> (OptionNumber, Vec<u8>) {
    let mut buf = [0u8; 4];
    (number, uint::encode(value, &mut buf).to_vec())
}

impl EntityManager {
    /// Starts a query (GET) or fan-out (`?fanout`) of entity `name`.
    pub(super) fn start_query(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: ReplyTo,
        name: &str,
        mut params: QueryParams,
    ) {
        let Some(e) = self.entities.get(name) else {
            return self.finish_reply(ep, now, to, super::unknown_entity(name));
        };
        let overrides = params.overrides.clone();
        let g = e.members.len();
        let kind = if overrides.fanout {
            ReplyKind::Fanout(params.method)
        } else {
            let op = overrides.eo.unwrap_or(e.profile.default_operation());
            if !e.profile.operations().contains(&op) {
                let offered: Vec<&str> = e.profile.operations().iter().map(|o| o.name()).collect();
                let reply = Reply::error(
                    Code::BAD_REQUEST,
                    format!("eo={op}: entity {name} offers {} only", offered.join(", ")),
                );
                return self.finish_reply(ep, now, to, reply);
            }
            ReplyKind::Query(op)
        };
        let accept = params.accept.unwrap_or(ContentFormat::TEXT_PLAIN);
        if !REPLY_FORMATS.contains(&accept) {
            let reply = Reply::error(
                Code::NOT_ACCEPTABLE,
                format!("cannot answer in {accept}; use text/plain (0), application/json (50), application/cbor (60), application/senml+json (110) or application/senml+cbor (112)"),
            );
            return self.finish_reply(ep, now, to, reply);
        }
        let enr = match kind {
            ReplyKind::Fanout(_) => g,
            ReplyKind::Query(_) => overrides.enr.map_or(e.profile.enr(), |n| n as usize),
        };
        if enr > g {
            let reply = Reply::error(
                Code::BAD_REQUEST,
                format!(
                    "enr={enr}: entity {name} has only {}",
                    crate::plural::members(g)
                ),
            );
            return self.finish_reply(ep, now, to, reply);
        }
        let emt = overrides.emt.unwrap_or(e.profile.emt());
        if e.profile.ect == Ect::Multicast && emt == Emt::Con {
            let reply = Reply::error(
                Code::BAD_REQUEST,
                format!("emt=con: entity {name} is multicast, and multicast requests are NON"),
            );
            return self.finish_reply(ep, now, to, reply);
        }
        let delay = match overrides.delay.unwrap_or(e.profile.delay) {
            Delay::Millis(ms) => Duration::from_millis(ms),
            Delay::Auto => auto_delay(g, e.response_size.value(), self.config.target_rate),
        };
        let hop_out = params
            .hop_limit
            .unwrap_or(self.config.depth_limit)
            .saturating_sub(1);
        if e.has_nested() && hop_out == 0 {
            let reply = Reply::error(
                Code::HOP_LIMIT_REACHED,
                format!(
                    "entity {name} is nested deeper than {} levels (Hop-Limit exhausted)",
                    self.config.depth_limit
                ),
            );
            return self.finish_reply(ep, now, to, reply);
        }
        let mut counted = false;
        if let ReplyTo::Client(r) = &to {
            // A client's query pays for every member request it causes, nesting included.
            let hops = params.hop_limit.unwrap_or(self.config.depth_limit);
            let cost = self.member_requests(name, hops, self.config.query_budget);
            params.client = ep.request(r.id).map(|q| q.source.ip());
            if let Some(client) = params.client {
                // Each query the engine takes in holds one of its incoming requests.
                let capacity = ep.config().max_incoming;
                let admitted = self
                    .admission
                    .admit_query(now, client, cost)
                    .and_then(|()| self.admission.start_query(client, capacity));
                if let Err(refusal) = admitted {
                    return self.finish_reply(ep, now, to, refusal_reply(name, refusal));
                }
                counted = true;
            }
        }
        let mut visited = params.visited.clone();
        visited.extend(self.config.authorities.iter().map(|a| entity_key(*a, name)));
        let again = e.members.iter().zip(&e.nested).find(|(m, nested)| {
            let key = m.entity_name().map(|n| entity_key(m.addr, n));
            **nested && key.is_some_and(|k| visited.contains(&k))
        });
        if let Some((m, _)) = again {
            let reply = Reply::error(
                Code::HOP_LIMIT_REACHED,
                format!("cycle: entity {name} reaches {} again", m.uri),
            );
            self.end_counted(counted, params.client);
            return self.finish_reply(ep, now, to, reply);
        }
        let local = LocalEntities {
            entities: &self.entities,
            authorities: &self.config.authorities,
        };
        let local_names: Vec<Option<(String, Overrides)>> = e
            .members
            .iter()
            .map(|m| match local.lookup(m) {
                // The member's query was checked when it joined.
                Lookup::Found { .. } => m.entity_name().map(|n| {
                    let overrides = crate::query::parse_overrides(&m.query).unwrap_or_default();
                    (n.to_string(), overrides)
                }),
                _ => None,
            })
            .collect();
        let targets: Vec<Target> = e
            .members
            .iter()
            .zip(&e.nested)
            .zip(&local_names)
            .map(|((m, nested), local)| {
                let mut options = m.options();
                if *nested {
                    // Another EM: ask for its structured reply, one level less deep.
                    options.push(uint_option(
                        OptionNumber::ACCEPT,
                        u32::from(ContentFormat::SENML_CBOR.0),
                    ));
                    options.push(uint_option(OptionNumber::HOP_LIMIT, u32::from(hop_out)));
                    // ... and the entities passed through, so a cycle ends at its repeat.
                    let mut carried = visited.clone();
                    carried.extend(m.entity_name().map(|n| entity_key(m.addr, n)));
                    options.push((VISITED, crate::visited::encode(&carried)));
                }
                Target {
                    uri: m.uri.clone(),
                    addr: m.addr,
                    options,
                    local: local.is_some(),
                    secure: m.secure,
                }
            })
            .collect();
        let mode = match (e.profile.ect, e.group_destination()) {
            (Ect::Multicast, Some(destination)) => Mode::Multicast {
                destination,
                options: e.members.first().map(|m| m.options()).unwrap_or_default(),
                window: self.config.multicast_leisure + self.config.multicast_margin,
            },
            _ => Mode::Unicast { delay },
        };
        // Room in the engine's exchange table (an eighth is left for validation and
        // membership requests), within this entity's share of it.
        let remote = local_names.iter().filter(|n| n.is_none()).count();
        let wanted = match mode {
            Mode::Multicast { .. } => 1,
            Mode::Unicast { .. } => remote.min(self.config.max_in_flight.max(1)),
        };
        let exchanges = ep.config().max_exchanges;
        let reserved =
            match self
                .admission
                .reserve(name, params.client, wanted, exchanges - exchanges / 8)
            {
                Ok(n) => n,
                Err(refusal) => {
                    self.end_counted(counted, params.client);
                    return self.finish_reply(ep, now, to, refusal_reply(name, refusal));
                }
            };
        let fanout_body = matches!(kind, ReplyKind::Fanout(_));
        let spec = FanoutSpec {
            method: params.method,
            payload: if fanout_body {
                params.payload.clone()
            } else {
                Vec::new()
            },
            content_format: params.content_format.filter(|_| fanout_body),
            confirmable: emt == Emt::Con && e.profile.ect == Ect::Unicast,
            enr,
            member_timeout: self.config.member_timeout,
            // Local members take no exchange, so they are not held back by the reservation.
            max_in_flight: reserved + (g - remote),
            mode,
        };
        let members = e.member_uris();
        let reached = match &to {
            ReplyTo::Client(client) => client.reached,
            ReplyTo::Parent { .. } => None,
        };
        let entity_uri = self.entity_uri(reached, name);
        let id = self.new_task();
        let mut fanout = Fanout::new(spec, targets, now);
        self.with_io(ep, now, id, |io, _| fanout.start(io));
        let task = QueryTask {
            reply_to: to,
            name: name.to_string(),
            entity_uri,
            kind,
            accept,
            members,
            local_names,
            params,
            visited,
            hop_out,
            enr,
            reserved,
            counted,
            fanout,
        };
        self.advance(ep, now, id, Task::Query(task));
    }

    pub(super) fn advance_query(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        id: TaskId,
        t: QueryTask,
    ) -> Option<Task> {
        if !t.fanout.is_done() {
            return Some(Task::Query(t));
        }
        let QueryTask {
            reply_to,
            name,
            entity_uri,
            kind,
            accept,
            members,
            enr,
            reserved,
            counted,
            fanout,
            params,
            ..
        } = t;
        let result = self.with_io(ep, now, id, |io, _| fanout.finish(io));
        self.admission.release(&name, params.client, reserved);
        self.end_counted(counted, params.client);
        let mut replies = Vec::new();
        let mut silent = false;
        let mut not_needed = Vec::new();
        let enough = result.successes >= enr;
        for (outcome, member) in result.outcomes.iter().zip(&members) {
            match outcome {
                Outcome::Answered { response, after } => {
                    if response.code.is_success() {
                        if let Some(e) = self.entities.get_mut(&name) {
                            e.response_size.sample(response.size);
                        }
                    }
                    replies.push(MemberReply {
                        member: member.clone(),
                        code: response.code,
                        value: extract(response.content_format, &response.payload),
                        after: *after,
                    });
                }
                Outcome::Waiting if enough => not_needed.push(member.clone()),
                Outcome::Waiting | Outcome::Failed(_) => silent = true,
                Outcome::Unasked => not_needed.push(member.clone()),
            }
        }
        let base_time = self.base_time(result.started, result.elapsed);
        let answers = Answers {
            replies,
            successes: result.successes,
            silent,
            not_needed,
            base_time,
        };
        let reply = combined_reply(ep, entity_uri, kind, accept, &members, enr, answers);
        self.finish_reply(ep, now, reply_to, reply);
        None
    }

    /// SenML base time of answers collected from `started` on, `elapsed` before now.
    pub(super) fn base_time(&self, started: Instant, elapsed: Duration) -> f64 {
        match self.config.epoch {
            Some(epoch) => epoch + started.as_nanos() as f64 / 1e9,
            None => -elapsed.as_secs_f64(),
        }
    }

    /// Ends the count of a client's query in progress, if it was counted.
    fn end_counted(&mut self, counted: bool, client: Option<IpAddr>) {
        if let Some(client) = client.filter(|_| counted) {
            self.admission.end_query(client);
        }
    }

    /// Member requests a query of entity `name` causes, its nested entities on this EM
    /// included down to `hops` levels; counting stops past `limit`.
    fn member_requests(&self, name: &str, hops: u8, limit: usize) -> usize {
        let Some(e) = self.entities.get(name) else {
            return 0;
        };
        if e.profile.ect == Ect::Multicast {
            return 1;
        }
        let local = LocalEntities {
            entities: &self.entities,
            authorities: &self.config.authorities,
        };
        let mut total = 0usize;
        for m in &e.members {
            let nested = match (hops > 1, local.lookup(m), m.entity_name()) {
                (true, Lookup::Found { .. }, Some(child)) => {
                    self.member_requests(child, hops - 1, limit.saturating_sub(total))
                }
                _ => 1,
            };
            total = total.saturating_add(nested);
            if total > limit {
                break;
            }
        }
        total
    }

    /// Sends a query's reply to its client, or hands it to the parent query.
    pub(super) fn finish_reply(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: ReplyTo,
        reply: Reply,
    ) {
        match to {
            ReplyTo::Client(r) => self.send_reply(ep, now, &r, reply),
            ReplyTo::Parent { task, index } => {
                let source = self
                    .config
                    .authorities
                    .first()
                    .copied()
                    .unwrap_or_else(|| SocketAddr::from(([0u16; 8], 0)));
                let response = MemberResponse {
                    source,
                    code: reply.code,
                    content_format: reply.content_format,
                    // What the reply would take on the wire.
                    size: 4 + 8 + 4 + reply.body.len() + 1,
                    payload: reply.body,
                };
                self.step(ep, now, task, Input::Local(index, response));
            }
        }
    }
}

/// The members' answers a reply combines.
pub(super) struct Answers {
    /// The answers, in member order.
    pub replies: Vec<MemberReply>,
    /// How many were successes.
    pub successes: usize,
    /// Whether a member the reply needed is silent (a gateway timeout, not a bad gateway).
    pub silent: bool,
    /// Members whose answer was not needed.
    pub not_needed: Vec<String>,
    /// SenML base time.
    pub base_time: f64,
}

/// The reply to a query or fan-out of the entity at `entity_uri`: its members' answers
/// combined by `kind` and rendered in `accept`; an error when fewer than `enr` succeeded.
pub(super) fn combined_reply(
    ep: &Endpoint,
    entity_uri: String,
    kind: ReplyKind,
    accept: ContentFormat,
    members: &[String],
    enr: usize,
    answers: Answers,
) -> Reply {
    let Answers {
        replies,
        successes,
        silent,
        not_needed,
        base_time,
    } = answers;
    match combine(entity_uri, kind, members, replies, base_time) {
        Ok(mut combined) => {
            combined.not_needed = not_needed;
            let code = match kind {
                ReplyKind::Query(_) if successes >= enr => Code::CONTENT,
                ReplyKind::Fanout(m) if successes >= members.len() => {
                    if m == Code::DELETE {
                        Code::DELETED
                    } else {
                        Code::CHANGED
                    }
                }
                _ if silent => Code::GATEWAY_TIMEOUT,
                _ => Code::BAD_GATEWAY,
            };
            let body = if code.is_success() {
                combined.render(accept)
            } else {
                // An error response must fit one datagram (see `error_payload_limit`).
                combined.render_within(accept, error_payload_limit(ep))
            };
            Reply::with(code, accept, body.unwrap_or_default())
        }
        Err(e) => Reply::error(Code::BAD_GATEWAY, e.to_string()),
    }
}
