//! Fair shares of the shared tables under attack, on virtual time: a flooder fills a table
//! (incoming requests, peers, observers, Block1 uploads and their bytes, Block2 bodies) and a
//! well-behaved client from another host is still served, while the flooder's further
//! requests are answered 5.03 with Max-Age (or, for Observe, served without registering).

mod support;

use covey_core::{Block, Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{
    opt, Config, Endpoint, Event, IncomingId, Instant, Request, RequestParams, Response,
};
use std::cell::RefCell;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::rc::Rc;
use support::{FnApp, Network};

/// The observe key of `/obs`.
const OBS: u64 = 7;
/// Size of `/large`: three 1024-byte blocks.
const LARGE: usize = 3000;

/// Port `port` of a host in the /64 `2001:db8:0:net::/64`.
fn host(net: u16, port: u16) -> SocketAddr {
    SocketAddr::new(
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, net, 0, 0, 0, 1)),
        port,
    )
}

const SERVER_NET: u16 = 100;

/// What the server's application saw.
#[derive(Default)]
struct Seen {
    /// Every request handed to the application: source and path.
    requests: Vec<(SocketAddr, String)>,
    /// `/slow` requests, never answered.
    held: Vec<IncomingId>,
    /// Bodies of completed uploads: source and length.
    uploads: Vec<(SocketAddr, usize)>,
}

impl Seen {
    /// How many requests of `source` the application was handed.
    fn requests_from(&self, source: SocketAddr) -> usize {
        self.requests.iter().filter(|r| r.0 == source).count()
    }
}

/// `/slow` never answers, `/obs` is observable, `/large` is 3000 bytes, a PUT stores the
/// body, anything else answers "ok".
fn server_app(seen: Rc<RefCell<Seen>>) -> Box<FnApp<impl FnMut(&mut Endpoint, Instant, Event)>> {
    Box::new(FnApp(move |ep: &mut Endpoint, now: Instant, ev: Event| {
        let Event::Request(id) = ev else { return };
        let Some(req) = ep.request(id) else { return };
        let path: Vec<&[u8]> = req.message.options_of(OptionNumber::URI_PATH).collect();
        let path = String::from_utf8_lossy(&path.concat()).into_owned();
        let source = req.source;
        let put = req.message.code() == Code::PUT;
        let body_len = req.payload().len();
        let mut seen = seen.borrow_mut();
        seen.requests.push((source, path.clone()));
        if put {
            seen.uploads.push((source, body_len));
            ep.respond(now, id, &Response::new(Code::CHANGED)).unwrap();
            return;
        }
        match path.as_str() {
            "slow" => seen.held.push(id),
            "obs" => {
                let r = Response::with_payload(Code::CONTENT, b"1");
                ep.respond_observable(now, id, OBS, &r).unwrap();
            }
            "large" => {
                let body = vec![b'x'; LARGE];
                ep.respond(now, id, &Response::with_payload(Code::CONTENT, &body))
                    .unwrap();
            }
            _ => ep
                .respond(now, id, &Response::with_payload(Code::CONTENT, b"ok"))
                .unwrap(),
        }
    }))
}

/// The server's answer to one request, as the client reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reply {
    code: Code,
    max_age: Option<u32>,
    observe: bool,
    block1: Option<Block>,
}

/// A client that writes its requests by hand, so it can be as hostile as a test wants.
struct Client {
    addr: SocketAddr,
    mid: u16,
    token: u32,
    /// Never answers the server (a spoofed source, or a host that keeps quiet): its
    /// address is never verified.
    silent: bool,
}

impl Client {
    fn new(addr: SocketAddr) -> Client {
        Client {
            addr,
            mid: addr.port().wrapping_mul(97),
            token: u32::from(addr.port()) << 16,
            silent: false,
        }
    }

    /// A client that never answers what the server sends it.
    fn silent(addr: SocketAddr) -> Client {
        Client {
            silent: true,
            ..Client::new(addr)
        }
    }

    /// Has the server verify this client's address, as an Observe registration does: its
    /// answer comes as a CON, whose ACK verifies the address.
    fn verify(&mut self, net: &mut Network) {
        let reply = self.register(net).expect("an answer");
        assert_eq!((reply.code, reply.observe), (Code::CONTENT, true));
    }

    /// Sends a CON request with `options` (in option-number order) and returns the server's
    /// piggy-backed answer, if it answered at once. A 4.01 with Echo (RFC 9175) is answered
    /// as a real client would: the request goes again with the Echo value, which verifies
    /// this address (the attacks here are by hosts that receive their answers).
    fn send(
        &mut self,
        net: &mut Network,
        code: Code,
        options: &[(OptionNumber, Vec<u8>)],
        payload: &[u8],
    ) -> Option<Reply> {
        let (reply, echo) = self.send_once(net, code, options, payload, None);
        match echo {
            Some(echo) => self.send_once(net, code, options, payload, Some(&echo)).0,
            None => reply,
        }
    }

    /// One request; returns the answer and the Echo value of a 4.01 challenge.
    fn send_once(
        &mut self,
        net: &mut Network,
        code: Code,
        options: &[(OptionNumber, Vec<u8>)],
        payload: &[u8],
        echo: Option<&[u8]>,
    ) -> (Option<Reply>, Option<Vec<u8>>) {
        self.mid = self.mid.wrapping_add(1);
        self.token += 1;
        let token = self.token.to_be_bytes();
        let mut buf = [0u8; 1280];
        let mut enc =
            MessageEncoder::new(&mut buf, MessageType::Confirmable, code, self.mid, &token)
                .unwrap();
        for (number, value) in options {
            enc.option(*number, value).unwrap();
        }
        if let Some(echo) = echo {
            // Echo (252) is above every option these tests send.
            enc.option(OptionNumber::ECHO, echo).unwrap();
        }
        if !payload.is_empty() {
            enc.payload(payload).unwrap();
        }
        let n = enc.finish();
        let datagram = buf[..n].to_vec();
        let before = net.log.len();
        net.inject(self.addr, 0, &datagram);
        if !self.silent {
            self.answer_confirmables(net, before);
        }
        let mut challenge = None;
        let reply = net.log[before..].iter().find_map(|sent| {
            let m = Message::parse(&sent.bytes).ok()?;
            if sent.to != self.addr || m.token().as_bytes() != token {
                return None;
            }
            if m.code() == Code::UNAUTHORIZED {
                challenge = m.option(OptionNumber::ECHO).map(<[u8]>::to_vec);
            }
            Some(Reply {
                code: m.code(),
                max_age: m.uint_option(OptionNumber::MAX_AGE),
                observe: m.option(OptionNumber::OBSERVE).is_some(),
                block1: m
                    .option(OptionNumber::BLOCK1)
                    .and_then(|b| Block::decode(b).ok()),
            })
        });
        (reply, challenge)
    }

    /// Answers what the server sent this client since log entry `from` as RFC 7252 asks:
    /// an RST for a ping (an Empty CON), an ACK for any other CON. Either verifies this
    /// address, which is how a real client that knows no Echo gets verified.
    fn answer_confirmables(&self, net: &mut Network, from: usize) {
        let mut seen = from;
        loop {
            let answers: Vec<[u8; 4]> = net.log[seen..]
                .iter()
                .filter(|sent| sent.to == self.addr)
                .filter_map(|sent| {
                    let m = Message::parse(&sent.bytes).ok()?;
                    let [high, low] = m.message_id().to_be_bytes();
                    match (m.message_type(), m.code().is_empty()) {
                        (MessageType::Confirmable, true) => Some([0x70, 0, high, low]),
                        (MessageType::Confirmable, false) => Some([0x60, 0, high, low]),
                        _ => None,
                    }
                })
                .collect();
            seen = net.log.len();
            if answers.is_empty() {
                return;
            }
            for answer in answers {
                net.inject(self.addr, 0, &answer);
            }
        }
    }

    fn get(&mut self, net: &mut Network, path: &str) -> Option<Reply> {
        self.send(net, Code::GET, &[path_option(path)], &[])
    }

    fn register(&mut self, net: &mut Network) -> Option<Reply> {
        let options = [(OptionNumber::OBSERVE, vec![]), path_option("obs")];
        self.send(net, Code::GET, &options, &[])
    }

    /// Block1 block `num` of an upload to `path`, 64-byte blocks.
    fn upload_block(
        &mut self,
        net: &mut Network,
        path: &str,
        num: u32,
        more: bool,
    ) -> Option<Reply> {
        let block = Block::new(num, more, 2).unwrap();
        let mut value = [0u8; 4];
        let options = [
            path_option(path),
            (OptionNumber::BLOCK1, block.encode(&mut value).to_vec()),
        ];
        self.send(net, Code::PUT, &options, &[num as u8; 64])
    }

    /// Two unfinished uploads of 512 bytes: the 1 KiB of reassembly of `small_config`.
    fn take_every_byte(&mut self, net: &mut Network) {
        for path in ["a", "b"] {
            for num in 0..8 {
                let reply = self.upload_block(net, path, num, true).unwrap();
                assert_eq!(reply.code, Code::CONTINUE);
            }
        }
    }

    /// A whole upload of `blocks` 64-byte blocks; the code of the last answer.
    fn upload(&mut self, net: &mut Network, path: &str, blocks: u32) -> Option<Code> {
        let mut last = None;
        for num in 0..blocks {
            last = self
                .upload_block(net, path, num, num + 1 < blocks)
                .map(|r| r.code);
            if num + 1 < blocks && last != Some(Code::CONTINUE) {
                return last;
            }
        }
        last
    }
}

fn path_option(path: &str) -> (OptionNumber, Vec<u8>) {
    (OptionNumber::URI_PATH, path.as_bytes().to_vec())
}

fn busy(reply: &Option<Reply>) -> bool {
    matches!(
        reply,
        Some(Reply {
            code: Code::SERVICE_UNAVAILABLE,
            max_age: Some(2),
            ..
        })
    )
}

/// A server with small tables (16 requests, peers and observers; 4 uploads of at most 512
/// bytes, 1 KiB of reassembly) and the default shares: a peer 25 %, a source 50 %.
fn small_config() -> Config {
    Config {
        max_incoming: 16,
        max_peers: 16,
        max_observers: 16,
        max_uploads: 4,
        max_body_size: 512,
        max_reassembly_bytes: 1024,
        overload_max_age: 2,
        ..Config::default()
    }
}

fn network(config: Config) -> (Network, Rc<RefCell<Seen>>) {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let mut net = Network::new(covey_proto::Duration::from_millis(1), 0.0, 1);
    net.add(
        host(SERVER_NET, 5683),
        config,
        9,
        Some(server_app(seen.clone())),
    );
    (net, seen)
}

#[test]
fn a_flood_of_slow_requests_from_one_peer_leaves_the_others_served() {
    for config in [small_config(), Config::constrained()] {
        let capacity = config.max_incoming;
        let (mut net, seen) = network(config);
        let mut flooder = Client::new(host(1, 40000));
        // The flood fills the incoming table: the application never answers /slow.
        for _ in 0..capacity {
            assert_eq!(
                flooder.get(&mut net, "slow"),
                None,
                "held, not answered yet"
            );
        }
        let mut good = Client::new(host(2, 40000));
        for _ in 0..3 {
            let reply = good.get(&mut net, "fast");
            assert_eq!(reply.map(|r| r.code), Some(Code::CONTENT), "{capacity}");
        }
        // The flooder fills the table again; beyond its share of the full table, it is then
        // answered 5.03 with Max-Age, like the request of its that made room.
        assert_eq!(flooder.get(&mut net, "slow"), None);
        assert!(busy(&flooder.get(&mut net, "slow")));
        assert!(busy(&flooder.get(&mut net, "fast")));
        let busy_answers = net
            .log
            .iter()
            .filter(|s| s.to == flooder.addr)
            .filter(|s| Message::parse(&s.bytes).unwrap().code() == Code::SERVICE_UNAVAILABLE)
            .count();
        assert_eq!(busy_answers, 1 + 2, "one evicted, two refused");
        // Its requests time out unanswered; then the flooder is served like anyone.
        net.run_for(covey_proto::Duration::from_secs(100));
        assert_eq!(
            flooder.get(&mut net, "fast").map(|r| r.code),
            Some(Code::CONTENT)
        );
        assert_eq!(seen.borrow().requests_from(good.addr), 3);
    }
}

#[test]
fn a_flood_from_many_ports_of_one_host_is_held_to_its_source_share() {
    let (mut net, seen) = network(small_config());
    // 16 ports of one /64, one slow request each: no peer beyond its share of 4, the /64
    // far beyond its share of 8.
    let mut ports: Vec<Client> = (0..16).map(|p| Client::new(host(1, 41000 + p))).collect();
    for c in &mut ports {
        assert_eq!(c.get(&mut net, "slow"), None);
    }
    let mut another_port = Client::new(host(1, 42000));
    assert!(busy(&another_port.get(&mut net, "fast")));
    // A host elsewhere, even with one request per port from several ports, is served.
    for p in 0..4 {
        let mut good = Client::new(host(2, 43000 + p));
        assert_eq!(
            good.get(&mut net, "fast").map(|r| r.code),
            Some(Code::CONTENT)
        );
    }
    assert_eq!(seen.borrow().held.len(), 16);
}

/// A server with room for 64 observers whose 16 peer entries are taken by 16 ports of one
/// host, each registered with `/obs`.
fn peers_taken_by_one_hosts_observers() -> Network {
    let config = Config {
        max_observers: 64,
        ..small_config()
    };
    let (mut net, _) = network(config);
    for p in 0..16 {
        let reply = Client::new(host(1, 44000 + p)).register(&mut net);
        assert!(reply.unwrap().observe, "registered while there was room");
    }
    net
}

#[test]
fn observe_registrations_from_one_host_leave_peers_and_observers_for_others() {
    let mut net = peers_taken_by_one_hosts_observers();
    // Another port of that host gets the resource but no registration (RFC 7641 §4.1).
    let reply = Client::new(host(1, 45000)).register(&mut net).unwrap();
    assert_eq!((reply.code, reply.observe), (Code::CONTENT, false));
    // A client of another host is registered and notified.
    let mut good = Client::new(host(2, 45000));
    let reply = good.register(&mut net).unwrap();
    assert_eq!((reply.code, reply.observe), (Code::CONTENT, true));
    let now = net.now;
    net.nodes[0]
        .endpoint
        .notify(now, OBS, &Response::with_payload(Code::CONTENT, b"2"));
    let before = net.log.len();
    net.flush(0);
    let notified = net.log[before..].iter().any(|s| s.to == good.addr);
    assert!(notified, "the good client hears the notification");
    assert_eq!(net.nodes[0].endpoint.observer_count(OBS), 16);
}

#[test]
fn observe_registrations_from_one_peer_leave_observers_for_others() {
    let (mut net, _) = network(small_config());
    let mut flooder = Client::new(host(1, 46000));
    for _ in 0..16 {
        assert!(flooder.register(&mut net).unwrap().observe);
    }
    assert!(
        !flooder.register(&mut net).unwrap().observe,
        "beyond its share"
    );
    let mut good = Client::new(host(2, 46000));
    for _ in 0..2 {
        assert!(good.register(&mut net).unwrap().observe);
    }
    assert_eq!(net.nodes[0].endpoint.observer_count(OBS), 16);
}

#[test]
fn a_stream_of_first_blocks_does_not_evict_a_real_upload() {
    let (mut net, seen) = network(small_config());
    let mut good = Client::new(host(2, 47000));
    assert_eq!(
        good.upload_block(&mut net, "real", 0, true).unwrap().code,
        Code::CONTINUE
    );
    // A stream of block 0s to ever new resources, from one peer.
    let mut flooder = Client::new(host(1, 47000));
    let mut refused = 0;
    for i in 0..200 {
        let reply = flooder.upload_block(&mut net, &format!("u{i}"), 0, true);
        refused += usize::from(busy(&reply));
    }
    assert!(
        refused >= 197,
        "the flooder keeps 3 of 4 slots at most: {refused}"
    );
    for num in 1..4 {
        let reply = good.upload_block(&mut net, "real", num, num < 3).unwrap();
        let expected = if num < 3 {
            Code::CONTINUE
        } else {
            Code::CHANGED
        };
        assert_eq!(reply.code, expected, "block {num}");
    }
    assert_eq!(seen.borrow().uploads, vec![(good.addr, 256)]);
}

#[test]
fn unfinished_uploads_taking_every_byte_do_not_stop_other_uploads() {
    let (mut net, seen) = network(small_config());
    let mut flooder = Client::new(host(1, 48000));
    flooder.take_every_byte(&mut net);
    // A client elsewhere uploads 192 bytes: the flooder's uploads make room.
    let mut good = Client::new(host(2, 48000));
    assert_eq!(good.upload(&mut net, "c", 3), Some(Code::CHANGED));
    assert_eq!(seen.borrow().uploads, vec![(good.addr, 192)]);
    // A third host still finds room.
    let mut third = Client::new(host(3, 48000));
    assert_eq!(
        third.upload_block(&mut net, "d", 0, true).unwrap().code,
        Code::CONTINUE
    );
}

#[test]
fn unfinished_uploads_expire_on_an_idle_server() {
    let (mut net, seen) = network(small_config());
    let mut client = Client::new(host(1, 49000));
    client.take_every_byte(&mut net);
    // The reassembly budget is full, and this client holds all of it: refused for now.
    assert!(busy(&client.upload_block(&mut net, "c", 0, true)));
    // Nothing else happens on the server; its own timer forgets the idle uploads after
    // EXCHANGE_LIFETIME (247 s).
    let deadline = net.nodes[0].endpoint.poll_timeout();
    assert!(deadline.is_some(), "the expiry timer is set");
    net.run_for(covey_proto::Duration::from_secs(248));
    assert_eq!(
        net.nodes[0].endpoint.poll_timeout(),
        None,
        "nothing left to expire"
    );
    assert_eq!(client.upload(&mut net, "c", 8), Some(Code::CHANGED));
    assert_eq!(seen.borrow().uploads, vec![(client.addr, 512)]);
}

#[test]
fn a_flood_of_downloads_does_not_evict_a_transfer_in_progress() {
    // Room for four bodies of 3000 bytes.
    let config = Config {
        max_reassembly_bytes: 16 << 10,
        ..small_config()
    };
    let (mut net, seen) = network(config);
    let mut good = Client::new(host(2, 50000));
    let block2 = |num: u32| {
        let mut value = [0u8; 4];
        let b = Block::new(num, false, 6).unwrap();
        (OptionNumber::BLOCK2, b.encode(&mut value).to_vec())
    };
    let reply = good.send(&mut net, Code::GET, &[path_option("large"), block2(0)], &[]);
    assert_eq!(reply.unwrap().code, Code::CONTENT);
    // A second later, the flooder starts 50 downloads of other resources: its bodies fill
    // the cache, and the good client's body is the soonest to expire.
    net.run_for(covey_proto::Duration::from_secs(1));
    let mut flooder = Client::new(host(1, 50000));
    for i in 0..50 {
        let query = (OptionNumber::URI_QUERY, format!("n={i}").into_bytes());
        let options = [path_option("large"), query, block2(0)];
        let reply = flooder.send(&mut net, Code::GET, &options, &[]);
        assert_eq!(reply.unwrap().code, Code::CONTENT);
    }
    // (The good client answered the server's address check: its first block went whole.)
    let before = seen.borrow().requests_from(good.addr);
    for num in 1..3 {
        let reply = good.send(
            &mut net,
            Code::GET,
            &[path_option("large"), block2(num)],
            &[],
        );
        assert_eq!(reply.unwrap().code, Code::CONTENT);
    }
    // The good client's later blocks came from the cached body: the application did not
    // see them.
    assert_eq!(seen.borrow().requests_from(good.addr), before);
}

#[test]
fn a_table_full_of_fair_holders_refuses_newcomers_and_evicts_nobody() {
    let (mut net, seen) = network(small_config());
    // 16 hosts, one slow request each: a full table, everyone within its share.
    let mut holders: Vec<Client> = (0..16).map(|h| Client::new(host(10 + h, 51000))).collect();
    for c in &mut holders {
        assert_eq!(c.get(&mut net, "slow"), None);
    }
    for h in 0..3 {
        assert!(busy(
            &Client::new(host(40 + h, 51000)).get(&mut net, "fast")
        ));
    }
    let answered = net
        .log
        .iter()
        .filter(|s| holders.iter().any(|c| c.addr == s.to))
        .count();
    assert_eq!(answered, 0, "nobody within its share lost a request");
    assert_eq!(seen.borrow().held.len(), 16);
}

#[test]
fn a_request_of_our_own_finds_a_peer_in_a_table_full_of_one_hosts_observers() {
    let mut net = peers_taken_by_one_hosts_observers();
    // The server, as a client (an Entity Manager fanning out), asks a host of its choosing,
    // even one in the /64 that holds every peer entry.
    let now = net.now;
    let path = [opt(OptionNumber::URI_PATH, b"member")];
    let get = Request {
        options: &path,
        ..Request::new(Code::GET)
    };
    let member = host(1, 5683);
    let sent = net.nodes[0]
        .endpoint
        .send_request(now, member, &get, RequestParams::default());
    assert!(sent.is_ok(), "{sent:?}");
    assert_eq!(net.nodes[0].endpoint.observer_count(OBS), 15);
}

/// Two hosts (two /64s) that never answer fill a table within their shares; a client that
/// has verified its address before still gets in, an unverified newcomer does not.
#[test]
fn a_verified_client_gets_a_request_slot_in_a_table_two_silent_hosts_filled() {
    let (mut net, seen) = network(small_config());
    let mut good = Client::new(host(3, 53000));
    good.verify(&mut net);
    for i in 0..16 {
        let mut attacker = Client::silent(host(20 + i % 2, 53000 + i));
        assert_eq!(attacker.get(&mut net, "slow"), None);
    }
    assert_eq!(seen.borrow().held.len(), 16);
    assert!(busy(&Client::new(host(4, 53000)).get(&mut net, "fast")));
    assert_eq!(
        good.get(&mut net, "fast").map(|r| r.code),
        Some(Code::CONTENT)
    );
}

#[test]
fn a_verified_client_registers_in_an_observer_table_two_silent_hosts_filled() {
    // Room for every peer: the observer table is the one filled.
    let config = Config {
        max_peers: 32,
        ..small_config()
    };
    let (mut net, _) = network(config);
    let mut good = Client::new(host(3, 54000));
    good.verify(&mut net);
    // The client's own observation and fifteen of theirs fill the table.
    for i in 0..15 {
        let reply = Client::silent(host(20 + i % 2, 54000 + i)).register(&mut net);
        assert!(
            reply.as_ref().is_none_or(|r| r.observe),
            "registered while there was room: {i} {reply:?}"
        );
    }
    assert_eq!(net.nodes[0].endpoint.observer_count(OBS), 16);
    let newcomer = Client::new(host(4, 54000)).register(&mut net).unwrap();
    assert!(!newcomer.observe, "an unverified newcomer finds no room");
    // A second observation of the verified client takes an unverified one's place.
    let reply = good.register(&mut net).unwrap();
    assert_eq!((reply.code, reply.observe), (Code::CONTENT, true));
    assert_eq!(net.nodes[0].endpoint.observer_count(OBS), 16);
}

#[test]
fn a_verified_client_uploads_while_two_silent_hosts_hold_every_upload_slot() {
    let (mut net, seen) = network(small_config());
    let mut good = Client::new(host(3, 55000));
    good.verify(&mut net);
    // The probe's attack: two hosts, two ports each, the first Block1 block of uploads.
    for i in 0..4 {
        let mut attacker = Client::silent(host(20 + i % 2, 55000 + i));
        let reply = attacker.upload_block(&mut net, "x", 0, true).unwrap();
        assert_eq!(reply.code, Code::CONTINUE);
    }
    let mut newcomer = Client::new(host(4, 55000));
    assert!(busy(&newcomer.upload_block(&mut net, "y", 0, true)));
    assert_eq!(good.upload(&mut net, "z", 3), Some(Code::CHANGED));
    assert_eq!(seen.borrow().uploads, vec![(good.addr, 192)]);
}
