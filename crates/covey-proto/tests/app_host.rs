//! Apps hosted on a node: several Apps per node (requests by path, responses and timers by
//! owner), group membership and logging through the host, and the seeded App random stream.

mod support;

use covey_core::{Code, Message};
use covey_proto::{
    opt, App, AppContext, AppHosting, AppSet, Config, Duration, Endpoint, Event, LogLevel,
    Received, Request, RequestParams, Response,
};
use std::cell::RefCell;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::rc::Rc;
use support::{addr, Network};

type Log = Rc<RefCell<Vec<String>>>;

/// Serves `/<path>` with its own name, pings node 3 with a GET on start, and sets a timer.
struct Named {
    name: &'static str,
    path: &'static str,
    log: Log,
}

impl App for Named {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        let opts = [opt(covey_core::OptionNumber::URI_PATH, b"who")];
        let request = Request {
            options: &opts,
            ..Request::new(Code::GET)
        };
        cx.send_request(addr(3), &request, RequestParams::default())
            .expect("request starts");
        cx.set_timer(cx.now + Duration::from_secs(1), 7)
            .expect("timer set");
        cx.log(LogLevel::Info, format_args!("{} started", self.name));
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let line = match event {
            Event::Request(id) => {
                let response = Response::with_payload(Code::CONTENT, self.name.as_bytes());
                cx.endpoint
                    .respond(cx.now, id, &response)
                    .expect("answered");
                format!("{} answered", self.name)
            }
            Event::Response { key, .. } => {
                let r = cx.endpoint.response(key).expect("held");
                format!("{} got {}", self.name, String::from_utf8_lossy(r.payload()))
            }
            Event::Timer(v) => format!("{} timer {v}", self.name),
            other => format!("{} {other:?}", self.name),
        };
        self.log.borrow_mut().push(line);
    }

    fn serves(&self, request: &Received<'_>) -> bool {
        request.message.uri_path().next() == Some(self.path)
    }
}

/// Answers every request with "ok".
struct Echo;

impl App for Echo {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        if let Event::Request(id) = event {
            let _ = cx
                .endpoint
                .respond(cx.now, id, &Response::with_payload(Code::CONTENT, b"ok"));
        }
    }
}

fn get(net: &mut Network, from: usize, to: SocketAddr, path: &str) -> (Code, Vec<u8>) {
    let opts = [opt(covey_core::OptionNumber::URI_PATH, path.as_bytes())];
    let request = Request {
        options: &opts,
        ..Request::new(Code::GET)
    };
    net.request(from, to, &request, RequestParams::default())
        .expect("request starts");
    net.run_for(Duration::from_secs(5));
    // The response was released when its event was logged: read it off the wire.
    assert!(
        net.nodes[from]
            .events
            .drain(..)
            .any(|(_, e)| matches!(e, Event::Response { .. })),
        "a response event"
    );
    let last = net
        .log
        .iter()
        .rev()
        .find(|s| s.to == net.nodes[from].addr)
        .expect("a datagram to the client");
    let m = Message::parse(&last.bytes).expect("parseable");
    (m.code(), m.payload().to_vec())
}

#[test]
fn an_app_set_routes_requests_by_path_and_answers_to_their_owner() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 1);
    let log: Log = Log::default();
    let apps = AppSet::<dyn App>::new()
        .with(Box::new(Named {
            name: "A",
            path: "a",
            log: log.clone(),
        }))
        .with(Box::new(Named {
            name: "B",
            path: "b",
            log: log.clone(),
        }));
    net.add(addr(3), Config::default(), 3, Some(Box::new(Echo)));
    let node = net.add_apps(addr(1), Config::default(), 1, Some(apps));
    let client = net.add(addr(2), Config::default(), 2, None);
    net.run_for(Duration::from_secs(2));

    // Each App got the answer to its own request and its own timer, nothing of the other's.
    let mut lines = log.borrow().clone();
    lines.sort();
    assert_eq!(lines, ["A got ok", "A timer 7", "B got ok", "B timer 7"]);
    assert_eq!(
        net.nodes[node].host.log,
        [
            (LogLevel::Info, "A started".to_string()),
            (LogLevel::Info, "B started".to_string())
        ]
    );

    log.borrow_mut().clear();
    assert_eq!(
        get(&mut net, client, addr(1), "b"),
        (Code::CONTENT, b"B".to_vec())
    );
    assert_eq!(
        get(&mut net, client, addr(1), "a"),
        (Code::CONTENT, b"A".to_vec())
    );
    assert_eq!(*log.borrow(), ["B answered", "A answered"]);
    let (code, diagnostic) = get(&mut net, client, addr(1), "c");
    assert_eq!(code, Code::NOT_FOUND);
    assert!(!diagnostic.is_empty(), "4.04 says why");
}

/// Joins or leaves a group when asked by `POST /join` or `POST /leave`, and answers GETs.
struct Member;

impl App for Member {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let Event::Request(id) = event else { return };
        let Some(request) = cx.endpoint.request(id) else {
            return;
        };
        let group = IpAddr::V6(Ipv6Addr::new(0xff05, 0, 0, 0, 0, 0, 0, 0xfd));
        let action = request.message.uri_path().next().map(str::to_string);
        let code = match action.as_deref() {
            Some("join") => cx.join_group(group).map(|_| Code::CHANGED),
            Some("leave") => cx.leave_group(group).map(|_| Code::DELETED),
            _ => Ok(Code::CONTENT),
        };
        let response = match code {
            Ok(code) => Response::new(code),
            Err(_) => Response::new(Code::BAD_REQUEST),
        };
        let _ = cx.endpoint.respond(cx.now, id, &response);
    }
}

#[test]
fn apps_join_and_leave_groups_through_their_host() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 2);
    let member = net.add(addr(1), Config::default(), 1, Some(Box::new(Member)));
    let client = net.add(addr(2), Config::default(), 2, None);
    let group = IpAddr::V6(Ipv6Addr::new(0xff05, 0, 0, 0, 0, 0, 0, 0xfd));
    let joined = |net: &Network| {
        use covey_proto::Host;
        net.nodes[member].host.groups()
    };
    assert!(joined(&net).is_empty());
    let post = |net: &mut Network, path: &str| {
        let opts = [opt(covey_core::OptionNumber::URI_PATH, path.as_bytes())];
        let request = Request {
            options: &opts,
            ..Request::new(Code::POST)
        };
        net.request(client, addr(1), &request, RequestParams::default())
            .expect("starts");
        net.run_for(Duration::from_secs(2));
    };
    post(&mut net, "join");
    assert_eq!(joined(&net), [group]);
    // A multicast GET now reaches the member.
    let before = net.sent_by(addr(1)).len();
    let request = Request::new(Code::GET);
    net.request(
        client,
        SocketAddr::new(group, 5683),
        &request,
        RequestParams {
            confirmable: false,
            ..RequestParams::default()
        },
    )
    .expect("multicast starts");
    net.run_for(Duration::from_secs(10));
    assert_eq!(net.sent_by(addr(1)).len(), before + 1, "member answered");
    post(&mut net, "leave");
    assert!(joined(&net).is_empty());
}

#[test]
fn the_app_random_stream_follows_the_seed_and_leaves_the_engine_alone() {
    let draw = |seed| {
        let ep = Endpoint::new(Config::default(), seed).unwrap();
        let mut hosting = AppHosting::new(&ep);
        (0..4).map(|_| hosting.random_u64()).collect::<Vec<_>>()
    };
    assert_eq!(draw(5), draw(5));
    assert_ne!(draw(5), draw(6));
    // Drawing App randomness does not change the engine's own choices (tokens, MIDs).
    let token = |draws: usize| {
        let mut ep = Endpoint::new(Config::default(), 9).unwrap();
        let mut hosting = AppHosting::new(&ep);
        for _ in 0..draws {
            hosting.random_u64();
        }
        let mut buf = [0u8; 1280];
        ep.send_request(
            covey_proto::Instant::ZERO,
            addr(1),
            &Request::new(Code::GET),
            RequestParams::default(),
        )
        .expect("starts");
        let t = ep
            .poll_transmit(covey_proto::Instant::ZERO, &mut buf)
            .expect("sent");
        buf[..t.size].to_vec()
    };
    assert_eq!(token(0), token(3));
}
