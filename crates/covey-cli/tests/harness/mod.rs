//! What the plugtest and aiocoap tests share: `covey serve --plugtest` in a child process,
//! a Covey client whose datagrams are recorded, a lossy UDP relay that records what passes,
//! and the aiocoap virtual environment.

#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use covey::{Client, Config, RequestBuilder, Response, ResponseStream, TraceDirection};
use covey_core::{Message, MessageType};

use crate::support::{covey, covey_server, Background};

/// Longest wait for any single response or notification.
pub const WAIT: Duration = Duration::from_secs(10);

/// `covey serve --plugtest` on an ephemeral 127.0.0.1 port, killed when dropped.
pub struct Plugtest {
    _server: Background,
    pub port: u16,
}

impl Plugtest {
    /// Starts it with `extra` flags (e.g. `--obs-period 0.3`) and waits until it answers.
    pub fn start(extra: &[&str]) -> Plugtest {
        let mut args = vec!["--plugtest"];
        args.extend_from_slice(extra);
        let (server, port) = covey_server(&args);
        Plugtest {
            _server: server,
            port,
        }
    }

    /// Starts it with `extra` flags and the amplification limit off: for exchanges checked
    /// message by message as the test descriptions have them, without the CON answer and
    /// the address-check ping an unverified client gets (RFC 9175 §2.4).
    pub fn without_echo(extra: &[&str]) -> Plugtest {
        Plugtest::start(&[&["--amplification-factor", "0"], extra].concat())
    }

    /// Starts it on `port` (e.g. again after a restart) and waits until it answers.
    pub fn start_on(port: u16, extra: &[&str]) -> Plugtest {
        let mut cmd = covey();
        cmd.args([
            "serve",
            "--plugtest",
            "--bind",
            &format!("127.0.0.1:{port}"),
        ])
        .args(extra);
        let server = Background::start(cmd);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let out = covey()
                .args(["get", "-B", "0.2", &format!("coap://127.0.0.1:{port}/test")])
                .output()
                .expect("run covey get");
            if out.status.success() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "covey serve did not come up on port {port}"
            );
        }
        Plugtest {
            _server: server,
            port,
        }
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// `coap://127.0.0.1:PORT` followed by `path_and_query`.
    pub fn uri(&self, path_and_query: &str) -> String {
        format!("coap://127.0.0.1:{}{path_and_query}", self.port)
    }
}

/// One datagram a traced client sent or received.
#[derive(Debug, Clone)]
pub struct Datagram {
    pub sent: bool,
    pub peer: SocketAddr,
    pub bytes: Vec<u8>,
}

impl Datagram {
    /// The datagram parsed as a CoAP message.
    pub fn msg(&self) -> Message<'_> {
        Message::parse(&self.bytes).expect("a well-formed CoAP message")
    }

    /// Whether it is an Empty message of `kind` (ACK or RST) with message ID `mid`.
    pub fn is_empty(&self, kind: MessageType, mid: u16) -> bool {
        let m = self.msg();
        m.code().is_empty() && m.message_type() == kind && m.message_id() == mid
    }

    /// Whether it carries `token` (and is not an Empty message).
    pub fn has_token(&self, token: &[u8]) -> bool {
        let m = self.msg();
        !m.code().is_empty() && m.token_bytes() == token
    }
}

/// Every datagram a traced client exchanged with its peer (the destination of its first
/// datagram), in order; datagrams from anyone else, such as late answers to an earlier
/// owner of the port, are left out.
#[derive(Clone, Default)]
pub struct Wire(Arc<Mutex<Vec<Datagram>>>);

impl Wire {
    /// Everything so far.
    pub fn all(&self) -> Vec<Datagram> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// What the client sent.
    pub fn sent(&self) -> Vec<Datagram> {
        self.all().into_iter().filter(|d| d.sent).collect()
    }

    /// What the client received.
    pub fn received(&self) -> Vec<Datagram> {
        self.all().into_iter().filter(|d| !d.sent).collect()
    }

    /// How many datagrams so far (a mark for [`Wire::since`]).
    pub fn mark(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The datagrams after `mark`.
    pub fn since(&self, mark: usize) -> Vec<Datagram> {
        self.all().into_iter().skip(mark).collect()
    }

    /// The first request the client sent.
    pub fn first_request(&self) -> Datagram {
        self.sent()
            .into_iter()
            .find(|d| d.msg().code().is_request())
            .expect("the client sent a request")
    }

    /// Waits (bounded) until a datagram satisfies `what`, and returns it.
    pub async fn wait_for(&self, label: &str, what: impl Fn(&Datagram) -> bool) -> Datagram {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(d) = self.all().into_iter().find(|d| what(d)) {
                return d;
            }
            assert!(
                Instant::now() < deadline,
                "never saw {label}; the wire: {:#?}",
                self.summary()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// One line per datagram, for failure messages.
    pub fn summary(&self) -> Vec<String> {
        self.all().iter().map(describe_datagram).collect()
    }
}

/// `-> CON GET mid=1 token=ab ...` for failure messages.
pub fn describe_datagram(d: &Datagram) -> String {
    let arrow = if d.sent { "->" } else { "<-" };
    match Message::parse(&d.bytes) {
        Ok(m) => format!(
            "{arrow} {:?} {} mid={} token={:02x?} opts={:?} payload={}B",
            m.message_type(),
            m.code(),
            m.message_id(),
            m.token_bytes(),
            m.options().map(|o| o.number.0).collect::<Vec<_>>(),
            m.payload().len()
        ),
        Err(e) => format!("{arrow} unparseable ({e:?})"),
    }
}

/// A client with default settings whose datagrams are recorded.
pub fn traced_client() -> (Client, Wire) {
    traced_client_with(Config::default())
}

/// A client with `config` whose datagrams are recorded.
pub fn traced_client_with(config: Config) -> (Client, Wire) {
    let wire = Wire::default();
    let log = wire.0.clone();
    let peer: Mutex<Option<SocketAddr>> = Mutex::new(None);
    let client = Client::builder()
        .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .config(config)
        .trace(Arc::new(move |t| {
            let sent = t.direction == TraceDirection::Sent;
            {
                let mut peer = peer.lock().unwrap_or_else(|e| e.into_inner());
                let known = match *peer {
                    Some(p) => p,
                    None if sent => *peer.insert(t.peer),
                    None => return,
                };
                if known != t.peer {
                    return;
                }
            }
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Datagram {
                    sent,
                    peer: t.peer,
                    bytes: t.datagram.to_vec(),
                });
        }))
        .build()
        .expect("start a client");
    (client, wire)
}

/// A client on 127.0.0.1 (no trace), e.g. to change a resource others observe.
pub fn plain_client() -> Client {
    Client::builder()
        .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .build()
        .expect("start a client")
}

/// Sends `request` and returns its response, failing the test on an error or after
/// [`WAIT`].
pub async fn send(request: RequestBuilder) -> Response {
    let uri = request.uri().to_string();
    match request.timeout(WAIT).send().await {
        Ok(r) => r,
        Err(e) => panic!("request to {uri} failed: {e}"),
    }
}

/// The next item of an observation within [`WAIT`]: a response, or `None` when it ended.
pub async fn next_notification(stream: &mut ResponseStream) -> Option<Response> {
    match tokio::time::timeout(WAIT, stream.next()).await {
        Ok(Some(Ok(r))) => Some(r),
        Ok(Some(Err(e))) => panic!("observation failed: {e}"),
        Ok(None) => None,
        Err(_) => panic!("no notification within {WAIT:?}"),
    }
}

/// RFC 7641 §3.4: whether Observe value `v2` is newer than `v1` (24-bit serial numbers).
pub fn is_newer(v1: u32, v2: u32) -> bool {
    let diff = v2.wrapping_sub(v1) & 0xFF_FFFF;
    diff != 0 && diff < 1 << 23
}

/// Which way a datagram went through the [`Relay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToServer,
    ToClient,
}

/// One datagram the relay saw, and whether it dropped it.
#[derive(Debug, Clone)]
pub struct Relayed {
    pub direction: Direction,
    pub bytes: Vec<u8>,
    pub dropped: bool,
}

impl Relayed {
    /// The datagram parsed as a CoAP message, if it is one.
    pub fn msg(&self) -> Option<Message<'_>> {
        Message::parse(&self.bytes).ok()
    }
}

type DropRule = Box<dyn FnMut(Direction, &Message<'_>) -> bool + Send>;

/// A UDP relay between one client and a server on loopback that drops what a rule says
/// (a lossy link) and records everything; stopped when dropped.
pub struct Relay {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Relayed>>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    /// Relays between the client of `addr` (whoever last sent a request) and `server`;
    /// `drop` decides per message.
    pub fn start(
        server: SocketAddr,
        drop: impl FnMut(Direction, &Message<'_>) -> bool + Send + 'static,
    ) -> Relay {
        let front = Arc::new(UdpSocket::bind("127.0.0.1:0").expect("bind relay front"));
        let back = Arc::new(UdpSocket::bind("127.0.0.1:0").expect("bind relay back"));
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(20)))
                .expect("read timeout");
        }
        let addr = front.local_addr().expect("relay address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let rule: Arc<Mutex<DropRule>> = Arc::new(Mutex::new(Box::new(drop)));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::new(Mutex::new(None));
        let pump = |from: Arc<UdpSocket>, to: Arc<UdpSocket>, direction: Direction| {
            let (log, stop, rule, client) =
                (log.clone(), stop.clone(), rule.clone(), client.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 2048];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, source)) = from.recv_from(&mut buf) else {
                        continue;
                    };
                    let bytes = buf[..n].to_vec();
                    // Whoever sends a request is the client (one at a time); anything else
                    // from another address (a late answer to an earlier owner of the port)
                    // is ignored.
                    let destination = match direction {
                        Direction::ToServer => {
                            let mut client = client.lock().unwrap_or_else(|e| e.into_inner());
                            if *client != Some(source) {
                                let request =
                                    Message::parse(&bytes).is_ok_and(|m| m.code().is_request());
                                if !request {
                                    continue;
                                }
                                *client = Some(source);
                            }
                            Some(server)
                        }
                        Direction::ToClient if source != server => continue,
                        Direction::ToClient => *client.lock().unwrap_or_else(|e| e.into_inner()),
                    };
                    let dropped = match Message::parse(&bytes) {
                        Ok(m) => (rule.lock().unwrap_or_else(|e| e.into_inner()))(direction, &m),
                        Err(_) => false,
                    };
                    // Logged before it is passed on, so the log is complete by the time
                    // the receiver reacts.
                    log.lock().unwrap_or_else(|e| e.into_inner()).push(Relayed {
                        direction,
                        bytes: bytes.clone(),
                        dropped,
                    });
                    if let (false, Some(to_addr)) = (dropped, destination) {
                        let _ = to.send_to(&bytes, to_addr);
                    }
                }
            })
        };
        let threads = vec![
            pump(front.clone(), back.clone(), Direction::ToServer),
            pump(back, front, Direction::ToClient),
        ];
        Relay {
            addr,
            log,
            stop,
            threads,
        }
    }

    /// A relay that drops nothing (a tap).
    pub fn tap(server: SocketAddr) -> Relay {
        Relay::start(server, |_, _| false)
    }

    /// `coap://ADDR` of the relay followed by `path_and_query`.
    pub fn uri(&self, path_and_query: &str) -> String {
        format!("coap://{}{path_and_query}", self.addr)
    }

    /// Everything relayed or dropped so far.
    pub fn log(&self) -> Vec<Relayed> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// One line per datagram, for failure messages.
    pub fn summary(&self) -> Vec<String> {
        self.log()
            .iter()
            .map(|r| {
                let d = Datagram {
                    sent: r.direction == Direction::ToServer,
                    peer: self.addr,
                    bytes: r.bytes.clone(),
                };
                let drop = if r.dropped { " (dropped)" } else { "" };
                format!("{}{drop}", describe_datagram(&d))
            })
            .collect()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The aiocoap virtual environment `scripts/test.sh` creates (`target/venv`).
pub fn venv_bin(program: &str) -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/venv");
    let path = venv.join("bin").join(program);
    assert!(
        path.is_file(),
        "{} not found: create the aiocoap environment with \
         `python3 -m venv target/venv && target/venv/bin/pip install 'aiocoap[oscore]=={}'` \
         (scripts/test.sh does this when it is missing)",
        path.display(),
        AIOCOAP_VERSION
    );
    path
}

/// The aiocoap release the tests were written against (pinned in scripts/test.sh).
pub const AIOCOAP_VERSION: &str = "0.4.17";
