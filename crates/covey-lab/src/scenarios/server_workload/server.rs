//! The server of the server-workload experiment: answers every GET at once with a
//! representation that fills one IEEE 802.15.4 frame.

use covey_core::Code;
use covey_proto::{App, AppContext, Event, Response};

/// A server whose one resource fills a frame.
#[derive(Debug)]
pub struct FullFrameServer {
    representation: Vec<u8>,
    /// Requests that reached the server's application.
    pub received: u64,
    /// Responses the engine accepted.
    pub answered: u64,
}

impl FullFrameServer {
    /// A server answering with `payload_bytes` of payload.
    pub fn new(payload_bytes: usize) -> FullFrameServer {
        FullFrameServer {
            representation: vec![b'x'; payload_bytes],
            received: 0,
            answered: 0,
        }
    }
}

impl App for FullFrameServer {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let Event::Request(id) = event else {
            return;
        };
        self.received += 1;
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
