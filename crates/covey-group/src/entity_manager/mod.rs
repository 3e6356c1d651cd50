//! The Entity Manager as an [`App`]: it serves `/e`, `/e/<name>`, `/e/<name>/profile` and
//! `/.well-known/core` on the engine it runs on, and is a client of the members through
//! the same engine. Work that spans events (queries, creations, deletions, profile
//! changes, start-up checks) is held as tasks that the engine's responses and the EM's
//! timers move forward.

mod create;
mod delete;
mod durability;
mod maintain;
mod member_contexts;
mod observe;
mod query;
mod reached_at;
mod respond;
mod update;

use crate::admission::Admission;
use crate::authorization::{Access, Action, Requester};
use crate::config::EmConfig;
use crate::entity::Entity;
use crate::incoming::IncomingRequest;
use crate::member_oscore::MemberOscore;
use crate::multicast_pool::MulticastPool;
use crate::probe::LocalEntities;
use crate::profile::ProfileDocument;
use crate::response::MemberResponse;
use crate::sources::Sources;
use crate::store::{RecordState, Store, StoreError};
use crate::task_io::TaskIo;
use crate::timers::{TaskId, TimerKey, Timers, TIMER_MARK};
use covey_core::precondition::Current;
use covey_core::uri::SocketAuthority;
use covey_core::{Code, ContentFormat};
use covey_proto::{
    App, AppContext, AppId, Endpoint, Event, Failure, IncomingId, Instant, LogLevel, PeerIdentity,
    RequestId,
};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use durability::{AfterWrite, STORE_POLL};

use observe::{Observations, ObserveAs};
use reached_at::ReachedAt;
use respond::{Reply, Responder};

/// Most lines kept in the EM's log of notable events.
const LOG_LINES: usize = 256;

/// Why an EM could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored entity cannot be read back.
    #[error("{0}")]
    Record(String),
}

/// Input that moves a task forward.
#[derive(Debug)]
enum Input {
    Response(RequestId, MemberResponse),
    Failed(RequestId, Failure),
    Finished(RequestId),
    Timer(u8),
    /// The reply of a member that is one of this EM's entities, asked in-process.
    Local(usize, MemberResponse),
    /// The writes the task waited for are durable (or the store failed).
    Written(Result<(), StoreError>),
}

/// Work in progress.
#[derive(Debug)]
enum Task {
    Query(query::QueryTask),
    Create(create::CreateTask),
    Delete(delete::DeleteTask),
    Update(update::UpdateTask),
    Maintain(maintain::MaintainTask),
}

/// The Entity Manager: entities of CoAP resources used as single resources.
pub struct EntityManager {
    config: EmConfig,
    store: Box<dyn Store>,
    entities: BTreeMap<String, Entity>,
    pool: MulticastPool,
    // Ordered maps throughout: no iteration order may depend on a per-process hash seed.
    tasks: BTreeMap<TaskId, Task>,
    routes: BTreeMap<RequestId, TaskId>,
    timers: Timers,
    next_task: TaskId,
    /// Names with a creation, change or deletion in progress.
    busy: BTreeSet<String>,
    /// Pending records of creations interrupted by a crash, undone at start.
    leftovers: Vec<Entity>,
    log: Vec<String>,
    /// Lines noted since the last callback, handed to the host's log when it returns.
    unlogged: Vec<(LogLevel, String)>,
    /// Replies and tasks waiting for the store, each after the writes accepted before it.
    after_write: VecDeque<(u64, AfterWrite)>,
    /// The timer that looks at the store again while something waits for it.
    store_poll: Option<TimerKey>,
    /// Budgets of member requests per query and per client, and shares of those in flight.
    admission: Admission,
    /// The host's sockets for coap and coaps members, as of the latest callback.
    sources: Sources,
    /// The EM's id among the Apps of its node, which member answers are routed by.
    app: AppId,
    /// Observed entities and their member observations.
    observations: Observations,
    /// The members' OSCORE contexts.
    member_oscore: MemberOscore,
}

impl std::fmt::Debug for EntityManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntityManager")
            .field("entities", &self.entities.keys().collect::<Vec<_>>())
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

impl EntityManager {
    /// An EM with the entities of `store`. Interrupted creations found there are undone
    /// (members asked to leave) and multicast memberships re-verified when the EM starts.
    pub fn new(config: EmConfig, store: Box<dyn Store>) -> Result<EntityManager, EmError> {
        let mut store = store;
        let state = store.load()?;
        let mut pool = MulticastPool::new(config.group_pool, state.pool_cursor);
        let mut entities = BTreeMap::new();
        let mut leftovers = Vec::new();
        let mut busy = BTreeSet::new();
        let mut member_oscore = MemberOscore::new(
            &config.member_oscore,
            &config.member_reservations,
            config.max_member_contexts,
            state.sequences.clone(),
        );
        for record in &state.entities {
            let entity = Entity::from_record(record, usize::MAX, config.initial_response_size)
                .map_err(EmError::Record)?;
            member_oscore
                .claim(&entity.name, &entity.member_contexts())
                .map_err(|e| EmError::Record(format!("stored entity \"{}\": {e}", entity.name)))?;
            if let Some(g) = entity.group {
                pool.mark_used(g);
            }
            match record.state {
                RecordState::Active => {
                    entities.insert(entity.name.clone(), entity);
                }
                RecordState::Pending => {
                    busy.insert(entity.name.clone());
                    leftovers.push(entity);
                }
            }
        }
        Ok(EntityManager {
            admission: Admission::new(config.admission_limits()),
            member_oscore,
            sources: Sources::default(),
            app: AppId::default(),
            config,
            store,
            entities,
            pool,
            tasks: BTreeMap::new(),
            routes: BTreeMap::new(),
            timers: Timers::default(),
            next_task: 1,
            busy,
            leftovers,
            log: Vec::new(),
            unlogged: Vec::new(),
            after_write: VecDeque::new(),
            store_poll: None,
            observations: Observations::default(),
        })
    }

    /// An EM keeping its entities in the SQLite database at `path`.
    #[cfg(feature = "sqlite")]
    pub fn open(
        config: EmConfig,
        path: impl AsRef<std::path::Path>,
    ) -> Result<EntityManager, EmError> {
        let store = crate::store::SqliteStore::open(path)?;
        EntityManager::new(config, Box::new(store))
    }

    /// The configuration.
    pub fn config(&self) -> &EmConfig {
        &self.config
    }

    /// The entities, by name.
    pub fn entities(&self) -> impl Iterator<Item = &Entity> {
        self.entities.values()
    }

    /// One entity.
    pub fn entity(&self, name: &str) -> Option<&Entity> {
        self.entities.get(name)
    }

    /// The latest notable events (start-up checks, membership problems, store errors); each
    /// also goes to the host's log (`tracing` under the tokio driver).
    pub fn log(&self) -> &[String] {
        &self.log
    }

    /// Tasks in progress (queries, creations, ...).
    pub fn tasks_in_progress(&self) -> usize {
        self.tasks.len()
    }

    /// Member requests the queries in progress have reserved room for.
    pub fn member_requests_in_flight(&self) -> usize {
        self.admission.in_flight()
    }

    /// Records a notable event; the host logs it at `level` when the callback returns.
    fn note(&mut self, level: LogLevel, line: String) {
        if self.log.len() >= LOG_LINES {
            self.log.remove(0);
        }
        self.log.push(line.clone());
        self.unlogged.push((level, line));
    }

    /// Hands the lines noted during a callback to the host.
    fn flush_log(&mut self, cx: &mut AppContext<'_>) {
        for (level, line) in self.unlogged.drain(..) {
            cx.log(level, format_args!("{line}"));
        }
    }

    /// What follows every event: replies waiting for the store go, timers are armed and the
    /// log is handed over.
    fn after_event(&mut self, cx: &mut AppContext<'_>) {
        let (ep, now) = (&mut *cx.endpoint, cx.now);
        self.release_durable(ep, now);
        self.timers.arm(cx);
        self.flush_log(cx);
    }

    /// The URI of entity `name` as the client that `reached` the EM names it (at the first
    /// of the EM's addresses when the operator named that one), else as the first names it.
    fn entity_uri(&self, reached: Option<ReachedAt>, name: &str) -> String {
        let first = self.config.authorities.first();
        if let Some(mut reached) = reached {
            if let Some(a) = first.filter(|_| self.config.named_by_first) {
                reached.addr = *a;
            }
            return reached.entity_uri(name);
        }
        match first {
            Some(a) => format!("coap://{}/e/{name}", SocketAuthority(*a)),
            None => format!("/e/{name}"),
        }
    }

    fn new_task(&mut self) -> TaskId {
        let id = self.next_task;
        self.next_task += 1;
        id
    }

    /// Runs `f` with a task's view of the engine and of this EM's entities.
    fn with_io<R>(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        task: TaskId,
        f: impl FnOnce(&mut TaskIo<'_>, &LocalEntities<'_>) -> R,
    ) -> R {
        let local = LocalEntities {
            entities: &self.entities,
            authorities: &self.config.authorities,
        };
        let mut io = TaskIo::new(
            ep,
            now,
            &mut self.routes,
            &mut self.timers,
            task,
            (self.sources, self.app),
            (&mut self.member_oscore, &mut *self.store),
        );
        f(&mut io, &local)
    }

    fn step(&mut self, ep: &mut Endpoint, now: Instant, id: TaskId, input: Input) {
        let Some(mut task) = self.tasks.remove(&id) else {
            return;
        };
        self.with_io(ep, now, id, |io, local| match &mut task {
            Task::Query(t) => t.feed(io, input),
            Task::Create(t) => t.feed(io, local, input),
            Task::Delete(t) => t.feed(io, input),
            Task::Update(t) => t.feed(io, local, input),
            Task::Maintain(t) => t.feed(io, input),
        });
        self.advance(ep, now, id, task);
    }

    /// Moves a task on after an input; keeps it while it waits for more.
    fn advance(&mut self, ep: &mut Endpoint, now: Instant, id: TaskId, task: Task) {
        let next = match task {
            Task::Query(t) => self.advance_query(ep, now, id, t),
            Task::Create(t) => self.advance_create(ep, now, id, t),
            Task::Delete(t) => self.advance_delete(ep, now, id, t),
            Task::Update(t) => self.advance_update(ep, now, id, t),
            Task::Maintain(t) => self.advance_maintain(ep, now, id, t),
        };
        let Some(mut task) = next else {
            return;
        };
        let children = match &mut task {
            Task::Query(q) => q.local_requests(),
            _ => Vec::new(),
        };
        self.tasks.insert(id, task);
        // Members that are this EM's own entities are queried in-process: a request to
        // itself would wait for an NSTART slot its own parent request holds.
        for (index, name, params) in children {
            self.start_query(
                ep,
                now,
                query::ReplyTo::Parent { task: id, index },
                &name,
                params,
            );
        }
    }

    fn on_request(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        id: IncomingId,
        (who, reached): &(Requester, Option<ReachedAt>),
    ) {
        let Some(req) = IncomingRequest::read(ep, id) else {
            return;
        };
        let to = Responder {
            id,
            json_errors: req.wants_json(),
            reached: *reached,
            observe: ObserveAs::Plain,
            oscore: matches!(who.identity, Some(PeerIdentity::Oscore(_))),
            secured: who.identity.is_some(),
        };
        let action = action_of(&req);
        if let Err(denial) = self.config.access.check(who, &action) {
            let reply = Reply::error(denial.code, denial.message);
            return self.send_reply(ep, now, &to, reply);
        }
        // A change from an address not verified yet is answered with Echo (RFC 9175) before
        // anything is done: a spoofed source, loopback or a permitted host, changes nothing.
        if action.changes_state() && to.challenged(ep, now) {
            return;
        }
        let path: Vec<&str> = req.path.iter().map(String::as_str).collect();
        let m = req.method;
        match path.as_slice() {
            [".well-known", "core"] if m == Code::GET => self.list(ep, now, &to, &req, true),
            ["e"] if m == Code::GET => self.list(ep, now, &to, &req, false),
            ["e"] if m == Code::POST => self.create(ep, now, to, &req),
            ["e", name] => {
                let name = name.to_string();
                match m {
                    Code::GET | Code::PUT | Code::POST | Code::DELETE => {
                        self.entity_request(ep, now, to, &req, &name)
                    }
                    _ => self.send_reply(ep, now, &to, not_allowed(&req, "GET, PUT, POST, DELETE")),
                }
            }
            ["e", name, "profile"] => {
                let name = name.to_string();
                match m {
                    Code::GET => self.show_profile(ep, now, &to, &req, &name),
                    Code::PUT => {
                        if !self.precondition_failed(ep, now, &to, &req, &name, true) {
                            self.update(ep, now, to, &req, &name)
                        }
                    }
                    _ => self.send_reply(ep, now, &to, not_allowed(&req, "GET, PUT")),
                }
            }
            [".well-known", "core"] => self.send_reply(ep, now, &to, not_allowed(&req, "GET")),
            ["e"] => self.send_reply(ep, now, &to, not_allowed(&req, "GET, POST")),
            _ => {
                let shown = format!("/{}", req.path.join("/"));
                self.send_reply(
                    ep,
                    now,
                    &to,
                    Reply::error(Code::NOT_FOUND, format!("no resource at {shown}")),
                )
            }
        }
    }

    /// `GET /e` and `GET /.well-known/core`.
    fn list(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: &Responder,
        req: &IncomingRequest,
        with_root: bool,
    ) {
        if req.accept.is_some_and(|a| a != ContentFormat::LINK_FORMAT) {
            return self.send_reply(
                ep,
                now,
                to,
                Reply::error(
                    Code::NOT_ACCEPTABLE,
                    "the entity list is application/link-format (40)".into(),
                ),
            );
        }
        let reply = match crate::listing::links(self.entities.values(), with_root, &req.query) {
            Ok(text) => Reply::content(ContentFormat::LINK_FORMAT, text.into_bytes()),
            Err(e) => Reply::error(Code::BAD_REQUEST, e),
        };
        self.send_reply(ep, now, to, reply);
    }

    /// `GET /e/<name>/profile`.
    fn show_profile(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: &Responder,
        req: &IncomingRequest,
        name: &str,
    ) {
        let Some(e) = self.entities.get(name) else {
            let reply = unknown_entity(name);
            return self.send_reply(ep, now, to, reply);
        };
        let doc = profile_document(e);
        let tag = profile_etag(&doc);
        let reply = match req.accept {
            None | Some(ContentFormat::JSON) => Reply::content(
                ContentFormat::JSON,
                serde_json::to_vec(&doc).unwrap_or_default(),
            ),
            Some(ContentFormat::CBOR) => {
                let mut out = Vec::new();
                let _ = ciborium::ser::into_writer(&doc, &mut out);
                Reply::content(ContentFormat::CBOR, out)
            }
            Some(other) => Reply::error(
                Code::NOT_ACCEPTABLE,
                format!("a profile is application/json (50) or application/cbor (60), not {other}"),
            ),
        };
        let reply = Reply {
            etag: reply.code.is_success().then_some(tag),
            ..reply
        };
        self.send_reply(ep, now, to, reply);
    }

    /// A request that changes `/e/<name>` (`profile`: its profile) whose If-Match or
    /// If-None-Match fails: answered 4.12 and true. The profile's ETag is the one GET gives;
    /// `/e/<name>` itself has none that lasts, so only an empty If-Match matches it.
    fn precondition_failed(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: &Responder,
        req: &IncomingRequest,
        name: &str,
        profile: bool,
    ) -> bool {
        let tag = self
            .entities
            .get(name)
            .filter(|_| profile)
            .map(|e| profile_etag(&profile_document(e)));
        let current = match (self.entities.contains_key(name), &tag) {
            (false, _) => Current::Absent,
            (true, tag) => Current::Present(tag.as_ref().map(|t| &t[..])),
        };
        if req.preconditions_hold(current) {
            return false;
        }
        let what = if profile { "profile of " } else { "" };
        let reply = Reply::error(
            Code::PRECONDITION_FAILED,
            format!("{what}entity {name} not changed: If-Match or If-None-Match does not hold"),
        );
        self.send_reply(ep, now, to, reply);
        true
    }

    /// Anything addressed to `/e/<name>`.
    fn entity_request(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        mut to: Responder,
        req: &IncomingRequest,
        name: &str,
    ) {
        let overrides = match crate::query::parse_overrides(&req.query) {
            Ok(o) => o,
            Err(e @ crate::query::QueryError::Ect(_)) => {
                return self.send_reply(ep, now, &to, Reply::error(Code::BAD_OPTION, e.to_string()))
            }
            Err(e) => {
                return self.send_reply(
                    ep,
                    now,
                    &to,
                    Reply::error(Code::BAD_REQUEST, e.to_string()),
                )
            }
        };
        if !self.entities.contains_key(name) {
            return self.send_reply(ep, now, &to, unknown_entity(name));
        }
        if req.method != Code::GET && self.precondition_failed(ep, now, &to, req, name, false) {
            return;
        }
        let fans_out = req.method == Code::GET || overrides.fanout;
        // A query from an address not verified yet is answered with Echo (RFC 9175) before
        // any member is asked: a spoofed query costs the members nothing.
        if fans_out && to.challenged(ep, now) {
            return;
        }
        match (req.method, overrides.fanout) {
            (Code::GET, false) if req.observe == Some(0) => {
                self.observe_entity(ep, now, to, req, name, overrides)
            }
            (Code::GET, false) => {
                if req.observe == Some(1) {
                    to.observe = ObserveAs::Deregister {
                        entity: name.to_string(),
                    };
                }
                self.start_query(
                    ep,
                    now,
                    query::ReplyTo::Client(to),
                    name,
                    query::QueryParams::from_request(req, overrides),
                )
            }
            (Code::GET, true) => self.send_reply(
                ep,
                now,
                &to,
                Reply::error(
                    Code::BAD_REQUEST,
                    "?fanout is for PUT, POST and DELETE; a GET is already sent to every member"
                        .into(),
                ),
            ),
            (_, true) => self.start_query(
                ep,
                now,
                query::ReplyTo::Client(to),
                name,
                query::QueryParams::from_request(req, overrides),
            ),
            (Code::DELETE, false) => self.delete(ep, now, to, req, name),
            _ => self.send_reply(
                ep,
                now,
                &to,
                Reply::error(
                    Code::METHOD_NOT_ALLOWED,
                    format!(
                        "{} /e/{name} needs ?fanout to reach the members; change the entity with PUT /e/{name}/profile",
                        req.method.name().unwrap_or("this method")
                    ),
                ),
            ),
        }
    }
}

/// What a request asks of the EM, for authorization: anything that changes nothing (and
/// what would be refused anyway, such as 4.05s) needs `read`.
fn action_of(req: &IncomingRequest) -> Action {
    let fanout = req
        .query
        .iter()
        .any(|q| q.split_once('=').map_or(q.as_str(), |(k, _)| k) == "fanout");
    let path: Vec<&str> = req.path.iter().map(String::as_str).collect();
    match (path.as_slice(), req.method) {
        (["e"], Code::POST) => Action::Create,
        (["e", _], Code::PUT | Code::POST | Code::DELETE) if fanout => Action::Fanout,
        (["e", _], Code::DELETE) => Action::Delete,
        (["e", _, "profile"], Code::PUT) => Action::Change,
        _ => Action::Read,
    }
}

/// The profile document `GET /e/<name>/profile` shows.
fn profile_document(e: &Entity) -> ProfileDocument {
    ProfileDocument {
        unjoined: e.unjoined.clone(),
        ..e.profile.document(&e.name, e.mcast_uri().as_deref())
    }
}

/// The profile's ETag: the same whatever format it is shown in.
fn profile_etag(doc: &ProfileDocument) -> [u8; 4] {
    respond::etag(&serde_json::to_vec(doc).unwrap_or_default())
}

fn unknown_entity(name: &str) -> Reply {
    Reply::error(Code::NOT_FOUND, format!("no entity named {name}"))
}

fn not_allowed(req: &IncomingRequest, allowed: &str) -> Reply {
    Reply::error(
        Code::METHOD_NOT_ALLOWED,
        format!(
            "{} not allowed on /{}; use {allowed}",
            req.method.name().unwrap_or("this method"),
            req.path.join("/")
        ),
    )
}

impl App for EntityManager {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.sources = Sources::of(cx);
        self.app = cx.app_id();
        self.start_maintenance(cx.endpoint, cx.now);
        self.timers.arm(cx);
        self.flush_log(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        self.sources = Sources::of(cx);
        self.app = cx.app_id();
        // Who sent a request is asked of the host before the engine is borrowed for the rest.
        let requester = match event {
            Event::Request(id) => {
                let port = self.config.authorities.first().map(|a| a.port());
                cx.endpoint
                    .request(id)
                    .map(|r| (Access::requester(cx, &r), ReachedAt::of(cx, &r, port)))
            }
            _ => None,
        };
        let (ep, now) = (&mut *cx.endpoint, cx.now);
        match event {
            Event::Request(id) => {
                if let Some(who) = requester {
                    self.on_request(ep, now, id, &who);
                }
            }
            Event::Response { id, key, last } => {
                let response = ep.response(key).map(|r| MemberResponse::from_received(&r));
                if self.member_answered(ep, now, id, response.clone(), last) {
                    return self.after_event(cx);
                }
                // Routes of ended exchanges are dropped before the task runs: the engine
                // may hand the same id to the next request the task sends.
                let task = if last {
                    self.routes.remove(&id)
                } else {
                    self.routes.get(&id).copied()
                };
                if let (Some(task), Some(response)) = (task, response) {
                    self.step(ep, now, task, Input::Response(id, response));
                } else if let Some(task) = task.filter(|_| last) {
                    self.step(ep, now, task, Input::Failed(id, Failure::ProtocolError));
                }
            }
            Event::Failed { id, .. } if self.member_lost(ep, now, id) => {}
            Event::Finished(id) if self.member_lost(ep, now, id) => {}
            Event::Failed { id, failure } => {
                if let Some(task) = self.routes.remove(&id) {
                    self.step(ep, now, task, Input::Failed(id, failure));
                }
            }
            Event::Finished(id) => {
                if let Some(task) = self.routes.remove(&id) {
                    self.step(ep, now, task, Input::Finished(id));
                }
            }
            Event::Timer(TIMER_MARK) => {
                self.timers.fired();
                for (task, tag) in self.timers.due(now) {
                    if task == STORE_POLL {
                        self.store_polled(ep, now);
                    } else {
                        self.step(ep, now, task, Input::Timer(tag));
                    }
                }
            }
            Event::Timer(_) | Event::Pong(_) => {}
        }
        self.after_event(cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_em_can_move_to_a_driver_thread() {
        fn send<T: Send + 'static>() {}
        send::<EntityManager>();
    }
}
