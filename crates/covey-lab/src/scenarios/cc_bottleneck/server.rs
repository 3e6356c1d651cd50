//! The server of the cc-bottleneck experiment: answers every GET at once with a small
//! representation (so the response rides piggy-backed in the ACK), anything else with 4.05.

use covey_core::Code;
use covey_proto::{App, AppContext, Event, IncomingId, Response};

/// The representation served: a short sensor reading, as in the paper's small resources.
pub const REPRESENTATION: &[u8] = b"21.5 C";

/// A server with one resource.
#[derive(Debug)]
pub struct ResourceServer {
    representation: Vec<u8>,
    /// Requests answered.
    pub answered: u64,
    /// Responses the engine refused (tables full).
    pub refused: u64,
}

impl Default for ResourceServer {
    /// The server of the paper's small resource, [`REPRESENTATION`].
    fn default() -> ResourceServer {
        ResourceServer::with_payload(REPRESENTATION.len())
    }
}

impl ResourceServer {
    /// A server whose representation has `bytes` bytes: [`REPRESENTATION`] repeated and cut.
    pub fn with_payload(bytes: usize) -> ResourceServer {
        ResourceServer {
            representation: REPRESENTATION.iter().copied().cycle().take(bytes).collect(),
            answered: 0,
            refused: 0,
        }
    }
}

impl App for ResourceServer {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let Event::Request(id) = event else {
            return;
        };
        if answer_get(cx, id, &self.representation) {
            self.answered += 1;
        } else {
            self.refused += 1;
        }
    }
}

/// Answers request `id`: a GET with `representation` (2.05), anything else with 4.05.
/// Returns whether the engine took the response.
pub fn answer_get(cx: &mut AppContext<'_>, id: IncomingId, representation: &[u8]) -> bool {
    let method = cx.endpoint.request(id).map(|r| r.message.code());
    let response = if method == Some(Code::GET) {
        Response {
            code: Code::CONTENT,
            options: &[],
            payload: representation,
        }
    } else {
        Response::new(Code::METHOD_NOT_ALLOWED)
    };
    cx.endpoint.respond(cx.now, id, &response).is_ok()
}
