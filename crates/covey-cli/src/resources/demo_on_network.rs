//! The demo App on a node of the in-memory network, on virtual time: the code `covey serve`
//! hosts under the tokio driver answers and notifies the same here.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use covey_core::{Code, ContentFormat, OptionNumber};
use covey_proto::testing::{addr, FnApp, Network};
use covey_proto::{opt, Config, Event, Instant, Request, RequestParams};

use super::demo::DemoApp;
use super::wall_clock::WallClock;

/// A wall clock that follows the network's virtual time, `epoch` at `Instant::ZERO`.
struct VirtualClock {
    epoch: Duration,
}

impl WallClock for VirtualClock {
    fn since_epoch(&self, now: Instant) -> Duration {
        self.epoch + (now - Instant::ZERO)
    }
}

/// A response as the client saw it: when, code, Content-Format, payload.
type Seen = (Instant, Code, Option<ContentFormat>, String);

/// A network with the demo App on node 0 and a client on node 1 that records every
/// response; the wall clock reads 2023-11-14T22:13:20.3Z when the network starts.
fn network() -> (Network, usize, Rc<RefCell<Vec<Seen>>>) {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 7);
    let start = net.now - Instant::ZERO;
    let clock = VirtualClock {
        epoch: Duration::from_millis(1_700_000_000_300) - start,
    };
    net.add(
        addr(1),
        Config::default(),
        1,
        Some(Box::new(DemoApp::new(Box::new(clock)))),
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    let log = seen.clone();
    let client = net.add(
        addr(2),
        Config::default(),
        2,
        Some(Box::new(FnApp(
            move |endpoint: &mut covey_proto::Endpoint, now, event| {
                if let Event::Response { key, .. } = event {
                    if let Some(r) = endpoint.response(key) {
                        let text = String::from_utf8_lossy(r.payload()).into_owned();
                        let format = r.message.content_format();
                        log.borrow_mut().push((now, r.message.code(), format, text));
                    }
                }
            },
        ))),
    );
    (net, client, seen)
}

#[test]
fn the_sensor_answers_json_when_accept_asks_for_it() {
    let (mut net, client, seen) = network();
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
    let (mut net, client, seen) = network();
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
