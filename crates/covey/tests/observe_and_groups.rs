//! Observe over loopback (registration, notifications, polite cancellation) and the `/mc`
//! group-membership resource really joining and leaving a group on the socket.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use covey::{Client, Code, ContentFormat, Resource, Response, Server};

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn notifications_until_polite_cancel() {
    let counter = Arc::new(AtomicU32::new(0));
    let c = counter.clone();
    let server = Server::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .resource(
            "/counter",
            Resource::new().obs().get(move |_| {
                let n = c.load(Ordering::Relaxed);
                async move { Response::content(ContentFormat::TEXT_PLAIN, n.to_string()) }
            }),
        )
        .start()
        .unwrap();
    let uri = format!("coap://{}/counter", server.local_addrs()[0]);
    let client = Client::new().unwrap();
    let mut stream = client.request(Code::GET, &uri).observe().await.unwrap();
    let first = tokio::time::timeout(LIMIT, stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.payload, b"0");
    assert!(first.observe().is_some(), "registered: {first:?}");
    for n in 1..=2u32 {
        counter.store(n, Ordering::Relaxed);
        assert_eq!(server.notify("/counter").await.unwrap(), 1);
        let note = tokio::time::timeout(LIMIT, stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(note.payload, n.to_string().as_bytes());
    }
    let last = tokio::time::timeout(LIMIT, stream.cancel())
        .await
        .unwrap()
        .expect("final response");
    assert_eq!(last.code, Code::CONTENT);
    assert!(last.observe().is_none(), "deregistered: {last:?}");
    assert_eq!(server.notify("/counter").await.unwrap(), 0);
    assert!(server.notify("/nope").await.is_err());
}
