//! The demo App on a node of the in-memory network, on virtual time: the code `covey serve`
//! hosts under the tokio driver answers and notifies the same here.

use std::time::Duration;

use covey_core::{Code, ContentFormat, OptionNumber};
use covey_proto::testing::addr;
use covey_proto::{opt, Request, RequestParams};

use super::demo::DemoApp;
use super::test_network::network;

#[test]
fn the_sensor_answers_json_when_accept_asks_for_it() {
    let (mut net, client, seen) = network(|clock| Box::new(DemoApp::new(clock)));
    let json = [50u8];
    let options = [
        opt(OptionNumber::URI_PATH, b"sensors"),
        opt(OptionNumber::URI_PATH, b"temp"),
        opt(OptionNumber::ACCEPT, &json),
    ];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    net.request(client, addr(1), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_millis(100));
    let seen = seen.borrow();
    let [(_, code, format, payload)] = seen.as_slice() else {
        panic!("one response expected: {seen:?}");
    };
    assert_eq!(*code, Code::CONTENT);
    assert_eq!(*format, Some(ContentFormat::JSON));
    let reading: f64 = payload.parse().expect("a JSON number");
    assert!((19.0..25.0).contains(&reading), "{payload}");
}

#[test]
fn time_observers_get_a_new_value_once_per_virtual_second() {
    let (mut net, client, seen) = network(|clock| Box::new(DemoApp::new(clock)));
    let options = [
        opt(OptionNumber::OBSERVE, &[]),
        opt(OptionNumber::URI_PATH, b"time"),
    ];
    let request = Request {
        options: &options,
        ..Request::new(Code::GET)
    };
    net.request(client, addr(1), &request, RequestParams::default())
        .unwrap();
    net.run_for(Duration::from_millis(5_500));
    let seen = seen.borrow();
    let values: Vec<&str> = seen.iter().map(|(_, _, _, text)| text.as_str()).collect();
    // The registration's answer at :20.3, then one notification as each second turns.
    assert_eq!(
        values,
        [20, 21, 22, 23, 24, 25].map(|s| format!("2023-11-14T22:13:{s}Z")),
        "{seen:?}"
    );
    for pair in seen[1..].windows(2) {
        assert_eq!(pair[1].0 - pair[0].0, Duration::from_secs(1), "{seen:?}");
    }
    assert!(seen
        .iter()
        .all(|(_, code, format, _)| *code == Code::CONTENT
            && *format == Some(ContentFormat::TEXT_PLAIN)));
}
