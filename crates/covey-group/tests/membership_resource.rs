//! The `/mc` App under the tokio driver: a CoAP client makes the server really join and
//! leave a group on its socket, lists the groups, and finds `/mc` in `/.well-known/core`.

use std::net::{IpAddr, Ipv6Addr};
use std::time::Duration;

use covey::multicast::interface_index;
use covey::{Client, Code, Server};
use covey_group::membership_resource::MC_LINK;
use covey_group::GroupMembershipResource;

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn membership_resource_joins_and_leaves_on_the_socket() {
    let lo = interface_index("lo").expect("loopback interface");
    let server = Server::builder()
        .bind("[::1]:0".parse().unwrap())
        .app(Box::new(GroupMembershipResource::new()))
        .app_link(MC_LINK)
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

#[tokio::test]
async fn mc_is_listed_in_well_known_core() {
    let server = Server::builder()
        .bind("[::1]:0".parse().unwrap())
        .app(Box::new(GroupMembershipResource::new()))
        .app_link(MC_LINK)
        .start()
        .unwrap();
    let uri = format!("coap://{}/.well-known/core", server.local_addrs()[0]);
    let links = Client::new()
        .unwrap()
        .request(Code::GET, &uri)
        .timeout(LIMIT)
        .await
        .unwrap();
    assert!(
        links.payload_text().contains("</mc>;rt=\"core.mc\""),
        "{}",
        links.payload_text()
    );
    let other = Client::new()
        .unwrap()
        .request(
            Code::GET,
            format!("coap://{}/nope", server.local_addrs()[0]),
        )
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(other.code, Code::NOT_FOUND);
}

/// The same App on a node of the in-memory network: `/mc` joins through the node's host.
#[test]
fn mc_joins_through_the_host_of_a_simulated_node() {
    use covey_proto::testing::{addr, Network};
    use covey_proto::{opt, Config, Event, Host, Request, RequestParams};
    let mut net = Network::new(std::time::Duration::from_millis(5), 0.0, 7);
    let member = net.add(
        addr(1),
        Config::default(),
        1,
        Some(Box::new(GroupMembershipResource::new())),
    );
    let client = net.add(addr(2), Config::default(), 2, None);
    let group: Ipv6Addr = "ff05::fd".parse().unwrap();
    let octets = group.octets();
    let options = [
        opt(covey_core::OptionNumber::URI_PATH, b"mc"),
        opt(covey_core::OptionNumber::URI_QUERY, b"act=add"),
    ];
    let request = Request {
        options: &options,
        payload: &octets,
        ..Request::new(Code::POST)
    };
    net.request(client, addr(1), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(2));
    assert_eq!(net.nodes[member].host.groups(), [IpAddr::V6(group)]);
    assert!(net.nodes[client]
        .events
        .iter()
        .any(|(_, e)| matches!(e, Event::Response { .. })));
}
