//! The resources `covey serve` offers: the demo set and the ETSI plugtest set.

mod clock_text;
pub mod demo;
mod negotiation;
pub mod plugtest;

pub use clock_text::utc_now;
