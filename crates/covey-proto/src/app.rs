//! Application logic that runs unchanged in the field (tokio driver) and in the lab
//! (simulator): it reacts to engine events and acts on the engine.

use crate::{Endpoint, Event, Instant};

/// Synchronous application logic driven by an [`Endpoint`]'s events.
pub trait App {
    /// Called once before any event, e.g. to send first requests or set timers.
    fn start(&mut self, _endpoint: &mut Endpoint, _now: Instant) {}

    /// Called for every event the endpoint produces (requests, responses, failures, timers).
    fn handle_event(&mut self, endpoint: &mut Endpoint, now: Instant, event: Event);
}

/// Hands every pending event of `endpoint` to `app`, in order.
pub fn dispatch_events<A: App + ?Sized>(app: &mut A, endpoint: &mut Endpoint, now: Instant) {
    while let Some(event) = endpoint.poll_event() {
        app.handle_event(endpoint, now, event);
    }
}
