//! One module per `covey` subcommand.

pub mod decode;
