//! The resources `covey serve` offers: the demo set and the ETSI plugtest set.

mod clock_text;
pub mod demo;
#[cfg(test)]
mod demo_on_network;
mod negotiation;
mod path;
pub mod plugtest;
#[cfg(test)]
mod plugtest_on_network;
mod reply;
#[cfg(test)]
mod test_network;
pub mod wall_clock;
