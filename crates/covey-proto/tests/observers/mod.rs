//! Observers registered on a server endpoint by hand-written datagrams from four client
//! sockets, as `covey bench --observers` registers them: each observation has its own token
//! (the observer's number), so a test can tell every notification's observer apart.
#![allow(dead_code)]

use crate::pair::addr;
use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{Endpoint, Event, Instant, LocalAddr, Response};
use std::net::SocketAddr;

/// The resource observed.
pub const RESOURCE: u64 = 1;

/// The client socket observer `k` registers from.
pub fn source(k: usize) -> SocketAddr {
    addr(9, 40_000 + (k % 4) as u16)
}

/// Registers observer `k` (token: `k` as 8 bytes) with a NON GET /time carrying Observe 0;
/// the server answers with `response`. A source the server has not verified yet gets that
/// answer as a CON, which it acknowledges as a real client does (and a 4.01 with Echo, were
/// it challenged, would be answered with the value). `buf` and `out` are scratch buffers.
pub fn register(
    server: &mut Endpoint,
    now: Instant,
    k: usize,
    response: &Response<'_>,
    buf: &mut [u8],
    out: &mut [u8],
) {
    let token = (k as u64).to_be_bytes();
    let mut echo: Option<Vec<u8>> = None;
    loop {
        let size = {
            let mut enc = MessageEncoder::new(
                &mut *buf,
                MessageType::NonConfirmable,
                Code::GET,
                k as u16,
                &token,
            )
            .expect("header");
            enc.option(OptionNumber::OBSERVE, &[]).expect("observe");
            enc.option(OptionNumber::URI_PATH, b"time").expect("path");
            if let Some(echo) = &echo {
                enc.option(OptionNumber::ECHO, echo).expect("echo");
            }
            enc.finish()
        };
        server.handle_datagram(now, source(k), LocalAddr::UNICAST, &buf[..size]);
        let mut registered = false;
        while let Some(event) = server.poll_event() {
            if let Event::Request(id) = event {
                assert_eq!(
                    server.respond_observable(now, id, RESOURCE, response),
                    Ok(true),
                    "registered"
                );
                registered = true;
            }
        }
        let mut challenge = None;
        let mut confirmable = Vec::new();
        while let Some(t) = server.poll_transmit(now, out) {
            let m = Message::parse(&out[..t.size]).expect("a well-formed answer");
            if m.code() == Code::UNAUTHORIZED {
                challenge = m.option(OptionNumber::ECHO).map(<[u8]>::to_vec);
            }
            if m.message_type() == MessageType::Confirmable {
                confirmable.push(m.message_id());
            }
        }
        for mid in confirmable {
            let [high, low] = mid.to_be_bytes();
            let ack = [0x60, 0x00, high, low];
            server.handle_datagram(now, source(k), LocalAddr::UNICAST, &ack);
        }
        match challenge {
            Some(value) if !registered && echo.is_none() => echo = Some(value),
            _ => {
                assert!(registered, "observer {k} registered");
                return;
            }
        }
    }
}

/// The observer a notification is for (its token), with its Observe value and payload.
pub fn notification_of(datagram: &[u8]) -> (usize, u32, &[u8]) {
    let m = Message::parse(datagram).expect("a well-formed notification");
    let token = m.token_bytes();
    let mut be = [0u8; 8];
    be[8 - token.len()..].copy_from_slice(token);
    let observe = m
        .options()
        .find(|o| o.number == OptionNumber::OBSERVE)
        .map(|o| o.value.iter().fold(0u32, |v, &b| (v << 8) | b as u32))
        .expect("an Observe option");
    (u64::from_be_bytes(be) as usize, observe, m.payload())
}
