//! The driver's busy poll and batched send: a busy-polling server on a one-thread runtime
//! still runs its spawned handlers and other tasks while it spins, answers bursts of
//! requests in batches, and goes to sleep again when traffic stops.

use std::time::Duration;

use covey::{Client, Code, ContentFormat, Resource, Response, Server};

/// A test never waits longer than this for one exchange.
const LIMIT: Duration = Duration::from_secs(10);

fn start() -> Server {
    Server::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .busy_poll(Duration::from_millis(20))
        .resource(
            "/fast",
            Resource::new().get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, "f") }),
        )
        .resource(
            "/slow",
            Resource::new().get(|_| async {
                // Not ready at the first poll: the handler runs as a spawned task.
                tokio::time::sleep(Duration::from_millis(5)).await;
                Response::content(ContentFormat::TEXT_PLAIN, "s")
            }),
        )
        .start()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn spawned_handlers_and_timers_run_while_the_driver_spins() {
    let server = start();
    let addr = server.local_addrs()[0];
    let client = Client::new().unwrap();
    for _ in 0..20 {
        // A fast request starts the spin; the slow one must still finish on the same thread.
        let fast = client
            .request(Code::GET, format!("coap://{addr}/fast"))
            .send();
        let slow = client
            .request(Code::GET, format!("coap://{addr}/slow"))
            .send();
        let (fast, slow) = tokio::time::timeout(LIMIT, async { tokio::join!(fast, slow) })
            .await
            .expect("answered while spinning");
        assert_eq!(fast.unwrap().payload, b"f");
        assert_eq!(slow.unwrap().payload, b"s");
    }
    // A timer of another task fires on time although the driver spins.
    let _ = client
        .request(Code::GET, format!("coap://{addr}/fast"))
        .send()
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        tokio::time::sleep(Duration::from_millis(2)),
    )
    .await
    .expect("the timer fires although the driver spins");
    server.shutdown().await;
}

#[tokio::test]
async fn bursts_are_answered_completely() {
    let server = start();
    let addr = server.local_addrs()[0];
    // NSTART 64, so the requests reach the server as bursts.
    let mut config = covey::Config::default();
    config.transmission.nstart = 64;
    let client = Client::builder().config(config).build().unwrap();
    for confirmable in [true, false] {
        let requests = (0..60).map(|_| {
            let client = client.clone();
            let uri = format!("coap://{addr}/fast");
            tokio::spawn(async move {
                let mut request = client.request(Code::GET, uri);
                if !confirmable {
                    request = request.non();
                }
                tokio::time::timeout(LIMIT, request.send()).await
            })
        });
        let requests: Vec<_> = requests.collect();
        for r in requests {
            let response = r.await.unwrap().expect("in time").expect("answered");
            assert_eq!(response.code, Code::CONTENT);
        }
    }
    let stats = server.driver().stats().await.unwrap();
    assert!(stats.transmissions >= 120, "{stats:?}");
    server.shutdown().await;
}
