//! The resources `covey serve` offers: the demo set and the ETSI plugtest set.

mod clock_text;
pub mod demo;
#[cfg(test)]
mod demo_on_network;
mod negotiation;
mod path;
pub mod plugtest;
mod reply;
pub mod wall_clock;
