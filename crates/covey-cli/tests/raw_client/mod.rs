//! A loopback client that sends hand-made datagrams (options in any combination, any
//! size) and reads the answers, for the robustness tests.

#![allow(dead_code)]

use std::net::{IpAddr, UdpSocket};
use std::time::Duration;

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};

/// How long one answer may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// A loopback client socket talking to `port` with hand-made datagrams.
pub struct Raw {
    socket: UdpSocket,
    /// The message ID of the last request.
    pub next_mid: u16,
}

/// One answer: its code, options and payload.
#[derive(Clone)]
pub struct Answer {
    /// Its type.
    pub kind: MessageType,
    /// Its code.
    pub code: Code,
    /// Its message ID.
    pub mid: u16,
    /// Its ETag.
    pub etag: Option<Vec<u8>>,
    /// Its Size1.
    pub size1: Option<u32>,
    /// Its Max-Age.
    pub max_age: Option<u32>,
    /// Whether it has a Block1 option.
    pub block1: bool,
    /// Its payload.
    pub payload: Vec<u8>,
    /// Its Echo value (RFC 9175).
    pub echo: Option<Vec<u8>>,
    /// The datagram it came in.
    pub datagram: Vec<u8>,
}

impl Raw {
    /// A socket on 127.0.0.1 talking to `port`.
    pub fn to(port: u16) -> Raw {
        Raw::from_ip("127.0.0.1".parse().expect("an address"), port)
    }

    /// A socket on `ip` (any 127/8 address is loopback) talking to 127.0.0.1:`port`.
    pub fn from_ip(ip: IpAddr, port: u16) -> Raw {
        let socket = UdpSocket::bind((ip, 0)).expect("bind");
        socket.connect(("127.0.0.1", port)).expect("connect");
        socket
            .set_read_timeout(Some(ANSWER_WITHIN))
            .expect("timeout");
        Raw {
            socket,
            next_mid: 0x4000,
        }
    }

    /// Sends a CON request with `options` (in ascending order) and `payload`; returns its
    /// answer.
    pub fn ask(
        &mut self,
        method: Code,
        options: &[(OptionNumber, &[u8])],
        payload: &[u8],
    ) -> Answer {
        let mid = self.send(MessageType::Confirmable, method, options, payload);
        self.read(mid)
    }

    /// [`Raw::ask`], answering a 4.01 with Echo as a client that receives at its address
    /// does: the request is sent again with the value, and that answer returned.
    pub fn ask_verified(
        &mut self,
        method: Code,
        options: &[(OptionNumber, &[u8])],
        payload: &[u8],
    ) -> Answer {
        let answer = self.ask(method, options, payload);
        let echo = match (&answer.echo, answer.code) {
            (Some(echo), Code::UNAUTHORIZED) => echo.clone(),
            _ => return answer,
        };
        let mut with_echo = options.to_vec();
        with_echo.push((OptionNumber::ECHO, &echo));
        with_echo.sort_by_key(|(number, _)| number.0);
        self.ask(method, &with_echo, payload)
    }

    /// Sends a request of type `kind` without waiting; returns its message ID.
    pub fn send(
        &mut self,
        kind: MessageType,
        method: Code,
        options: &[(OptionNumber, &[u8])],
        payload: &[u8],
    ) -> u16 {
        self.next_mid += 1;
        let mid = self.next_mid;
        let mut buf = vec![0u8; 2048 + payload.len()];
        let token = mid.to_be_bytes();
        let mut enc = MessageEncoder::new(&mut buf, kind, method, mid, &token).expect("header");
        for (number, value) in options {
            enc.option(*number, value).expect("option");
        }
        if !payload.is_empty() {
            enc.payload(payload).expect("payload");
        }
        let n = enc.finish();
        self.socket.send(&buf[..n]).expect("send");
        mid
    }

    /// Sends `datagram` as it is and returns the answer to its message ID.
    pub fn ask_datagram(&mut self, datagram: &[u8]) -> Answer {
        self.socket.send(datagram).expect("send");
        let mid = Message::parse(datagram)
            .expect("a datagram with a header")
            .message_id();
        self.read(mid)
    }

    /// Sends `datagram` as it is, without waiting for an answer.
    pub fn send_datagram(&mut self, datagram: &[u8]) {
        self.socket.send(datagram).expect("send");
    }

    /// The next `count` answers, fewer if none comes for three seconds.
    pub fn next_answers(&self, count: usize) -> Vec<Answer> {
        let mut all = Vec::new();
        let mut buf = [0u8; 2048];
        while all.len() < count {
            match self.socket.recv(&mut buf) {
                Ok(n) => all.extend(Answer::parse(&buf[..n])),
                Err(_) => break,
            }
        }
        all
    }

    /// Every answer that arrives within `wait`.
    pub fn answers_within(&self, wait: Duration) -> Vec<Answer> {
        let deadline = std::time::Instant::now() + wait;
        let mut all = Vec::new();
        let mut buf = [0u8; 2048];
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            let _ = self
                .socket
                .set_read_timeout(Some(left.max(Duration::from_millis(1))));
            match self.socket.recv(&mut buf) {
                Ok(n) => all.extend(Answer::parse(&buf[..n])),
                Err(_) => break,
            }
        }
        let _ = self.socket.set_read_timeout(Some(ANSWER_WITHIN));
        all
    }

    /// The answer to request `mid` (earlier answers are skipped).
    fn read(&self, mid: u16) -> Answer {
        let mut buf = [0u8; 2048];
        loop {
            let n = self
                .socket
                .recv(&mut buf)
                .unwrap_or_else(|e| panic!("no answer to message {mid:#x}: {e}"));
            let answer = Answer::parse(&buf[..n]).expect("a well-formed answer");
            if answer.mid == mid {
                return answer;
            }
        }
    }
}

impl Answer {
    /// Its code and payload, for assertion messages.
    pub fn text(&self) -> String {
        format!("{} {}", self.code, String::from_utf8_lossy(&self.payload))
    }

    fn parse(datagram: &[u8]) -> Option<Answer> {
        let m = Message::parse(datagram).ok()?;
        Some(Answer {
            kind: m.message_type(),
            code: m.code(),
            mid: m.message_id(),
            etag: m.option(OptionNumber::ETAG).map(<[u8]>::to_vec),
            size1: m.uint_option(OptionNumber::SIZE1),
            max_age: m.uint_option(OptionNumber::MAX_AGE),
            block1: m.block1().is_some(),
            payload: m.payload().to_vec(),
            echo: m.option(OptionNumber::ECHO).map(<[u8]>::to_vec),
            datagram: datagram.to_vec(),
        })
    }
}

/// A Uri-Path option.
pub fn path(segment: &str) -> (OptionNumber, &[u8]) {
    (OptionNumber::URI_PATH, segment.as_bytes())
}
