//! What the DTLS tests share: a time limit, an App that names the requester, PSK configs.

use std::time::Duration;

use covey::dtls::{DtlsConfig, PskKeys};
use covey::Code;
use covey_proto::{App, AppContext, Event, Received};

/// A test never waits longer than this for one exchange.
pub const LIMIT: Duration = Duration::from_secs(10);

/// Answers `/whoami` with the identity the requester proved, `nobody` in the
/// clear.
pub struct WhoAmI;

impl App for WhoAmI {
    fn serves(&self, request: &Received<'_>) -> bool {
        let mut path = request.message.uri_path();
        path.next() == Some("whoami") && path.next().is_none()
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        if let Event::Request(id) = event {
            let Some(request) = cx.endpoint.request(id) else {
                return;
            };
            let who = cx
                .peer_identity(&request)
                .map_or("nobody".to_string(), |i| i.to_string());
            let response = covey_proto::Response::with_payload(Code::CONTENT, who.as_bytes());
            let _ = cx.endpoint.respond(cx.now, id, &response);
        }
    }
}

/// A PSK configuration from `identity:key` lines.
pub fn psk(text: &str) -> DtlsConfig {
    DtlsConfig::psk(PskKeys::parse(text, "test").unwrap())
}
