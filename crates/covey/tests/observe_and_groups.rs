//! Observe over loopback (registration, notifications, polite cancellation) and the `/mc`
//! group-membership resource really joining and leaving a group on the socket.

use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use covey::multicast::interface_index;
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

#[tokio::test]
async fn membership_resource_joins_and_leaves_on_the_socket() {
    let lo = interface_index("lo").expect("loopback interface");
    let server = Server::builder()
        .bind("[::1]:0".parse().unwrap())
        .membership_resource(true)
        .multicast_interface(lo)
        .max_groups(1)
        .start()
        .unwrap();
    let base = format!("coap://{}/mc", server.local_addrs()[0]);
    let client = Client::new().unwrap();
    let group: Ipv6Addr = "ff02::1:fd".parse().unwrap();
    let post = |act: &str, body: Vec<u8>| {
        client
            .request(Code::POST, format!("{base}?act={act}"))
            .payload(body)
            .timeout(LIMIT)
    };
    let r = post("add", group.octets().to_vec()).await.unwrap();
    assert_eq!(r.code, Code::CHANGED, "{}", r.payload_text());
    assert_eq!(server.membership().groups()[0].address, IpAddr::V6(group));
    // The kernel lists the membership on the loopback interface.
    let igmp6 = std::fs::read_to_string("/proc/net/igmp6").unwrap_or_default();
    assert!(
        igmp6.contains("ff0200000000000000000000000100fd"),
        "{igmp6}"
    );
    let listed = client
        .request(Code::GET, &base)
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(listed.payload_text(), "ff02::1:fd\n");
    let full = post(
        "add",
        "ff02::1:fe".parse::<Ipv6Addr>().unwrap().octets().to_vec(),
    )
    .await
    .unwrap();
    assert_eq!(full.code, Code::SERVICE_UNAVAILABLE);
    let bad = post("add", vec![1, 2, 3]).await.unwrap();
    assert_eq!(bad.code, Code::BAD_REQUEST);
    let unicast = post("add", Ipv6Addr::LOCALHOST.octets().to_vec())
        .await
        .unwrap();
    assert_eq!(unicast.code, Code::BAD_REQUEST);
    let r = post("del", group.octets().to_vec()).await.unwrap();
    assert_eq!(r.code, Code::DELETED);
    let r = post("del", group.octets().to_vec()).await.unwrap();
    assert_eq!(r.code, Code::NOT_FOUND);
    let r = post("nope", group.octets().to_vec()).await.unwrap();
    assert_eq!(r.code, Code::BAD_REQUEST);
    assert!(server.membership().groups().is_empty());
    let igmp6 = std::fs::read_to_string("/proc/net/igmp6").unwrap_or_default();
    assert!(!igmp6.contains("ff0200000000000000000000000100fd"));
}
