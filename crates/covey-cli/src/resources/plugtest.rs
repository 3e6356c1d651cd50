//! The ETSI CoAP plugtest resource set (as served by Californium's and libcoap's plugtest
//! servers): `/test`, `/seg1/seg2/seg3`, `/query`, `/separate`, `/large*`, `/obs`,
//! `/obs-non`, `/location-query`, `/multi-format`, `/validate`, `/create1`, `/link1`..`/link3`
//! and `/path` with sub-resources.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use covey::server::{NotificationType, ServerBuilder};
use covey::{Code, ContentFormat, OptionNumber, Request, Resource, Response, Server};
use tokio::sync::Notify;

use super::demo::large_text;

/// How long `/separate` thinks: longer than the piggyback window, so the answer is separate.
pub const SEPARATE_DELAY: Duration = Duration::from_millis(1500);

/// Size of `/large` and the initial `/large-update`: more than one 1024-byte block.
pub const LARGE_SIZE: usize = 1280;

/// Representations `/large-create` keeps (the oldest is forgotten first).
const MAX_CREATED: usize = 8;

/// The observable plugtest resources and how they send notifications.
const OBSERVABLE: [(&str, NotificationType); 2] = [
    ("/obs", NotificationType::Confirmable),
    ("/obs-non", NotificationType::NonConfirmable),
];

/// A stored representation: payload, format and ETag.
#[derive(Debug, Clone, Default)]
struct Stored {
    payload: Vec<u8>,
    format: Option<ContentFormat>,
    etag: u32,
}

type Shared<T> = Arc<Mutex<T>>;

fn shared<T>(value: T) -> Shared<T> {
    Arc::new(Mutex::new(value))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn text(body: impl Into<Vec<u8>>) -> Response {
    Response::content(ContentFormat::TEXT_PLAIN, body)
}

fn ready(response: Response) -> std::future::Ready<Response> {
    std::future::ready(response)
}

/// A stored payload answered with its own Content-Format (none if it came without one).
fn stored_content(code: Code, s: &Stored) -> Response {
    let mut r = Response::new(code).with_payload(s.payload.clone());
    if let Some(cf) = s.format {
        r = r.with_content_format(cf);
    }
    r
}

/// What happened to one observable resource since the notifier last looked.
#[derive(Debug, Default, Clone, Copy)]
struct Pending {
    /// The observations end with this error (4.04 after DELETE, 4.06 after a format change).
    ended: Option<Code>,
    /// The representation changed: notify every observer with it.
    updated: bool,
}

/// Changes the observable resources' handlers report to the notifier; coalesced per
/// resource, so a flood of PUTs costs no memory.
#[derive(Debug, Default)]
struct Changes {
    pending: Mutex<[Pending; OBSERVABLE.len()]>,
    wake: Notify,
}

impl Changes {
    fn report(&self, resource: usize, ended: Option<Code>, updated: bool) {
        {
            let mut pending = lock(&self.pending);
            let p = &mut pending[resource];
            p.ended = p.ended.or(ended);
            p.updated |= updated;
        }
        self.wake.notify_one();
    }

    fn take(&self) -> [Pending; OBSERVABLE.len()] {
        std::mem::take(&mut *lock(&self.pending))
    }
}

/// The running side of the plugtest resources: the `/obs` clock and the notifications for
/// changes made through PUT and DELETE.
#[derive(Debug)]
pub struct Plugtest {
    changes: Arc<Changes>,
    period: Duration,
}

impl Plugtest {
    /// Sends the notifications: `/obs` and `/obs-non` change every period, and observers
    /// hear of every PUT (new state) and DELETE (4.04) at once.
    pub async fn run(self, server: Server) {
        // The first change is one period from now, not at once.
        let first = tokio::time::Instant::now() + self.period;
        let mut tick = tokio::time::interval_at(first, self.period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let changes = tokio::select! {
                _ = tick.tick() => {
                    // The periodic change, with whatever handlers reported meanwhile.
                    let mut changes = self.changes.take();
                    for c in &mut changes {
                        c.updated = true;
                    }
                    changes
                }
                () = self.changes.wake.notified() => self.changes.take(),
            };
            for ((path, _), change) in OBSERVABLE.iter().zip(changes) {
                let mut sent = Ok(0);
                if let Some(code) = change.ended {
                    sent = server.notify_with(path, Response::new(code)).await;
                }
                if change.updated {
                    sent = sent.and(server.notify(path).await);
                }
                if let Err(e) = sent {
                    tracing::debug!("plugtest notifications stop: {e}");
                    return;
                }
            }
        }
    }
}

/// Adds the plugtest resources to `server`; `/obs` and `/obs-non` change every `period`
/// once the returned [`Plugtest`] runs.
pub fn add(server: ServerBuilder, period: Duration) -> (ServerBuilder, Plugtest) {
    let changes = Arc::new(Changes::default());
    let server = add_core(server);
    let server = add_block(server);
    let server = add_observe(server, period, &changes);
    let server = add_link(server);
    (server, Plugtest { changes, period })
}

fn add_core(server: ServerBuilder) -> ServerBuilder {
    let test = shared(Stored {
        payload: Vec::new(),
        format: Some(ContentFormat::TEXT_PLAIN),
        etag: 0,
    });
    let (t_put, t_get) = (test.clone(), test);
    let server = server
        .resource(
            "/test",
            Resource::new()
                .title("Default test resource")
                .ct(ContentFormat::TEXT_PLAIN)
                .get(move |req| {
                    let s = lock(&t_get).clone();
                    ready(text(describe(&req, &s.payload)))
                })
                .put(move |req| {
                    let mut s = lock(&t_put);
                    s.payload = req.payload.clone();
                    s.format = req.content_format();
                    ready(Response::new(Code::CHANGED))
                })
                .post(|_| {
                    ready(
                        Response::new(Code::CREATED)
                            .with_location_path("location1/location2/location3"),
                    )
                })
                .delete(|_| ready(Response::new(Code::DELETED))),
        )
        .resource(
            "/seg1/seg2/seg3",
            Resource::new()
                .title("Long path resource")
                .ct(ContentFormat::TEXT_PLAIN)
                .get(|_| ready(text("Long path resource"))),
        )
        .resource(
            "/query",
            Resource::new()
                .title("Resource accepting query parameters")
                .ct(ContentFormat::TEXT_PLAIN)
                .get(|req| {
                    let q: Vec<String> = req.options.queries().collect();
                    ready(text(format!("Queries: {}", q.join("&"))))
                }),
        )
        .resource(
            "/separate",
            Resource::new()
                .title("Resource which cannot be served immediately")
                .ct(ContentFormat::TEXT_PLAIN)
                .get(|req| async move {
                    tokio::time::sleep(SEPARATE_DELAY).await;
                    text(describe(&req, b"Separate response"))
                }),
        )
        .resource(
            "/location-query",
            Resource::new()
                .title("Perform POST transaction with responses containing several Location-Query options")
                .post(|_| {
                    ready(
                        Response::new(Code::CREATED)
                            .with_option(OptionNumber::LOCATION_QUERY, "first=1")
                            .with_option(OptionNumber::LOCATION_QUERY, "second=2"),
                    )
                }),
        )
        .subtree(
            "/location1",
            Resource::new()
                .hidden()
                .get(|req| ready(text(format!("Created by POST /test: {}", req.path()))))
                .delete(|_| ready(Response::new(Code::DELETED))),
        )
        .resource(
            "/multi-format",
            Resource::new()
                .title("Resource that exists in different content formats (text/plain utf8 and application/xml)")
                .ct(ContentFormat::TEXT_PLAIN)
                .ct(ContentFormat::XML)
                .get(|req| {
                    ready(match req.accept() {
                        None | Some(ContentFormat::TEXT_PLAIN) => text("Status: 0\n"),
                        Some(ContentFormat::XML) => {
                            Response::content(ContentFormat::XML, "<status>0</status>")
                        }
                        Some(_) => Response::new(Code::NOT_ACCEPTABLE),
                    })
                }),
        );
    add_conditional(server)
}

/// `/validate` (ETag, If-Match) and `/create1` (If-None-Match).
fn add_conditional(server: ServerBuilder) -> ServerBuilder {
    let validate = shared(Stored {
        payload: b"validate me".to_vec(),
        format: Some(ContentFormat::TEXT_PLAIN),
        etag: 1,
    });
    let (v_get, v_put) = (validate.clone(), validate);
    let create1: Shared<Option<Stored>> = shared(None);
    let (c_put, c_get, c_del) = (create1.clone(), create1.clone(), create1);
    server
        .resource(
            "/validate",
            Resource::new()
                .title("Resource which varies")
                .ct(ContentFormat::TEXT_PLAIN)
                .get(move |req| {
                    let s = lock(&v_get).clone();
                    let etag = s.etag.to_be_bytes();
                    // RFC 7252 §5.10.6.2: a current ETag in the request makes it 2.03 Valid.
                    let valid = req
                        .options
                        .get_all(OptionNumber::ETAG)
                        .any(|e| e == etag.as_slice());
                    ready(if valid {
                        Response::new(Code::VALID).with_etag(etag.to_vec())
                    } else {
                        stored_content(Code::CONTENT, &s).with_etag(etag.to_vec())
                    })
                })
                .put(move |req| {
                    let mut s = lock(&v_put);
                    let current = s.etag.to_be_bytes();
                    // RFC 7252 §5.10.8: If-Match (empty: any) and If-None-Match (the
                    // resource exists, so it always fails).
                    let mut matches = req.options.get_all(OptionNumber::IF_MATCH).peekable();
                    let if_match_fails = matches.peek().is_some()
                        && !matches.any(|m| m.is_empty() || m == current.as_slice());
                    if if_match_fails || req.options.contains(OptionNumber::IF_NONE_MATCH) {
                        return ready(Response::new(Code::PRECONDITION_FAILED));
                    }
                    s.payload = req.payload.clone();
                    s.format = req.content_format();
                    s.etag = s.etag.wrapping_add(1);
                    ready(Response::new(Code::CHANGED).with_etag(s.etag.to_be_bytes().to_vec()))
                }),
        )
        .resource(
            "/create1",
            Resource::new()
                .title("Resource which does not exist yet (to perform atomic PUT)")
                .put(move |req| {
                    let mut s = lock(&c_put);
                    let exists = s.is_some();
                    if exists && req.options.contains(OptionNumber::IF_NONE_MATCH) {
                        return ready(Response::new(Code::PRECONDITION_FAILED));
                    }
                    if !exists && req.options.contains(OptionNumber::IF_MATCH) {
                        return ready(Response::new(Code::PRECONDITION_FAILED));
                    }
                    *s = Some(Stored {
                        payload: req.payload.clone(),
                        format: req.content_format(),
                        etag: 0,
                    });
                    ready(Response::new(if exists {
                        Code::CHANGED
                    } else {
                        Code::CREATED
                    }))
                })
                .get(move |_| {
                    ready(match &*lock(&c_get) {
                        Some(s) => stored_content(Code::CONTENT, s),
                        None => Response::new(Code::NOT_FOUND),
                    })
                })
                .delete(move |_| {
                    *lock(&c_del) = None;
                    ready(Response::new(Code::DELETED))
                }),
        )
}

/// The `/test` and `/separate` body: the request's type and code, then `extra`.
fn describe(req: &Request, extra: &[u8]) -> Vec<u8> {
    let kind = if req.confirmable {
        "0 (CON)"
    } else {
        "1 (NON)"
    };
    let name = req.method.name().unwrap_or("?");
    let mut out = format!("Type: {kind}\nCode: {} ({name})\n", req.method.0).into_bytes();
    out.extend_from_slice(extra);
    out
}

fn add_block(server: ServerBuilder) -> ServerBuilder {
    let update = shared(Stored {
        payload: large_text(LARGE_SIZE).into_bytes(),
        format: Some(ContentFormat::TEXT_PLAIN),
        etag: 0,
    });
    let (u_get, u_put) = (update.clone(), update);
    let created: Shared<VecDeque<(u32, Stored)>> = shared(VecDeque::new());
    let (cr_post, cr_get) = (created.clone(), created);
    let next_created = AtomicU32::new(1);
    server
        .resource(
            "/large",
            Resource::new()
                .title("Large resource")
                .rt("block")
                .ct(ContentFormat::TEXT_PLAIN)
                .sz(LARGE_SIZE as u32)
                .get(|_| ready(text(large_text(LARGE_SIZE)))),
        )
        .resource(
            "/large-update",
            Resource::new()
                .title("Large resource that can be updated using PUT method")
                .rt("block")
                .ct(ContentFormat::TEXT_PLAIN)
                .sz(LARGE_SIZE as u32)
                .get(move |_| ready(stored_content(Code::CONTENT, &lock(&u_get))))
                .put(move |req| {
                    let mut s = lock(&u_put);
                    s.payload = req.payload.clone();
                    s.format = req.content_format();
                    ready(Response::new(Code::CHANGED))
                }),
        )
        // What POST /large-create made, at /large-create/N (added before the exact route,
        // which wins for /large-create itself).
        .subtree(
            "/large-create",
            Resource::new().hidden().get(move |req| {
                let wanted = req
                    .path_segments()
                    .get(1)
                    .and_then(|n| n.parse::<u32>().ok());
                let created = lock(&cr_get);
                let found = created.iter().find(|(n, _)| Some(*n) == wanted);
                ready(match found {
                    Some((_, s)) => stored_content(Code::CONTENT, s),
                    None => Response::new(Code::NOT_FOUND),
                })
            }),
        )
        .resource(
            "/large-create",
            Resource::new()
                .title("Large resource that can be created using POST method")
                .rt("block")
                .post(move |req| {
                    let n = next_created.fetch_add(1, Ordering::Relaxed);
                    let mut created = lock(&cr_post);
                    if created.len() >= MAX_CREATED {
                        created.pop_front();
                    }
                    created.push_back((
                        n,
                        Stored {
                            payload: req.payload.clone(),
                            format: req.content_format(),
                            etag: 0,
                        },
                    ));
                    ready(
                        Response::new(Code::CREATED)
                            .with_location_path(&format!("large-create/{n}")),
                    )
                }),
        )
        .resource(
            "/large-post",
            Resource::new()
                .title("Handle POST with two-way blockwise transfer")
                .rt("block")
                .post(|req| {
                    let mut body = req.payload.clone();
                    body.make_ascii_uppercase();
                    ready(
                        Response::new(Code::CHANGED)
                            .with_content_format(
                                req.content_format().unwrap_or(ContentFormat::TEXT_PLAIN),
                            )
                            .with_payload(body),
                    )
                }),
        )
}

/// What `/obs` and `/obs-non` hold: the time, until a client PUTs something else.
#[derive(Debug, Default)]
struct Observed {
    stored: Option<Stored>,
}

impl Observed {
    fn format(&self) -> ContentFormat {
        self.stored
            .as_ref()
            .and_then(|s| s.format)
            .unwrap_or(ContentFormat::TEXT_PLAIN)
    }
}

fn add_observe(server: ServerBuilder, period: Duration, changes: &Arc<Changes>) -> ServerBuilder {
    // Fresh until shortly after the next periodic notification is due (RFC 7641 §4.3.1).
    let max_age = period.as_secs_f64().ceil().min(f64::from(u32::MAX - 1)) as u32 + 1;
    let mut server = server;
    for (index, (path, kind)) in OBSERVABLE.into_iter().enumerate() {
        let what = match kind {
            NotificationType::NonConfirmable => "NON notifications",
            _ => "CON notifications",
        };
        let state = shared(Observed::default());
        let (get, put, delete) = (state.clone(), state.clone(), state);
        let (put_changes, delete_changes) = (changes.clone(), changes.clone());
        let resource = Resource::new()
            .title(format!(
                "Observable resource which changes every {} seconds ({what})",
                period.as_secs_f64()
            ))
            .rt("observe")
            .obs()
            .ct(ContentFormat::TEXT_PLAIN)
            .notifications(kind)
            .get(move |req| {
                let state = lock(&get);
                let format = state.format();
                if req.accept().is_some_and(|a| a != format) {
                    return ready(Response::new(Code::NOT_ACCEPTABLE));
                }
                let r = match &state.stored {
                    Some(s) => stored_content(Code::CONTENT, s),
                    None => text(super::utc_now()),
                };
                ready(r.with_max_age(max_age))
            })
            .put(move |req| {
                let Some(format) = req.content_format() else {
                    return ready(Response::error(Code::BAD_REQUEST, "Content-Format not set"));
                };
                let mut state = lock(&put);
                // Observers asked for the old format: their observations end (4.06).
                let ended = (format != state.format()).then_some(Code::NOT_ACCEPTABLE);
                state.stored = Some(Stored {
                    payload: req.payload.clone(),
                    format: Some(format),
                    etag: 0,
                });
                put_changes.report(index, ended, true);
                ready(Response::new(Code::CHANGED))
            })
            .delete(move |_| {
                // Observers learn that the resource is gone (4.04) and are removed; the
                // resource then starts over with the time.
                lock(&delete).stored = None;
                delete_changes.report(index, Some(Code::NOT_FOUND), false);
                ready(Response::new(Code::DELETED))
            });
        server = server.resource(path, resource);
    }
    server
}

fn add_link(server: ServerBuilder) -> ServerBuilder {
    let sub = |name: &'static str| {
        Resource::new()
            .title(format!("Hierarchical link description sub-resource {name}"))
            .ct(ContentFormat::TEXT_PLAIN)
            .get(move |_| ready(text(format!("sub-resource {name}"))))
    };
    let link = |n: u8, types: [&str; 2], interface: &str| {
        Resource::new()
            .rt(types[0])
            .rt(types[1])
            .interface(interface)
            .get(move |_| ready(text(format!("link{n}"))))
    };
    server
        .resource("/link1", link(1, ["Type1", "Type2"], "If1"))
        .resource("/link2", link(2, ["Type2", "Type3"], "If2"))
        .resource("/link3", link(3, ["Type1", "Type3"], "foo"))
        .resource(
            "/path",
            Resource::new()
                .title("Hierarchical link description entry")
                .ct(ContentFormat::LINK_FORMAT)
                .get(|_| {
                    ready(Response::content(
                        ContentFormat::LINK_FORMAT,
                        "</path/sub1>;ct=0,</path/sub2>;ct=0,</path/sub3>;ct=0",
                    ))
                }),
        )
        .resource("/path/sub1", sub("1"))
        .resource("/path/sub2", sub("2"))
        .resource("/path/sub3", sub("3"))
}
