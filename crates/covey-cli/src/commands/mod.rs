//! One module per `covey` subcommand.

pub mod bench;
pub mod client;
pub mod decode;
pub mod entity;
pub mod gateway;
pub mod lab;
pub mod serve;
mod signal;
