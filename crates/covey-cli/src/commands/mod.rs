//! One module per `covey` subcommand.

pub mod client;
pub mod decode;
pub mod serve;
