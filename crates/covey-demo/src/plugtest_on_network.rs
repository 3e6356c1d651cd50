//! The plugtest App on a node of the in-memory network, on virtual time: `/separate` and the
//! periodic change of `/obs-non` run from App timers, as under the tokio driver.

use std::time::Duration;

use covey_core::{Code, Message, MessageType, OptionNumber};
use covey_proto::testing::addr;
use covey_proto::{opt, Request, RequestParams};

use super::plugtest::{PlugtestApp, SEPARATE_DELAY};
use super::test_network::network;

const PERIOD: Duration = Duration::from_secs(2);

/// The types and codes of the datagrams node 0 sent, in order.
fn sent_by_server(net: &covey_proto::testing::Network) -> Vec<(MessageType, Code)> {
    net.sent_by(addr(1))
        .iter()
        .filter_map(|s| Message::parse(&s.bytes).ok())
        .map(|m| (m.message_type(), m.code()))
        .collect()
}

#[test]
fn separate_answers_after_an_empty_ack() {
    let (mut net, client, seen) = network(|clock| Box::new(PlugtestApp::new(PERIOD, clock)));
    let options = [opt(OptionNumber::URI_PATH, b"separate")];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    let asked_at = net.now;
    net.request(client, addr(1), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(3));
    let seen = seen.borrow();
    let [(at, code, _, body)] = seen.as_slice() else {
        panic!("one response expected: {seen:?}");
    };
    assert_eq!(*code, Code::CONTENT);
    assert_eq!(body, "Type: 0 (CON)\nCode: 1 (GET)\nSeparate response");
    assert!(*at - asked_at >= SEPARATE_DELAY, "{at:?}");
    assert_eq!(
        sent_by_server(&net),
        [
            (MessageType::Acknowledgement, Code::EMPTY),
            (MessageType::Confirmable, Code::CONTENT)
        ]
    );
}

#[test]
fn obs_non_notifies_once_per_period_with_non() {
    let (mut net, client, seen) = network(|clock| Box::new(PlugtestApp::new(PERIOD, clock)));
    let options = [
        opt(OptionNumber::OBSERVE, &[]),
        opt(OptionNumber::URI_PATH, b"obs-non"),
    ];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    net.request(client, addr(1), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_millis(4_500));
    let seen = seen.borrow();
    let values: Vec<&str> = seen.iter().map(|(_, _, _, text)| text.as_str()).collect();
    // The registration at :20.3, then the changes at :22.3 and :24.3.
    assert_eq!(
        values,
        [20, 22, 24].map(|s| format!("2023-11-14T22:13:{s}Z")),
        "{seen:?}"
    );
    assert_eq!(seen[2].0 - seen[1].0, PERIOD);
    // The client's address is not verified yet: the registration's answer goes as a CON
    // after an empty ACK, and once the client acknowledged it the notifications are NON.
    assert_eq!(
        sent_by_server(&net),
        [
            (MessageType::Acknowledgement, Code::EMPTY),
            (MessageType::Confirmable, Code::CONTENT),
            (MessageType::NonConfirmable, Code::CONTENT),
            (MessageType::NonConfirmable, Code::CONTENT)
        ]
    );
}

#[test]
fn silent_hosts_filling_separate_leave_room_for_a_verified_client() {
    let (mut net, client, seen) = network(|clock| Box::new(PlugtestApp::new(PERIOD, clock)));
    let options = [opt(OptionNumber::URI_PATH, b"separate")];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    // The client's first separate response is a CON it acknowledges: that verifies it.
    net.request(client, addr(1), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(3));
    assert_eq!(seen.borrow().len(), 1);
    // Four hosts in four /24s that never answer ask 16 times each (their share), as many
    // as the engine has App timers.
    for (h, host) in ["192.0.2.7", "198.51.100.7", "203.0.113.7", "192.0.3.7"]
        .iter()
        .enumerate()
    {
        for i in 0..16u16 {
            let source = format!("{host}:{}", 40_000 + i).parse().unwrap();
            let [high, low] = (0x4000 + h as u16 * 16 + i).to_be_bytes();
            let mut datagram = vec![0x42, 0x01, high, low, high, low, 0xb8];
            datagram.extend_from_slice(b"separate");
            net.inject(source, 0, &datagram);
        }
    }
    // The verified client is still served.
    net.request(client, addr(1), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_secs(3));
    let seen = seen.borrow();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1].1, Code::CONTENT, "{seen:?}");
}
