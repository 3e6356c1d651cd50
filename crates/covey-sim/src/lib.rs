//! The Covey simulator: a deterministic discrete-event simulator on virtual time whose nodes
//! run the real covey-proto `Endpoint` and `App`s ([`sim`]) over modelled links, queues,
//! losses and an IEEE 802.15.4 radio ([`media`]). The same seed gives the same run on any
//! machine. It is pure computation: no tokio, no threads, no sockets, no Linux-only code, and
//! no dependency on the emulator (`covey-emu`) or the scenarios (`covey-lab`), which build on
//! it.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod media;
mod paper_coap;
pub mod sim;
pub mod stats;

pub use paper_coap::paper_config;
