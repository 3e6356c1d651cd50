//! The Covey lab: the scenarios that reproduce the seed papers' experiments, run on the
//! discrete-event simulator (covey-sim) or on real stacks in the Linux emulator (covey-emu),
//! and the reports they write (CSV, JSON, SVG, Markdown).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod framework;
pub mod pages;
pub mod report;
pub mod scenarios;

pub use covey_sim::stats;
pub use error::LabError;
