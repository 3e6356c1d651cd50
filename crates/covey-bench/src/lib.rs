//! The benchmarks of `covey bench` ([`coap`]), `covey bench-proxy` ([`proxy`]) and `covey
//! entity bench` ([`entity`]), which the `covey-bench` program of covey-cli runs.
//!
//! The load generator drives `covey_proto::Endpoint`s itself, in its own busy-polling loop
//! over batched UDP, not through the `covey` crate's tokio driver: that driver is one tokio
//! task per Endpoint reached through a channel with a oneshot reply per request, a hand-off
//! and a wake-up per request that would put the generator below the server it measures. The
//! `echo` floor row of `covey bench --against libcoap --floor` is the check.

pub mod coap;
pub mod entity;
mod error;
pub mod proxy;

pub use error::BenchError;
