//! The sans-IO CoAP endpoint: all protocol behaviour of RFC 7252, 7641 and 7959, driven by
//! datagrams and time passed in, producing datagrams, timers and events to be pulled out.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(any(test, feature = "testing"))]
extern crate std;

pub mod app;
mod block;
pub mod cc;
pub mod config;
pub mod endpoint;
pub mod event;
mod exchange;
mod hash;
mod message;
pub mod observe;
pub mod request;
mod rng;
pub mod stats;
mod storage;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;
pub mod transmission_parameters;

pub use app::{
    dispatch_events, App, AppContext, AppId, AppSet, GroupError, Host, LogLevel, NullHost,
};
pub use cc::Algorithm;
pub use config::Config;
pub use endpoint::{
    Endpoint, LocalAddr, Received, Reception, RequestError, RespondError, Transmit,
};
pub use event::{Event, Failure, IncomingId, RequestId, ResponseKey, TimerId};
pub use observe::NotificationType;
pub use request::{opt, Request, RequestParams, Response};
pub use stats::{DropCause, Stats};
pub use time::{Duration, Instant};
pub use transmission_parameters::TransmissionParameters;
