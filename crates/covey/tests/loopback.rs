//! Client and server in one process over loopback: methods, CON and NON, 4.04 and 4.05,
//! `/.well-known/core` filtering, separate responses, timeouts and shutdown.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use covey::{Client, Code, ContentFormat, Error, OptionNumber, Resource, Response, Server};

/// A test never waits longer than this for one exchange.
const LIMIT: Duration = Duration::from_secs(10);

/// How many `/slow` handlers have started.
static SLOW_STARTED: AtomicUsize = AtomicUsize::new(0);

/// Requests to `/together` asked at once; its handlers wait until that many run.
const TOGETHER: usize = 5;

fn store_resource(store: Arc<Mutex<Vec<u8>>>) -> Resource {
    let (get, put, post, delete) = (store.clone(), store.clone(), store.clone(), store);
    Resource::new()
        .rt("store")
        .ct(ContentFormat::TEXT_PLAIN)
        .get(move |_| {
            let body = get.lock().unwrap().clone();
            async move { Response::content(ContentFormat::TEXT_PLAIN, body) }
        })
        .put(move |req| {
            *put.lock().unwrap() = req.payload;
            async { Response::new(Code::CHANGED) }
        })
        .post(move |req| {
            post.lock().unwrap().extend_from_slice(&req.payload);
            async { Response::new(Code::CREATED).with_location_path("store/1") }
        })
        .delete(move |_| {
            delete.lock().unwrap().clear();
            async { Response::new(Code::DELETED) }
        })
}

fn start(bind: &str) -> Server {
    let store = Arc::new(Mutex::new(b"initial".to_vec()));
    Server::builder()
        .bind(bind.parse().unwrap())
        .resource("/store", store_resource(store))
        .resource(
            "/sensors/temp",
            Resource::new()
                .rt("temperature-c")
                .interface("sensor")
                .ct(ContentFormat::TEXT_PLAIN)
                .obs()
                .get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, "21.5") }),
        )
        .resource(
            "/slow",
            Resource::new().get(|_| async {
                SLOW_STARTED.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                Response::content(ContentFormat::TEXT_PLAIN, "slow")
            }),
        )
        .resource(
            "/together",
            // "together" once TOGETHER handlers run at once: they can only if each runs on a
            // task of its own; in sequence the first would wait in vain ("alone").
            Resource::new().get(|_| async {
                static BARRIER: OnceLock<tokio::sync::Barrier> = OnceLock::new();
                let barrier = BARRIER.get_or_init(|| tokio::sync::Barrier::new(TOGETHER));
                let text = match tokio::time::timeout(LIMIT / 2, barrier.wait()).await {
                    Ok(_) => "together",
                    Err(_) => "alone",
                };
                Response::content(ContentFormat::TEXT_PLAIN, text)
            }),
        )
        .resource(
            "/where",
            Resource::new().get(|req| async move {
                let text = format!("{} multicast={}", req.source, req.is_multicast());
                Response::content(ContentFormat::TEXT_PLAIN, text)
            }),
        )
        .start()
        .unwrap()
}

fn uri(server: &Server, path: &str) -> String {
    let addr: SocketAddr = server.local_addrs()[0];
    format!("coap://{addr}{path}")
}

#[tokio::test]
async fn methods_con_and_non() {
    let server = start("127.0.0.1:0");
    let client = Client::new().unwrap();
    for confirmable in [true, false] {
        let send = |m: Code, body: &'static [u8]| {
            client
                .request(m, uri(&server, "/store"))
                .payload(body)
                .confirmable(confirmable)
                .timeout(LIMIT)
        };
        let r = send(Code::PUT, b"one").await.unwrap();
        assert_eq!(r.code, Code::CHANGED);
        let r = send(Code::GET, b"").await.unwrap();
        assert_eq!((r.code, r.payload.as_slice()), (Code::CONTENT, &b"one"[..]));
        assert_eq!(r.content_format(), Some(ContentFormat::TEXT_PLAIN));
        assert_eq!(r.source, Some(server.local_addrs()[0]));
        let r = send(Code::POST, b"+two").await.unwrap();
        assert_eq!(r.code, Code::CREATED);
        let location: Vec<&[u8]> = r.options.get_all(OptionNumber::LOCATION_PATH).collect();
        assert_eq!(location, [&b"store"[..], b"1"]);
        let r = send(Code::GET, b"").await.unwrap();
        assert_eq!(r.payload, b"one+two");
        let r = send(Code::DELETE, b"").await.unwrap();
        assert_eq!(r.code, Code::DELETED);
        let r = send(Code::GET, b"").await.unwrap();
        assert!(r.payload.is_empty());
    }
    let stats = client.driver().stats().await.unwrap();
    assert_eq!(stats.total_retransmissions(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn one_shot_get_over_ipv6() {
    let server = start("[::1]:0");
    let r = Client::get(uri(&server, "/sensors/temp"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(r.payload_text(), "21.5");
}

#[tokio::test]
async fn dual_stack_server_answers_ipv4_and_sees_plain_ipv4() {
    let server = start("[::]:0");
    let port = server.local_addrs()[0].port();
    let r = Client::get(format!("coap://127.0.0.1:{port}/where"))
        .timeout(LIMIT)
        .await
        .unwrap();
    let text = r.payload_text();
    assert!(text.starts_with("127.0.0.1:"), "{text}");
    assert!(text.ends_with("multicast=false"), "{text}");
    let r = Client::get(format!("coap://[::1]:{port}/where"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert!(r.payload_text().starts_with("[::1]:"));
}

#[tokio::test]
async fn unknown_path_and_wrong_method() {
    let server = start("127.0.0.1:0");
    let client = Client::new().unwrap();
    let r = client
        .request(Code::GET, uri(&server, "/nope"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(r.code, Code::NOT_FOUND);
    let r = client
        .request(Code::POST, uri(&server, "/sensors/temp"))
        .non()
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(r.code, Code::METHOD_NOT_ALLOWED);
    let r = client
        .request(Code::DELETE, uri(&server, "/.well-known/core"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(r.code, Code::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn well_known_core_with_filters() {
    let server = start("127.0.0.1:0");
    let client = Client::new().unwrap();
    let all = client
        .request(Code::GET, uri(&server, "/.well-known/core"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(all.content_format(), Some(ContentFormat::LINK_FORMAT));
    let text = all.payload_text();
    assert!(text.contains(r#"</sensors/temp>;rt="temperature-c";if="sensor";ct=0;obs"#));
    assert!(text.contains("</store>"));
    let filtered = client
        .request(Code::GET, uri(&server, "/.well-known/core?rt=temp*"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(
        filtered.payload_text(),
        r#"</sensors/temp>;rt="temperature-c";if="sensor";ct=0;obs"#
    );
    let both = client
        .request(Code::GET, uri(&server, "/.well-known/core"))
        .query("if=sensor")
        .query("href=/store")
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!((both.code, both.payload.len()), (Code::CONTENT, 0));
    let bad = client
        .request(Code::GET, uri(&server, "/.well-known/core?=x"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(bad.code, Code::BAD_REQUEST);
}

#[tokio::test]
async fn async_handler_runs_on_its_own_task() {
    let server = start("127.0.0.1:0");
    // One client each: NSTART = 1 would serialise requests of one client to one server.
    let clients: Vec<Client> = (0..TOGETHER).map(|_| Client::new().unwrap()).collect();
    let requests = clients.iter().map(|client| {
        client
            .request(Code::GET, uri(&server, "/together"))
            .timeout(LIMIT)
            .send()
    });
    // Five handlers in parallel, not in sequence: each saw the others running.
    for r in futures_join(requests).await {
        assert_eq!(r.unwrap().payload_text(), "together");
    }
}

/// Runs futures concurrently (no futures crate needed for a handful).
async fn futures_join<F, T>(futures: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn timeout_against_a_silent_port() {
    // A bound socket that never answers.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let err = Client::get(format!("coap://{addr}/x"))
        .timeout(Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(a) if a == addr), "{err}");
}

#[tokio::test]
async fn bad_uris_are_errors() {
    for bad in [
        "http://x/",
        "coap://[::1/",
        "coaps://[::1]/",
        "/relative",
        "coap://h/#f",
    ] {
        let err = Client::get(bad).await.unwrap_err();
        assert!(matches!(err, Error::InvalidUri { .. }), "{bad}: {err}");
    }
}

#[tokio::test]
async fn ping_gets_a_pong() {
    let server = start("127.0.0.1:0");
    let client = Client::new().unwrap();
    let rtt = tokio::time::timeout(LIMIT, client.ping(&uri(&server, "")))
        .await
        .unwrap()
        .unwrap();
    assert!(rtt < LIMIT);
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish() {
    let server = start("127.0.0.1:0");
    let client = Client::new().unwrap();
    let before = SLOW_STARTED.load(Ordering::SeqCst);
    let pending = tokio::spawn(
        client
            .request(Code::GET, uri(&server, "/slow"))
            .timeout(LIMIT)
            .send(),
    );
    // In flight: the server's handler has started (bounded wait).
    tokio::time::timeout(LIMIT, async {
        while SLOW_STARTED.load(Ordering::SeqCst) == before {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the request reaches the server");
    tokio::time::timeout(LIMIT, client.shutdown())
        .await
        .unwrap();
    assert_eq!(pending.await.unwrap().unwrap().payload, b"slow");
    let after = client
        .request(Code::GET, uri(&server, "/slow"))
        .timeout(LIMIT)
        .await
        .unwrap_err();
    assert!(matches!(after, Error::Shutdown), "{after}");
}

#[tokio::test]
async fn a_multicast_request_nobody_answers_times_out() {
    let config = covey::Config {
        multicast_window_override: Some(covey_proto::Duration::from_millis(200)),
        ..covey::Config::default()
    };
    let client = Client::builder().config(config).build().unwrap();
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = tokio::time::timeout(
        LIMIT,
        client
            .request(Code::GET, format!("coap://224.0.1.187:{port}/x"))
            .send(),
    )
    .await
    .unwrap()
    .unwrap_err();
    // Not "the CoAP driver has shut down": the driver is fine, nobody answered.
    assert!(
        matches!(err, Error::Timeout(_) | Error::Unreachable { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn an_ipv4_mapped_address_reaches_the_ipv4_server() {
    let server = start("127.0.0.1:0");
    let port = server.local_addrs()[0].port();
    let response = Client::get(format!("coap://[::ffff:127.0.0.1]:{port}/store"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert!(response.code.is_success(), "{:?}", response.code);
}
