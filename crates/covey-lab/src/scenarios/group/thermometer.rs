//! A member's sensor resource, as the testbed's Erbium servers had: `GET /s/t` answers a
//! temperature as text/plain at once (piggy-backed on the ACK of a CON request; after the
//! engine's leisure for a multicast one).

use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, App, AppContext, Event, Received, Response};

/// The path of the sensor resource.
pub const SENSOR_PATH: [&str; 2] = ["s", "t"];

/// The sensor App of one member.
#[derive(Debug, Clone)]
pub struct Thermometer {
    reading: String,
    /// Requests answered.
    pub answered: u64,
}

impl Thermometer {
    /// A sensor that reads `celsius`.
    pub fn new(celsius: f64) -> Thermometer {
        Thermometer {
            reading: format!("{celsius:.1}"),
            answered: 0,
        }
    }
}

impl App for Thermometer {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let Event::Request(id) = event else { return };
        let mut cf = [0u8; 4];
        let options = [opt(
            OptionNumber::CONTENT_FORMAT,
            uint::encode(u32::from(ContentFormat::TEXT_PLAIN.0), &mut cf),
        )];
        let response = Response {
            code: Code::CONTENT,
            options: &options,
            payload: self.reading.as_bytes(),
        };
        if cx.endpoint.respond(cx.now, id, &response).is_ok() {
            self.answered += 1;
        }
    }

    fn serves(&self, request: &Received<'_>) -> bool {
        request.message.code() == Code::GET && request.message.uri_path().eq(SENSOR_PATH)
    }
}
