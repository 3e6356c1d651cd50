//! Validation that asks the network: every member must answer within the validation
//! timeout, members that are entities are found through their profiles, the nesting below
//! them is walked for cycles and the depth limit, and arithmetic operations need members
//! that answer with numbers.

use crate::entity::Entity;
use crate::error_report::Reason;
use crate::member::Member;
use crate::member_value::extract;
use crate::operation::Operation;
use crate::profile::{parse_change, PayloadFormat};
use crate::response::MemberResponse;
use crate::task_io::TaskIo;
use crate::timers::TimerKey;
use crate::validation::ValidationError;
use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, Duration, Failure, Request, RequestId, RequestParams};
use std::collections::BTreeMap;
use std::net::SocketAddr;

const TAG_DEADLINE: u8 = 5;

/// What the EM knows about one of its own entities.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The URI is not this EM's.
    NotLocal,
    /// This EM has no such entity.
    Missing,
    /// This EM's entity: its members and default operation.
    Found {
        /// Member URIs.
        er: Vec<String>,
        /// Default operation.
        default_op: Operation,
    },
}

/// This EM's entities, looked up by URI without the network.
pub struct LocalEntities<'a> {
    /// The entities.
    pub entities: &'a BTreeMap<String, Entity>,
    /// The addresses this EM is reached at.
    pub authorities: &'a [SocketAddr],
}

impl LocalEntities<'_> {
    /// Resolves `member` if it names an entity of this EM.
    pub fn lookup(&self, member: &Member) -> Lookup {
        let local = self.authorities.iter().any(|a| {
            a.ip().to_canonical() == member.addr.ip().to_canonical()
                && a.port() == member.addr.port()
        });
        match (local, member.entity_name()) {
            (true, Some(name)) => match self.entities.get(name) {
                Some(e) => Lookup::Found {
                    er: e.profile.er.clone(),
                    default_op: e.profile.default_operation(),
                },
                None => Lookup::Missing,
            },
            _ => Lookup::NotLocal,
        }
    }
}

/// What to validate.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    /// The entity's name (for diagnostics).
    pub name: String,
    /// Its members.
    pub members: Vec<Member>,
    /// The URIs of the entity itself (reaching one is a cycle).
    pub own: Vec<Member>,
    /// Deepest nesting allowed (the entity is level 1).
    pub depth_limit: u8,
    /// An operation the entity offers that needs numeric members.
    pub numbers_for: Option<Operation>,
    /// How long members have to answer.
    pub timeout: Duration,
}

#[derive(Debug)]
enum Pending {
    /// GET of top-level member i.
    Get(usize),
    /// GET of top-level member i's profile (it looks like an entity).
    TopProfile(usize),
    /// GET of a nested entity's profile, to walk below it.
    Walk {
        member: Member,
        level: u8,
        chain: Vec<Member>,
    },
}

/// The result of a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeOutcome {
    /// Every problem found; empty when the entity is valid.
    pub problems: Vec<ValidationError>,
    /// Per member, whether it is an entity.
    pub nested: Vec<bool>,
    /// Per member, the size of its validation reply (0 when none).
    pub sizes: Vec<usize>,
}

/// A validation in progress.
#[derive(Debug)]
pub struct Probe {
    spec: ProbeSpec,
    /// Requests outstanding, cancelled in request order at the deadline.
    pending: BTreeMap<RequestId, Pending>,
    problems: Vec<ValidationError>,
    nested: Vec<bool>,
    sizes: Vec<usize>,
    visited: Vec<Member>,
    timer: Option<TimerKey>,
}

impl Probe {
    /// A probe of `spec`, not started.
    pub fn new(spec: ProbeSpec) -> Probe {
        let n = spec.members.len();
        Probe {
            spec,
            pending: BTreeMap::new(),
            problems: Vec::new(),
            nested: vec![false; n],
            sizes: vec![0; n],
            visited: Vec::new(),
            timer: None,
        }
    }

    /// Notes a problem with the members.
    fn problem(&mut self, reason: Reason, message: String) {
        self.problems
            .push(ValidationError::new("er", reason, message));
    }

    /// Asks every member (or looks up this EM's own entities).
    pub fn start(&mut self, io: &mut TaskIo<'_>, local: &LocalEntities<'_>) {
        for i in 0..self.spec.members.len() {
            let m = self.spec.members[i].clone();
            if m.entity_name().is_none() {
                self.get(io, i);
                continue;
            }
            match local.lookup(&m) {
                Lookup::Found { er, default_op } => {
                    self.found_entity(io, local, i, &er, default_op)
                }
                Lookup::Missing => self.problem(
                    Reason::NoSuchEntity,
                    format!(
                        "member {}: this EM has no entity named {}",
                        m.uri,
                        m.entity_name().unwrap_or_default()
                    ),
                ),
                Lookup::NotLocal => {
                    self.send(io, &m, true, Pending::TopProfile(i));
                }
            }
        }
        if !self.pending.is_empty() {
            self.timer = Some(io.set_timer(io.now + self.spec.timeout, TAG_DEADLINE));
        }
    }

    fn get(&mut self, io: &mut TaskIo<'_>, i: usize) {
        let m = self.spec.members[i].clone();
        self.send(io, &m, false, Pending::Get(i));
    }

    fn send(&mut self, io: &mut TaskIo<'_>, m: &Member, profile: bool, pending: Pending) {
        let mut accept = [0u8; 4];
        let mut options: Vec<_> = m.options().into_iter().collect();
        if profile {
            options.retain(|(n, _)| *n != OptionNumber::URI_QUERY);
            options.push((OptionNumber::URI_PATH, b"profile".to_vec()));
        }
        let mut list: Vec<_> = options.iter().map(|(n, v)| opt(*n, v)).collect();
        if profile {
            list.push(opt(
                OptionNumber::ACCEPT,
                uint::encode(u32::from(ContentFormat::JSON.0), &mut accept),
            ));
        }
        let request = Request {
            method: Code::GET,
            options: &list,
            payload: &[],
        };
        match io.send(m.addr, m.secure, &request, RequestParams::default()) {
            Ok(id) => {
                self.pending.insert(id, pending);
            }
            Err(e) => self.problem(
                Reason::Unreachable,
                format!("member {}: request not sent ({e})", m.uri),
            ),
        }
    }

    /// Top-level member `i` is an entity with members `er`.
    fn found_entity(
        &mut self,
        io: &mut TaskIo<'_>,
        local: &LocalEntities<'_>,
        i: usize,
        er: &[String],
        default_op: Operation,
    ) {
        self.nested[i] = true;
        let m = self.spec.members[i].clone();
        // This EM's own entity is queried in-process with the overrides of the URI's query.
        let is_local = local.lookup(&m) != Lookup::NotLocal;
        match crate::query::parse_overrides(&m.query) {
            Err(e) if is_local => {
                self.problem(Reason::UnknownValue, format!("member {}: {e}", m.uri))
            }
            Ok(o) if is_local && o.fanout => self.problem(
                Reason::Conflict,
                format!("member {}: ?fanout has no place in a member's URI", m.uri),
            ),
            _ => {}
        }
        if let Some(op) = self.spec.numbers_for.filter(|_| !default_op.is_scalar()) {
            self.problem(
                Reason::NotANumber,
                format!(
                    "member {} is an entity whose default operation {default_op} gives a list, \
                 but eo includes {op}, which needs one number per member",
                    m.uri
                ),
            );
        }
        if 2 > self.spec.depth_limit {
            self.problem(
                Reason::TooDeep,
                format!(
                    "nesting deeper than {} levels: {} contains entity {}",
                    self.spec.depth_limit, self.spec.name, m.uri
                ),
            );
            return;
        }
        self.visited.push(m.clone());
        for child in er {
            self.walk(io, local, child, 3, vec![m.clone()]);
        }
    }

    fn chain_text(&self, chain: &[Member], last: &str) -> String {
        let mut parts = vec![self.spec.name.clone()];
        parts.extend(chain.iter().map(|m| m.uri.clone()));
        parts.push(last.to_string());
        parts.join(" -> ")
    }

    /// Checks `uri`, found at nesting `level` below `chain`.
    fn walk(
        &mut self,
        io: &mut TaskIo<'_>,
        local: &LocalEntities<'_>,
        uri: &str,
        level: u8,
        chain: Vec<Member>,
    ) {
        let Ok(m) = Member::parse(uri) else {
            return;
        };
        if self.spec.own.iter().any(|o| o.same_entity(&m)) {
            let text = self.chain_text(&chain, uri);
            self.problem(Reason::Cycle, format!("cycle: {text}"));
            return;
        }
        if chain.iter().any(|c| c.same_entity(&m)) {
            let text = self.chain_text(&chain, uri);
            self.problem(
                Reason::Cycle,
                format!("cycle among the nested entities: {text}"),
            );
            return;
        }
        if m.entity_name().is_none() || self.visited.iter().any(|v| v.same_entity(&m)) {
            return;
        }
        if level > self.spec.depth_limit {
            let text = self.chain_text(&chain, uri);
            self.problem(
                Reason::TooDeep,
                format!(
                    "nesting deeper than {} levels: {text}",
                    self.spec.depth_limit
                ),
            );
            return;
        }
        self.visited.push(m.clone());
        match local.lookup(&m) {
            Lookup::Found { er, .. } => {
                let mut next = chain;
                next.push(m);
                for child in er {
                    self.walk(io, local, &child, level + 1, next.clone());
                }
            }
            Lookup::Missing => {}
            Lookup::NotLocal => {
                self.send(
                    io,
                    &m.clone(),
                    true,
                    Pending::Walk {
                        member: m,
                        level,
                        chain,
                    },
                );
            }
        }
    }

    /// The members of an entity profile document, with its default operation.
    fn profile_members(response: &MemberResponse) -> Option<(Vec<String>, Operation)> {
        if response.code != Code::CONTENT {
            return None;
        }
        let change = parse_change(PayloadFormat::Json, &response.payload, usize::MAX).ok()?;
        let er = change.er?;
        let op = change
            .eo
            .and_then(|eo| eo.first().copied())
            .unwrap_or(Operation::List);
        Some((er, op))
    }

    /// A response to one of the probe's requests.
    pub fn on_response(
        &mut self,
        io: &mut TaskIo<'_>,
        local: &LocalEntities<'_>,
        id: RequestId,
        response: MemberResponse,
    ) {
        let Some(pending) = self.pending.remove(&id) else {
            return;
        };
        match pending {
            Pending::Get(i) => {
                let uri = self.spec.members[i].uri.clone();
                if !response.code.is_success() {
                    let diag = response.diagnostic();
                    self.problem(
                        Reason::MemberRefused,
                        format!(
                            "member {uri} answered {}{}{diag}",
                            response.code,
                            if diag.is_empty() { "" } else { ": " }
                        ),
                    );
                } else {
                    self.sizes[i] = response.size;
                    let value = extract(response.content_format, &response.payload);
                    if let (Some(op), None) = (self.spec.numbers_for, value.number()) {
                        self.problem(
                            Reason::NotANumber,
                            format!(
                            "member {uri} replied {}, which is not a number, but eo includes {op}",
                            value.describe()
                        ),
                        );
                    }
                }
            }
            Pending::TopProfile(i) => match Probe::profile_members(&response) {
                Some((er, op)) => self.found_entity(io, local, i, &er, op),
                // Not an entity after all: an ordinary resource under /e/.
                None => self.get(io, i),
            },
            Pending::Walk {
                member,
                level,
                chain,
            } => {
                if let Some((er, _)) = Probe::profile_members(&response) {
                    let mut next = chain;
                    next.push(member);
                    for child in er {
                        self.walk(io, local, &child, level + 1, next.clone());
                    }
                }
            }
        }
        self.cleanup(io);
    }

    /// One of the probe's requests failed.
    pub fn on_failed(&mut self, io: &mut TaskIo<'_>, id: RequestId, failure: Failure) {
        if let Some(p) = self.pending.remove(&id) {
            let problem = self.silent(&p, &failure.to_string());
            self.problem(Reason::NoAnswer, problem);
        }
        self.cleanup(io);
    }

    fn silent(&self, p: &Pending, why: &str) -> String {
        match p {
            Pending::Get(i) | Pending::TopProfile(i) => {
                format!(
                    "member {} did not answer ({why})",
                    self.spec.members[*i].uri
                )
            }
            Pending::Walk { member, .. } => format!(
                "the profile of nested entity {} could not be read ({why})",
                member.uri
            ),
        }
    }

    /// The validation timeout passed.
    pub fn on_timer(&mut self, io: &mut TaskIo<'_>, tag: u8) {
        if tag != TAG_DEADLINE {
            return;
        }
        self.timer = None;
        let why = format!("no answer within {} s", self.spec.timeout.as_secs_f64());
        for (id, p) in std::mem::take(&mut self.pending) {
            io.cancel(id);
            let problem = self.silent(&p, &why);
            self.problem(Reason::NoAnswer, problem);
        }
    }

    fn cleanup(&mut self, io: &mut TaskIo<'_>) {
        if self.pending.is_empty() {
            if let Some(t) = self.timer.take() {
                io.cancel_timer(t);
            }
        }
    }

    /// True once every answer is in.
    pub fn is_done(&self) -> bool {
        self.pending.is_empty()
    }

    /// The result.
    pub fn outcome(self) -> ProbeOutcome {
        ProbeOutcome {
            problems: self.problems,
            nested: self.nested,
            sizes: self.sizes,
        }
    }
}
