//! Observe (RFC 7641): the client's freshness rule for notifications and the server's
//! registry of observers.

mod confirmable;
mod freshness;
pub(crate) mod notification_mids;
pub(crate) mod observer;
pub(crate) mod observer_index;
pub(crate) mod observer_share;
pub(crate) mod registry;
pub(crate) mod round;
mod round_transmit;

pub use freshness::{is_newer, FRESHNESS_WINDOW};
pub use observer::NotificationType;
