//! The sans-IO CoAP endpoint: all protocol behaviour of RFC 7252, 7641 and 7959, driven by
//! datagrams and time passed in, producing datagrams, timers and events to be pulled out.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod cc;
pub mod time;

pub use time::{Duration, Instant};
