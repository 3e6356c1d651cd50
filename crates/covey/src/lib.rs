//! The Covey CoAP runtime: a tokio driver running the sans-IO `covey-proto` endpoint over UDP
//! sockets, with an async [`Client`], a [`Server`] with a router and `/.well-known/core`, and
//! multicast group membership.
//!
//! ```no_run
//! # async fn demo() -> Result<(), covey::Error> {
//! let response = covey::Client::get("coap://[::1]/sensors/temp").await?;
//! println!("{} {}", response.code, String::from_utf8_lossy(&response.payload));
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod client;
mod clock;
pub mod driver;
pub mod dtls;
mod error;
pub mod multicast;
mod options;
mod request;
mod response;
pub mod server;
pub mod socket;

pub use client::{Client, ClientBuilder, RequestBuilder, ResponseStream};
pub use driver::{Driver, DriverBuilder, SequenceReservation, Trace, TraceDirection};
pub use error::Error;
pub use multicast::{Membership, MulticastError};
pub use options::Options;
pub use request::Request;
pub use response::Response;
pub use server::{Resource, Server, ServerBuilder};

pub use covey_core::{Code, ContentFormat, OptionNumber};
pub use covey_proto::{Config, ConfigError};

/// The default CoAP port (RFC 7252 §6.1).
pub const DEFAULT_PORT: u16 = 5683;
