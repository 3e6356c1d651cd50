//! The server of the fading-goodput experiment: answers every GET with a representation of
//! the run's payload size, piggy-backed in the ACK and in one datagram up to 1200 bytes.

use covey_core::Code;
use covey_proto::{App, AppContext, Event, Response};

/// A server with one resource of a fixed size.
#[derive(Debug)]
pub struct PayloadServer {
    representation: Vec<u8>,
    /// Requests answered.
    pub answered: u64,
}

impl PayloadServer {
    /// A server whose resource is `payload_bytes` long.
    pub fn new(payload_bytes: usize) -> PayloadServer {
        PayloadServer {
            representation: vec![b'x'; payload_bytes],
            answered: 0,
        }
    }
}

impl App for PayloadServer {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let Event::Request(id) = event else {
            return;
        };
        let response = Response {
            code: Code::CONTENT,
            options: &[],
            payload: &self.representation,
        };
        if cx.endpoint.respond(cx.now, id, &response).is_ok() {
            self.answered += 1;
        }
    }
}
