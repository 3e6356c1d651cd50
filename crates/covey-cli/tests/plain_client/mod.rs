//! A minimal CoAP client as RFC 7252, RFC 7641 and RFC 7959 describe it, and nothing more:
//! CON requests retransmitted with exponential back-off, piggy-backed and separate responses
//! (a CON one acknowledged), RST for a CON it has no use for (a ping included, §4.3),
//! Block2 continued at the size the server chose, and Observe with every CON notification
//! acknowledged. It knows no Echo (RFC 9175) and shares no code with Covey: its encoder and
//! parser are its own, so it stands in for the clients people run.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

const CON: u8 = 0;
const NON: u8 = 1;
const ACK: u8 = 2;
const RST: u8 = 3;
const GET: u8 = 1;
const OBSERVE: u16 = 6;
const URI_PATH: u16 = 11;
const BLOCK2: u16 = 23;

/// A message as this client sees one.
#[derive(Debug, Clone)]
pub struct Msg {
    pub kind: u8,
    pub code: u8,
    pub mid: u16,
    pub token: Vec<u8>,
    pub options: Vec<(u16, Vec<u8>)>,
    pub payload: Vec<u8>,
}

impl Msg {
    fn option(&self, number: u16) -> Option<&[u8]> {
        self.options
            .iter()
            .find(|(n, _)| *n == number)
            .map(|(_, v)| v.as_slice())
    }

    fn uint(&self, number: u16) -> Option<u32> {
        self.option(number)
            .map(|v| v.iter().fold(0u32, |a, &b| a << 8 | u32::from(b)))
    }
}

fn encode(m: &Msg) -> Vec<u8> {
    let mut out = vec![
        0x40 | m.kind << 4 | m.token.len() as u8,
        m.code,
        (m.mid >> 8) as u8,
        m.mid as u8,
    ];
    out.extend(&m.token);
    let mut last = 0u16;
    let mut options = m.options.clone();
    options.sort_by_key(|(n, _)| *n);
    for (number, value) in &options {
        let delta = number - last;
        last = *number;
        let nibble = |x: usize| match x {
            0..=12 => (x as u8, vec![]),
            13..=268 => (13, vec![(x - 13) as u8]),
            _ => (14, ((x - 269) as u16).to_be_bytes().to_vec()),
        };
        let (d, dx) = nibble(delta as usize);
        let (l, lx) = nibble(value.len());
        out.push(d << 4 | l);
        out.extend(dx);
        out.extend(lx);
        out.extend(value);
    }
    if !m.payload.is_empty() {
        out.push(0xff);
        out.extend(&m.payload);
    }
    out
}

fn parse(b: &[u8]) -> Option<Msg> {
    if b.len() < 4 || b[0] >> 6 != 1 {
        return None;
    }
    let tkl = usize::from(b[0] & 0x0f);
    let mut i = 4 + tkl;
    let token = b.get(4..i)?.to_vec();
    let mut options = Vec::new();
    let mut number = 0u16;
    let mut payload = Vec::new();
    while i < b.len() {
        if b[i] == 0xff {
            payload = b[i + 1..].to_vec();
            break;
        }
        let (d, l) = (b[i] >> 4, b[i] & 0x0f);
        i += 1;
        let mut ext = |x: u8| -> Option<usize> {
            Some(match x {
                13 => {
                    i += 1;
                    usize::from(*b.get(i - 1)?) + 13
                }
                14 => {
                    i += 2;
                    usize::from(u16::from_be_bytes([*b.get(i - 2)?, *b.get(i - 1)?])) + 269
                }
                15 => return None,
                x => usize::from(x),
            })
        };
        let delta = ext(d)?;
        let len = ext(l)?;
        number += delta as u16;
        options.push((number, b.get(i..i + len)?.to_vec()));
        i += len;
    }
    Some(Msg {
        kind: b[0] >> 4 & 3,
        code: b[1],
        mid: u16::from_be_bytes([b[2], b[3]]),
        token,
        options,
        payload,
    })
}

/// What one GET brought.
#[derive(Debug, Default)]
pub struct Fetched {
    /// The code of the last response, as class * 32 + detail.
    pub code: u8,
    /// The whole body (all blocks).
    pub body: Vec<u8>,
    /// Requests sent, retransmissions not counted: the round trips the GET took.
    pub round_trips: usize,
    /// Whether the first response was separate (an empty ACK first).
    pub separate: bool,
}

/// The client: one socket, one exchange at a time.
pub struct PlainClient {
    socket: UdpSocket,
    server: SocketAddr,
    next_mid: u16,
    next_token: u32,
}

impl PlainClient {
    /// A client of `server` on a fresh loopback socket.
    pub fn new(server: SocketAddr) -> PlainClient {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .expect("timeout");
        PlainClient {
            socket,
            server,
            next_mid: 0x1234,
            next_token: 0xC0DE_0001,
        }
    }

    fn send(&self, m: &Msg) {
        self.socket.send_to(&encode(m), self.server).expect("send");
    }

    fn recv(&self) -> Option<Msg> {
        let mut buf = [0u8; 2048];
        let (n, from) = self.socket.recv_from(&mut buf).ok()?;
        if from != self.server {
            return None;
        }
        parse(&buf[..n])
    }

    /// Acknowledges a CON response or notification; an empty ACK.
    fn ack(&self, m: &Msg) {
        self.send(&Msg {
            kind: ACK,
            code: 0,
            mid: m.mid,
            token: vec![],
            options: vec![],
            payload: vec![],
        });
    }

    /// Rejects a CON it has no use for (RFC 7252 §4.2), a ping included (§4.3).
    fn reset(&self, m: &Msg) {
        self.send(&Msg {
            kind: RST,
            code: 0,
            mid: m.mid,
            token: vec![],
            options: vec![],
            payload: vec![],
        });
    }

    /// Sends one CON request and returns its response (piggy-backed or separate), answering
    /// whatever else arrives meanwhile as RFC 7252 says; None after `limit`.
    fn exchange(&mut self, options: Vec<(u16, Vec<u8>)>, limit: Duration) -> Option<(Msg, bool)> {
        let request = Msg {
            kind: CON,
            code: GET,
            mid: self.next_mid,
            token: self.next_token.to_be_bytes().to_vec(),
            options,
            payload: vec![],
        };
        self.next_mid = self.next_mid.wrapping_add(1);
        self.next_token = self.next_token.wrapping_add(1);
        let end = Instant::now() + limit;
        let mut timeout = Duration::from_secs(2);
        let mut next_send = Instant::now();
        let mut acked = false;
        let mut retransmissions = 0;
        while Instant::now() < end {
            if !acked && Instant::now() >= next_send && retransmissions <= 4 {
                self.send(&request);
                next_send = Instant::now() + timeout;
                timeout *= 2;
                retransmissions += 1;
            }
            let Some(m) = self.recv() else { continue };
            match m.kind {
                ACK if m.mid == request.mid && m.code == 0 => acked = true,
                ACK if m.mid == request.mid && m.token == request.token => {
                    return Some((m, false));
                }
                CON | NON if m.code != 0 && m.token == request.token => {
                    if m.kind == CON {
                        self.ack(&m);
                    }
                    return Some((m, acked));
                }
                CON => self.reset(&m),
                _ => {}
            }
        }
        None
    }

    /// GETs `path` ('/'-separated), block by block at the size the server chose.
    pub fn get(&mut self, path: &str, limit: Duration) -> Fetched {
        let end = Instant::now() + limit;
        let mut fetched = Fetched::default();
        let mut block: Option<(u32, u8)> = None;
        loop {
            let mut options = path_options(path);
            if let Some((num, szx)) = block {
                let value = num << 4 | u32::from(szx);
                let bytes = value.to_be_bytes();
                let skip = bytes.iter().take_while(|b| **b == 0).count().min(3);
                options.push((BLOCK2, bytes[skip..].to_vec()));
            }
            fetched.round_trips += 1;
            let left = end.saturating_duration_since(Instant::now());
            let Some((m, separate)) = self.exchange(options, left) else {
                return fetched;
            };
            if fetched.round_trips == 1 {
                fetched.separate = separate;
            }
            fetched.code = m.code;
            fetched.body.extend(&m.payload);
            match m.uint(BLOCK2) {
                Some(v) if v & 0x8 != 0 => block = Some(((v >> 4) + 1, (v & 7) as u8)),
                _ => return fetched,
            }
        }
    }

    /// Registers as an observer of `path` and collects the payloads of the registration's
    /// answer and of `count` notifications (acknowledging CON ones), within `limit`.
    pub fn observe(&mut self, path: &str, count: usize, limit: Duration) -> Vec<Vec<u8>> {
        let end = Instant::now() + limit;
        let mut options = path_options(path);
        options.push((OBSERVE, vec![]));
        let Some((first, _)) = self.exchange(options, limit) else {
            return Vec::new();
        };
        let mut seen = vec![first.payload.clone()];
        while seen.len() <= count && Instant::now() < end {
            let Some(m) = self.recv() else { continue };
            match m.kind {
                CON | NON if m.code != 0 && m.token == first.token => {
                    if m.kind == CON {
                        self.ack(&m);
                    }
                    seen.push(m.payload);
                }
                CON => self.reset(&m),
                _ => {}
            }
        }
        seen
    }
}

fn path_options(path: &str) -> Vec<(u16, Vec<u8>)> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| (URI_PATH, s.as_bytes().to_vec()))
        .collect()
}

#[test]
fn its_codec_round_trips() {
    let m = Msg {
        kind: NON,
        code: GET,
        mid: 7,
        token: vec![1, 2],
        options: vec![
            (URI_PATH, b"a".to_vec()),
            (BLOCK2, vec![0x16]),
            (300, vec![0; 20]),
        ],
        payload: b"x".to_vec(),
    };
    let back = parse(&encode(&m)).expect("parses");
    assert_eq!((back.kind, back.code, back.mid), (NON, GET, 7));
    assert_eq!(back.options, m.options);
    assert_eq!(back.payload, b"x");
}
