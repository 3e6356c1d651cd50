//! Observe (RFC 7641): the client's freshness rule for notifications and the server's
//! observers with their notification rounds.

mod freshness;
pub(crate) mod notification_mids;
pub(crate) mod observer;
pub(crate) mod observer_index;
pub(crate) mod observers;
pub(crate) mod round;

pub use freshness::{is_newer, FRESHNESS_WINDOW};
pub use observer::NotificationType;
