//! A client and a server endpoint wired back to back in memory, with one preallocated datagram
//! buffer: the smallest driver of a full request/response exchange, for the allocation test
//! and the exchange benchmark. Nothing here allocates after construction.
#![allow(dead_code)]

use covey_core::{CoapOption, Code, OptionNumber};
use covey_proto::{
    opt, Config, Duration, Endpoint, Event, Instant, LocalAddr, Request, RequestId, RequestParams,
    Response,
};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// GET /sensors/temp with Accept: application/json (50).
pub static REQUEST_OPTIONS: [CoapOption<'static>; 3] = [
    opt(OptionNumber::URI_PATH, b"sensors"),
    opt(OptionNumber::URI_PATH, b"temp"),
    opt(OptionNumber::ACCEPT, &[50]),
];

/// The 20-byte representation the server answers with.
pub const PAYLOAD: &[u8; 20] = b"21.5 Cel at sensor 7";

/// Content-Format: text/plain (0, encoded as an empty uint).
pub static RESPONSE_OPTIONS: [CoapOption<'static>; 1] = [opt(OptionNumber::CONTENT_FORMAT, &[])];

/// Size of the one datagram buffer the driver uses.
pub const DATAGRAM_BUFFER: usize = 1280;

/// Virtual time between a datagram leaving one endpoint and reaching the other. Two hops
/// make one exchange (5 ms), slow enough that message IDs never run out: 61 440 MIDs of
/// the other 15 blocks take 307 s > EXCHANGE_LIFETIME (247 s) before a block is reused.
pub const HOP: Duration = Duration::from_micros(2500);

pub fn addr(n: u16, port: u16) -> SocketAddr {
    SocketAddr::new(
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, n)),
        port,
    )
}

/// Two endpoints and the buffer that carries datagrams between them.
pub struct Pair {
    pub client: Endpoint,
    pub server: Endpoint,
    pub client_addr: SocketAddr,
    pub server_addr: SocketAddr,
    pub now: Instant,
    buf: Box<[u8]>,
    /// The client's security context when its requests are protected with OSCORE.
    #[cfg(feature = "oscore")]
    oscore: Option<covey_proto::OscoreContextId>,
}

impl Pair {
    /// Both endpoints with `config`.
    pub fn new(config: Config) -> Pair {
        Pair {
            client: Endpoint::new(config.clone(), 1).unwrap(),
            server: Endpoint::new(config, 2).unwrap(),
            client_addr: addr(1, 40_000),
            server_addr: addr(2, 5683),
            now: Instant::from_secs(1_000),
            buf: vec![0; DATAGRAM_BUFFER].into_boxed_slice(),
            #[cfg(feature = "oscore")]
            oscore: None,
        }
    }

    /// Both endpoints with `config`, the client protecting its requests with OSCORE under
    /// RFC 8613 Appendix C.1's contexts and the server verifying them.
    #[cfg(feature = "oscore")]
    pub fn protected(config: Config) -> Pair {
        use covey_oscore::{ContextInput, SecurityContext};
        let client = ContextInput {
            master_secret: &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
            master_salt: &[0x9e, 0x7c, 0xa9, 0x22, 0x23, 0x78, 0x63, 0x40],
            sender_id: &[],
            recipient_id: &[0x01],
            id_context: None,
        };
        let server = ContextInput {
            sender_id: &[0x01],
            recipient_id: &[],
            ..client
        };
        let mut pair = Pair::new(config);
        let derive = |input| SecurityContext::derive(input).expect("a context");
        pair.server
            .add_oscore_context(derive(&server))
            .expect("room for a context");
        pair.oscore = Some(
            pair.client
                .add_oscore_context(derive(&client))
                .expect("room for a context"),
        );
        pair
    }

    /// One GET through both endpoints, answered at once (piggy-backed in the ACK for CON,
    /// a NON response for NON); returns the payload length the client read.
    pub fn exchange(&mut self, confirmable: bool) -> usize {
        let id = self.send_request(confirmable);
        self.advance(HOP);
        self.pump();
        let inc = self.next_request();
        self.answer(inc);
        self.advance(HOP);
        self.pump();
        self.read_response(id)
    }

    /// One CON GET that the server answers only after its piggyback window: the server's
    /// timer sends an empty ACK, then the response goes as a separate CON that the client
    /// acknowledges. Exercises timers, the reply cache and dedup expiry.
    pub fn separate_exchange(&mut self) -> usize {
        let id = self.send_request(true);
        self.advance(HOP);
        self.pump();
        let inc = self.next_request();
        let window = self.server.config().piggyback_window;
        self.advance(window + HOP); // server timer fires: empty ACK
        self.pump();
        self.answer(inc); // separate CON response
        self.advance(HOP);
        self.pump(); // response to the client, its ACK back to the server
        self.read_response(id)
    }

    /// One CON GET answered with `payload` (sliced block-wise by the server's engine when it
    /// exceeds a block, and fetched to the end by the client's); returns the length of the
    /// whole body the client read, after checking it is `payload`.
    #[allow(dead_code)]
    pub fn exchange_with_payload(&mut self, payload: &[u8]) -> usize {
        let id = self.send_request(true);
        for _ in 0..64 {
            self.advance(HOP);
            self.pump();
            while let Some(event) = self.server.poll_event() {
                let Event::Request(inc) = event else { continue };
                let response = Response {
                    code: Code::CONTENT,
                    options: &RESPONSE_OPTIONS,
                    payload,
                };
                self.server
                    .respond(self.now, inc, &response)
                    .expect("respond");
            }
            while let Some(event) = self.client.poll_event() {
                if let Event::Response { id: got, key, last } = event {
                    let r = self.client.response(key).expect("response readable");
                    if got == id && last {
                        assert_eq!(r.payload(), payload, "the whole body arrived");
                        return r.payload().len();
                    }
                }
            }
        }
        panic!("no complete response after 64 round trips")
    }

    fn send_request(&mut self, confirmable: bool) -> RequestId {
        let request = Request {
            method: Code::GET,
            options: &REQUEST_OPTIONS,
            payload: &[],
        };
        let params = RequestParams {
            confirmable,
            ..RequestParams::default()
        };
        #[cfg(feature = "oscore")]
        if let Some(context) = self.oscore {
            return self
                .client
                .send_protected_request(self.now, self.server_addr, &request, params, context)
                .expect("send_protected_request");
        }
        self.client
            .send_request(self.now, self.server_addr, &request, params)
            .expect("send_request")
    }

    /// The request the server announces next, checked.
    fn next_request(&mut self) -> covey_proto::IncomingId {
        let Some(Event::Request(inc)) = self.server.poll_event() else {
            panic!("the server got no request");
        };
        let request = self.server.request(inc).expect("request readable");
        assert!(request
            .message
            .uri_path()
            .eq(["sensors", "temp"].iter().copied()));
        assert_eq!(request.message.accept().map(|f| f.0), Some(50));
        inc
    }

    fn answer(&mut self, inc: covey_proto::IncomingId) {
        let response = Response {
            code: Code::CONTENT,
            options: &RESPONSE_OPTIONS,
            payload: PAYLOAD,
        };
        self.server
            .respond(self.now, inc, &response)
            .expect("respond");
    }

    /// Reads the response to `id` and releases it; returns its payload length.
    fn read_response(&mut self, id: RequestId) -> usize {
        let mut len = None;
        while let Some(event) = self.client.poll_event() {
            match event {
                Event::Response { id: got, key, .. } if got == id => {
                    let r = self.client.response(key).expect("response readable");
                    assert_eq!(r.message.code(), Code::CONTENT);
                    assert_eq!(r.message.content_format().map(|f| f.0), Some(0));
                    len = Some(r.message.payload().len());
                }
                other => panic!("unexpected client event {other:?}"),
            }
        }
        len.expect("the client got no response")
    }

    /// Moves virtual time on and runs every timer that is due.
    pub fn advance(&mut self, d: Duration) {
        self.now = self.now + d;
        for ep in [&mut self.client, &mut self.server] {
            if ep.poll_timeout().is_some_and(|t| t <= self.now) {
                ep.handle_timeout(self.now);
            }
        }
    }

    /// Moves datagrams both ways until neither endpoint has anything to send.
    pub fn pump(&mut self) {
        loop {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit(self.now, &mut self.buf) {
                assert_eq!(t.destination, self.server_addr);
                self.server.handle_datagram(
                    self.now,
                    self.client_addr,
                    LocalAddr::UNICAST,
                    &self.buf[..t.size],
                );
                moved = true;
            }
            while let Some(t) = self.server.poll_transmit(self.now, &mut self.buf) {
                assert_eq!(t.destination, self.client_addr);
                self.client.handle_datagram(
                    self.now,
                    self.server_addr,
                    LocalAddr::UNICAST,
                    &self.buf[..t.size],
                );
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }
}
