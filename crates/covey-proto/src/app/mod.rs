//! Application logic that runs unchanged in the field (tokio driver) and in the lab
//! (simulator): it reacts to engine events through an [`AppContext`] and acts on the engine.

mod app_set;
mod context;
mod host;
mod hosting;
mod lone;
mod peer_identity;

pub use crate::event::AppId;
pub use app_set::AppSet;
pub use context::AppContext;
pub use host::{GroupError, Host, LogLevel, NullHost};
pub use hosting::AppHosting;
pub use lone::Lone;
pub use peer_identity::PeerIdentity;

use crate::{Event, Received};

/// Synchronous application logic driven by an [`Endpoint`]'s events.
pub trait App {
    /// Called once before any event, e.g. to send first requests or set timers.
    fn start(&mut self, _cx: &mut AppContext<'_>) {}

    /// Called for every event routed to this App: requests it serves, responses and
    /// failures of its own requests, its own timers.
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event);

    /// Whether this App answers `request`; an [`AppSet`] offers each request to its Apps in
    /// order and gives it to the first that serves it. By default an App serves everything.
    fn serves(&self, _request: &Received<'_>) -> bool {
        true
    }
}

/// Hands every pending event of the engine and every fired timer to the lone `app`, in order.
pub fn dispatch_events<A: App + ?Sized>(app: &mut A, cx: &mut AppContext<'_>) {
    while let Some((_, event)) = cx.poll_event() {
        app.handle_event(cx, event);
    }
}
