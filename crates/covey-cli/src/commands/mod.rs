//! One module per `covey` subcommand.

mod amplification;
pub mod client;
pub mod decode;
pub mod dtls_args;
pub mod entity;
pub mod gateway;
pub mod lab;
mod management;
mod oscore_dir;
mod request_log;
pub mod serve;
mod signal;
mod start_error;
#[cfg(target_os = "linux")]
pub mod tunslip;
