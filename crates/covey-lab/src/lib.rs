//! The Covey lab: a discrete-event simulator on virtual time whose nodes run the real
//! covey-proto `Endpoint` and `App`s over modelled links and radios, and the scenarios that
//! reproduce the seed papers' experiments.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(target_os = "linux")]
pub mod emu;
mod error;
pub mod framework;
pub mod media;
mod paper_coap;
pub mod report;
pub mod scenarios;
pub mod sim;
pub mod stats;

pub use error::LabError;
pub use paper_coap::paper_config;
