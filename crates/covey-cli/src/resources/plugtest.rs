//! The ETSI CoAP plugtest resource set (as served by Californium's and libcoap's plugtest
//! servers): `/test`, `/seg1/seg2/seg3`, `/query`, `/separate`, `/large*`, `/obs`,
//! `/obs-non`, `/location-query`, `/multi-format`, `/validate`, `/create1`, `/link1`..`/link3`
//! and `/path` with sub-resources.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use covey::server::ServerBuilder;
use covey::{Code, ContentFormat, OptionNumber, Request, Response};

use super::demo::large_text;
use covey::Resource;

/// How long `/separate` thinks: longer than the piggyback window, so the answer is separate.
pub const SEPARATE_DELAY: Duration = Duration::from_millis(1500);

/// A stored representation: payload, format and ETag.
#[derive(Debug, Clone, Default)]
struct Stored {
    payload: Vec<u8>,
    format: Option<ContentFormat>,
    etag: u32,
}

type Shared = Arc<Mutex<Stored>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Stored> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

fn text(body: impl Into<Vec<u8>>) -> Response {
    Response::content(ContentFormat::TEXT_PLAIN, body)
}

/// Adds the plugtest resources to `server`.
pub fn add(server: ServerBuilder) -> ServerBuilder {
    let server = add_core(server);
    let server = add_block(server);
    let server = add_observe(server);
    add_link(server)
}

fn add_core(server: ServerBuilder) -> ServerBuilder {
    let test = Arc::new(Mutex::new(Stored {
        payload: b"Type: 0 (CON)\nCode: 1 (GET)\n".to_vec(),
        format: Some(ContentFormat::TEXT_PLAIN),
        etag: 0,
    }));
    let (t_put, t_get) = (test.clone(), test);
    let validate = Arc::new(Mutex::new(Stored {
        payload: b"validate me".to_vec(),
        format: Some(ContentFormat::TEXT_PLAIN),
        etag: 1,
    }));
    let (v_get, v_put) = (validate.clone(), validate);
    let create1: Arc<Mutex<Option<Vec<u8>>>> = Arc::new(Mutex::new(None));
    let (c_put, c_get, c_del) = (create1.clone(), create1.clone(), create1);
    let locations = Arc::new(AtomicU32::new(0));
    server
        .resource(
            "/test",
            Resource::new()
                .title("Default test resource")
                .get(move |req| {
                    let s = lock(&t_get).clone();
                    async move {
                        let mut r = Response::new(Code::CONTENT).with_payload(describe(&req, &s.payload));
                        r = r.with_content_format(s.format.unwrap_or(ContentFormat::TEXT_PLAIN));
                        r
                    }
                })
                .put(move |req| {
                    let mut s = lock(&t_put);
                    s.payload = req.payload.clone();
                    s.format = req.content_format();
                    async { Response::new(Code::CHANGED) }
                })
                .post(|_| async { Response::new(Code::CREATED).with_location_path("location1/location2/location3") })
                .delete(|_| async { Response::new(Code::DELETED) }),
        )
        .resource(
            "/seg1/seg2/seg3",
            Resource::new()
                .title("Long path resource")
                .get(|_| async { text("Long path resource") }),
        )
        .resource(
            "/query",
            Resource::new().title("Resource accepting query parameters").get(|req| async move {
                let q: Vec<String> = req.options.queries().collect();
                text(format!("Queries: {}", q.join("&")))
            }),
        )
        .resource(
            "/separate",
            Resource::new().title("Resource which cannot be served immediately").get(|_| async {
                tokio::time::sleep(SEPARATE_DELAY).await;
                text("Separate response")
            }),
        )
        .resource(
            "/location-query",
            Resource::new().title("Perform POST transaction with responses containing several Location-Query options").post(|_| async {
                Response::new(Code::CREATED)
                    .with_option(OptionNumber::LOCATION_QUERY, "first=1")
                    .with_option(OptionNumber::LOCATION_QUERY, "second=2")
            }),
        )
        .resource(
            "/multi-format",
            Resource::new()
                .title("Resource that exists in different content formats (text/plain utf8 and application/xml)")
                .ct(ContentFormat::TEXT_PLAIN)
                .ct(ContentFormat::XML)
                .get(|req| async move {
                    match req.accept() {
                        None | Some(ContentFormat::TEXT_PLAIN) => text("Status: 0\n"),
                        Some(ContentFormat::XML) => Response::content(ContentFormat::XML, "<status>0</status>"),
                        Some(_) => Response::new(Code::NOT_ACCEPTABLE),
                    }
                }),
        )
        .resource(
            "/validate",
            Resource::new()
                .title("Resource which varies")
                .get(move |req| {
                    let s = lock(&v_get).clone();
                    async move {
                        let etag = s.etag.to_be_bytes().to_vec();
                        if req.options.get_all(OptionNumber::ETAG).any(|e| e == etag.as_slice()) {
                            return Response::new(Code::VALID).with_etag(etag);
                        }
                        text(s.payload).with_etag(etag)
                    }
                })
                .put(move |req| {
                    let mut s = lock(&v_put);
                    let current = s.etag.to_be_bytes();
                    let matches = req.options.get_all(OptionNumber::IF_MATCH).collect::<Vec<_>>();
                    if !matches.is_empty() && !matches.iter().any(|m| m.is_empty() || *m == current) {
                        return std::future::ready(Response::new(Code::PRECONDITION_FAILED));
                    }
                    s.payload = req.payload.clone();
                    s.format = req.content_format();
                    s.etag = s.etag.wrapping_add(1);
                    let etag = s.etag.to_be_bytes().to_vec();
                    std::future::ready(Response::new(Code::CHANGED).with_etag(etag))
                }),
        )
        .resource(
            "/create1",
            Resource::new()
                .title("Resource which does not exist yet (to perform atomic PUT)")
                .put(move |req| {
                    let mut s = c_put.lock().unwrap_or_else(|e| e.into_inner());
                    let exists = s.is_some();
                    let r = if exists && req.options.contains(OptionNumber::IF_NONE_MATCH) {
                        Response::new(Code::PRECONDITION_FAILED)
                    } else {
                        *s = Some(req.payload.clone());
                        Response::new(if exists { Code::CHANGED } else { Code::CREATED })
                    };
                    std::future::ready(r)
                })
                .get(move |_| {
                    let s = c_get.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    std::future::ready(match s {
                        Some(body) => text(body),
                        None => Response::new(Code::NOT_FOUND),
                    })
                })
                .delete(move |_| {
                    *c_del.lock().unwrap_or_else(|e| e.into_inner()) = None;
                    std::future::ready(Response::new(Code::DELETED))
                }),
        )
        .subtree(
            "/location1",
            Resource::new().hidden().any(move |_| {
                locations.fetch_add(1, Ordering::Relaxed);
                async { Response::new(Code::DELETED) }
            }),
        )
}

/// The `/test` body: what was asked, then the stored text.
fn describe(req: &Request, stored: &[u8]) -> Vec<u8> {
    let kind = if req.confirmable {
        "0 (CON)"
    } else {
        "1 (NON)"
    };
    let name = req.method.name().unwrap_or("?");
    let mut out = format!("Type: {kind}\nCode: {} ({name})\n", req.method.0).into_bytes();
    if !stored.starts_with(b"Type: ") {
        out.extend_from_slice(stored);
    }
    out
}

fn add_block(server: ServerBuilder) -> ServerBuilder {
    let update = Arc::new(Mutex::new(Stored {
        payload: large_text(1280).into_bytes(),
        format: Some(ContentFormat::TEXT_PLAIN),
        etag: 0,
    }));
    let (u_get, u_put) = (update.clone(), update);
    let created = Arc::new(AtomicU32::new(0));
    server
        .resource(
            "/large",
            Resource::new()
                .title("Large resource")
                .rt("block")
                .sz(1280)
                .get(|_| async { text(large_text(1280)) }),
        )
        .resource(
            "/large-update",
            Resource::new()
                .title("Large resource that can be updated using PUT method")
                .rt("block")
                .sz(1280)
                .get(move |_| {
                    let s = lock(&u_get).clone();
                    let mut r = Response::new(Code::CONTENT).with_payload(s.payload);
                    if let Some(cf) = s.format {
                        r = r.with_content_format(cf);
                    }
                    std::future::ready(r)
                })
                .put(move |req| {
                    let mut s = lock(&u_put);
                    s.payload = req.payload.clone();
                    s.format = req.content_format();
                    std::future::ready(Response::new(Code::CHANGED))
                }),
        )
        .resource(
            "/large-create",
            Resource::new()
                .title("Large resource that can be created using POST method")
                .rt("block")
                .post(move |_| {
                    let n = created.fetch_add(1, Ordering::Relaxed) + 1;
                    std::future::ready(
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
                .post(|req| async move {
                    let mut body = req.payload.clone();
                    body.make_ascii_uppercase();
                    Response::new(Code::CHANGED)
                        .with_content_format(
                            req.content_format().unwrap_or(ContentFormat::TEXT_PLAIN),
                        )
                        .with_payload(body)
                }),
        )
}

fn add_observe(server: ServerBuilder) -> ServerBuilder {
    server
        .resource(
            "/obs",
            Resource::new()
                .title("Observable resource which changes every 5 seconds")
                .rt("observe")
                .obs()
                .ct(ContentFormat::TEXT_PLAIN)
                .get(|_| async { text(super::utc_now()) }),
        )
        .resource(
            "/obs-non",
            Resource::new()
                .title("Observable resource which changes every 5 seconds (NON notifications)")
                .rt("observe")
                .obs()
                .ct(ContentFormat::TEXT_PLAIN)
                .get(|_| async { text(super::utc_now()) }),
        )
}

fn add_link(server: ServerBuilder) -> ServerBuilder {
    let sub = |name: &'static str| {
        Resource::new()
            .title(format!("Hierarchical link description sub-resource {name}"))
            .ct(ContentFormat::TEXT_PLAIN)
            .get(move |_| async move { text(format!("sub-resource {name}")) })
    };
    server
        .resource(
            "/link1",
            Resource::new()
                .rt("Type1")
                .rt("Type2")
                .interface("If1")
                .get(|_| async { text("link1") }),
        )
        .resource(
            "/link2",
            Resource::new()
                .rt("Type2")
                .rt("Type3")
                .interface("If2")
                .get(|_| async { text("link2") }),
        )
        .resource(
            "/link3",
            Resource::new()
                .rt("Type1")
                .rt("Type3")
                .interface("foo")
                .get(|_| async { text("link3") }),
        )
        .resource(
            "/path",
            Resource::new()
                .title("Hierarchical link description entry")
                .ct(ContentFormat::LINK_FORMAT)
                .get(|_| async {
                    Response::content(
                        ContentFormat::LINK_FORMAT,
                        "</path/sub1>,</path/sub2>,</path/sub3>",
                    )
                }),
        )
        .resource("/path/sub1", sub("1"))
        .resource("/path/sub2", sub("2"))
        .resource("/path/sub3", sub("3"))
}
