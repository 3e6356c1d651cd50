//! The simulator driving real endpoints: timing, restarts, groups, determinism, memory.

use std::net::{IpAddr, SocketAddr};

use covey_core::Code;
use covey_proto::{
    App, AppContext, Config, Duration, Event, Instant, Request, RequestParams, Response,
};

use super::*;
use crate::media::{
    Framing, HeaderModel, LinkConfig, LossSpec, PointToPoint, PropagationDelay, RateLimit,
};

/// A server that answers every request with 2.05 and a 6-byte payload, or a client that
/// sends `count` GETs to node 0 one after the other, restarting after each if asked.
#[derive(Debug, Default)]
struct TestApp {
    server: bool,
    count: u32,
    restart_each: bool,
    sent: u32,
    responses: Vec<Instant>,
    sources: Vec<SocketAddr>,
    failures: u32,
    join: Option<IpAddr>,
    restart: bool,
}

impl TestApp {
    fn send(&mut self, cx: &mut AppContext<'_>) {
        if self.sent < self.count {
            self.sent += 1;
            let r = cx.send_request(
                node_addr(0),
                &Request::new(Code::GET),
                RequestParams::default(),
            );
            assert!(r.is_ok());
        }
    }
}

impl App for TestApp {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        if let Some(g) = self.join {
            assert!(cx.join_group(g).is_ok());
        }
        if !self.server {
            self.send(cx);
        }
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match event {
            Event::Request(id) => {
                if let Some(r) = cx.endpoint.request(id) {
                    self.sources.push(r.source);
                }
                let _ = cx.endpoint.respond(
                    cx.now,
                    id,
                    &Response::with_payload(Code::CONTENT, b"21.5 C"),
                );
            }
            Event::Response { last: true, .. } => {
                self.responses.push(cx.now);
                if self.restart_each {
                    self.restart = true;
                } else {
                    self.send(cx);
                }
            }
            Event::Failed { .. } => {
                self.failures += 1;
                self.send(cx);
            }
            _ => {}
        }
    }
}

/// The test app alone on a node.
impl covey_proto::Apps for TestApp {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        App::start(self, cx);
    }

    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        covey_proto::dispatch_events(self, cx);
    }
}

/// The lab hooks the simulator asks for.
impl NodeApp for TestApp {
    fn is_done(&self) -> bool {
        self.server || self.responses.len() as u32 + self.failures >= self.count
    }

    fn take_restart(&mut self) -> bool {
        std::mem::take(&mut self.restart)
    }
}

fn link(loss: LossSpec) -> LinkConfig {
    LinkConfig {
        rate_bps: 20_000,
        delay: PropagationDelay::Fixed(Duration::from_millis(20)),
        framing: Framing {
            mtu: 128,
            header: HeaderModel::Ipv6Udp,
        },
        queue_packets: 100,
        loss,
        rate_limit: RateLimit::Serialiser,
    }
}

fn pair(
    count: u32,
    restart_each: bool,
    loss: LossSpec,
    seed: u64,
) -> Simulator<PointToPoint, TestApp> {
    let medium = PointToPoint::new(1, 0, link(loss), link(loss), seed, 0);
    let mut sim = Simulator::new(medium, seed);
    sim.add_node(
        Config::default(),
        TestApp {
            server: true,
            ..TestApp::default()
        },
    )
    .unwrap();
    sim.add_node(
        Config::default(),
        TestApp {
            count,
            restart_each,
            ..TestApp::default()
        },
    )
    .unwrap();
    sim
}

#[test]
fn an_exchange_takes_two_serialisations_and_two_propagation_delays() {
    let mut sim = pair(1, false, LossSpec::None, 1);
    assert!(sim.run_until(Instant::from_secs(10)));
    let client = sim.nodes()[1].app();
    // Request: 4 B header + 8 B token = 12 B + 48 B = 60 B = 24 ms. Response: 12 B + 1 B
    // marker + 6 B payload = 19 B + 48 B = 67 B = 26.8 ms. Plus 2 x 20 ms.
    assert_eq!(client.responses, vec![Instant::from_nanos(90_800_000)]);
    assert_eq!(
        sim.packets_in_flight(),
        0,
        "every packet's bytes were freed"
    );
    let stats = sim.node_stats(1).unwrap_or_default();
    assert_eq!(stats.completed_after[0], 1);
    assert_eq!(sim.medium().stats().bytes_on_wire, 60 + 67);
}

#[test]
fn a_restarted_endpoint_is_a_new_client_on_a_new_port() {
    let mut sim = pair(3, true, LossSpec::None, 1);
    // A client that restarts after each response: `start` sends the next request.
    assert!(sim.run_until(Instant::from_secs(10)));
    let server = sim.nodes()[0].app();
    assert_eq!(server.sources.len(), 3);
    assert_eq!(
        server.sources,
        vec![
            endpoint_addr(1, 0),
            endpoint_addr(1, 1),
            endpoint_addr(1, 2)
        ]
    );
    assert_eq!(sim.nodes()[1].incarnation(), 3);
    let stats = sim.node_stats(1).unwrap_or_default();
    assert_eq!(
        stats.completed_after[0], 3,
        "counters of retired endpoints are kept"
    );
}

#[test]
fn lost_requests_are_retransmitted_by_the_engine() {
    let mut sim = pair(40, false, LossSpec::Bernoulli { p: 0.3 }, 5);
    sim.run_until(Instant::from_secs(100_000));
    let stats = sim.node_stats(1).unwrap_or_default();
    assert!(stats.total_retransmissions() > 5, "{stats:?}");
    let done: u64 = stats.completed_after.iter().sum::<u64>() + stats.failed;
    assert_eq!(done, 40);
    assert_eq!(sim.packets_in_flight(), 0);
}

#[test]
fn same_seed_gives_the_same_run_and_another_seed_another() {
    let trace = |seed| {
        let mut sim = pair(30, false, LossSpec::Bernoulli { p: 0.2 }, seed);
        sim.run_until(Instant::from_secs(100_000));
        (sim.nodes()[1].app().responses.clone(), sim.stats())
    };
    assert_eq!(trace(7), trace(7));
    assert_ne!(trace(7).0, trace(8).0);
}

#[test]
fn group_datagrams_reach_members_only() {
    let group: IpAddr = "ff05::fd".parse().unwrap();
    let medium = PointToPoint::between(
        &[0],
        &[1, 2],
        link(LossSpec::None),
        link(LossSpec::None),
        1,
        0,
    );
    let mut sim: Simulator<_, TestApp> = Simulator::new(medium, 1);
    sim.add_node(Config::default(), TestApp::default()).unwrap();
    for join in [Some(group), None] {
        sim.add_node(
            Config::default(),
            TestApp {
                server: true,
                join,
                ..TestApp::default()
            },
        )
        .unwrap();
    }
    let dest = SocketAddr::new(group, 5683);
    let sent = sim.act(0, |endpoint, _, now| {
        endpoint.send_request(now, dest, &Request::new(Code::GET), RequestParams::NON)
    });
    assert!(matches!(sent, Some(Ok(_))));
    while sim.now() < Instant::from_secs(1) && sim.step() {}
    assert_eq!(sim.nodes()[1].app().sources.len(), 1, "the member got it");
    assert!(
        sim.nodes()[2].app().sources.is_empty(),
        "the non-member did not"
    );
    assert_eq!(sim.stats().undeliverable, 1);
}

#[test]
fn an_app_set_runs_on_a_node() {
    // covey-proto Apps are hosted as they are: an AppSet answering GETs.
    struct Answer;
    impl App for Answer {
        fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
            if let Event::Request(id) = event {
                let _ = cx
                    .endpoint
                    .respond(cx.now, id, &Response::new(Code::CONTENT));
            }
        }
    }
    let medium = PointToPoint::new(1, 0, link(LossSpec::None), link(LossSpec::None), 1, 0);
    let mut sim: Simulator<_, covey_proto::AppSet<dyn App>> = Simulator::new(medium, 1);
    sim.add_node(
        Config::default(),
        covey_proto::AppSet::new().with(Box::new(Answer)),
    )
    .unwrap();
    sim.add_node(Config::default(), covey_proto::AppSet::new())
        .unwrap();
    let sent = sim.act(1, |endpoint, _, now| {
        endpoint.send_request(
            now,
            node_addr(0),
            &Request::new(Code::GET),
            RequestParams::default(),
        )
    });
    assert!(matches!(sent, Some(Ok(_))));
    assert!(sim.act(9, |_, _, _| ()).is_none(), "no node 9");
    while sim.step() {}
    let stats = sim.node_stats(1).unwrap_or_default();
    assert_eq!(stats.completed_after[0], 1, "the request was answered");
}

#[test]
fn run_to_stops_at_the_limit_and_resumes_from_there() {
    let mut sim = pair(50, false, LossSpec::None, 1);
    sim.run_to(Instant::from_millis(500));
    assert_eq!(sim.now(), Instant::from_millis(500));
    // One exchange takes 90.8 ms: five are done by 500 ms.
    assert_eq!(sim.nodes()[1].app().responses.len(), 5);
    sim.run_to(Instant::from_secs(1));
    assert_eq!(sim.nodes()[1].app().responses.len(), 11);
}
