//! A CoAP server on loopback that breaks the rules as it is told, for the robustness tests:
//! each request is answered piggy-backed by a closure that sees the request, and requests
//! are counted.

#![allow(dead_code)]

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use covey_core::{Block, Code, Message, MessageEncoder, MessageType, OptionNumber};

/// Makes the answer (without message ID and token) to a request, or none.
pub type Answer = Box<dyn Fn(&Message<'_>) -> Option<Reply> + Send>;

/// What the server answers: an ACK with this code, options and payload.
pub struct Reply {
    /// The code, any of the 256.
    pub code: u8,
    /// Options, in ascending order.
    pub options: Vec<(OptionNumber, Vec<u8>)>,
    /// The payload.
    pub payload: Vec<u8>,
}

/// The server; it stops when dropped.
pub struct BadServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl BadServer {
    /// Starts one answering with `answer`.
    pub fn start(answer: Answer) -> BadServer {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind the bad server");
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .expect("read timeout");
        let port = socket.local_addr().expect("address").port();
        let requests = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, st) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            let mut out = [0u8; 1500];
            while !st.load(Ordering::Relaxed) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                let Ok(request) = Message::parse(&buf[..n]) else {
                    continue;
                };
                if !request.code().is_request() {
                    continue;
                }
                count.fetch_add(1, Ordering::Relaxed);
                let Some(reply) = answer(&request) else {
                    continue;
                };
                let len = encode(&request, &reply, &mut out);
                let _ = socket.send_to(&out[..len], from);
            }
        });
        BadServer {
            port,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// `coap://127.0.0.1:PORT/x`.
    pub fn uri(&self) -> String {
        format!("coap://127.0.0.1:{}/x", self.port)
    }
}

impl Drop for BadServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The ACK answering `request` with `reply`, written into `out`; its length. The code byte
/// is written by hand, since the encoder takes only codes a message may carry.
fn encode(request: &Message<'_>, reply: &Reply, out: &mut [u8]) -> usize {
    let token = request.token();
    let mut enc = MessageEncoder::new(
        out,
        MessageType::Acknowledgement,
        Code::CONTENT,
        request.message_id(),
        token.as_bytes(),
    )
    .expect("header");
    for (number, value) in &reply.options {
        enc.option(*number, value).expect("option");
    }
    if !reply.payload.is_empty() {
        enc.payload(&reply.payload).expect("payload");
    }
    let len = enc.finish();
    out[1] = reply.code;
    len
}

/// Answers every request with `code` and nothing else.
pub fn answering_code(code: u8) -> Answer {
    Box::new(move |_| {
        Some(Reply {
            code,
            options: Vec::new(),
            payload: Vec::new(),
        })
    })
}

/// Answers every request with Block2 block 0 of 64 bytes, more to come (RFC 7959 forbids
/// it for any request but the first).
pub fn always_block_zero() -> Answer {
    Box::new(|_| {
        let mut b = [0u8; 4];
        let block = Block::new(0, true, 2).expect("block");
        Some(Reply {
            code: 0x45,
            options: vec![(OptionNumber::BLOCK2, block.encode(&mut b).to_vec())],
            payload: vec![b'x'; 64],
        })
    })
}
