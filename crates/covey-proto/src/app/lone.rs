//! One App alone on a node, hosted without boxing or routing.

use super::{dispatch_events, App, AppContext};
use crate::node::Apps;

/// One App alone on a node: every event is its own, so nothing needs routing.
#[derive(Debug, Default)]
pub struct Lone<A>(pub A);

impl<A: App> Apps for Lone<A> {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.0.start(cx);
    }

    fn dispatch(&mut self, cx: &mut AppContext<'_>) {
        dispatch_events(&mut self.0, cx);
    }
}
