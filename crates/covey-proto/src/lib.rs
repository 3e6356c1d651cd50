//! The sans-IO CoAP endpoint: all protocol behaviour of RFC 7252, 7641 and 7959, driven by
//! datagrams and time passed in, producing datagrams, timers and events to be pulled out.
//!
//! A complete drive loop: a client GETs `/hello` from a server over a lossless network on
//! virtual time. A driver does the same with sockets and a clock, a simulator with its links;
//! [`Node`] runs [`App`]s in the same loop.
//!
//! ```
//! use covey_core::{Code, OptionNumber};
//! use covey_proto::{opt, Config, Endpoint, Event, Instant, LocalAddr, Request, RequestParams, Response};
//!
//! let (c, s) = ("[::1]:40000".parse().unwrap(), "[::1]:5683".parse().unwrap());
//! let (mut client, mut server) = (Endpoint::new(Config::default(), 1)?, Endpoint::new(Config::default(), 2)?);
//! let (mut now, mut buf) = (Instant::from_secs(0), [0u8; 1152]);
//! let get = Request { options: &[opt(OptionNumber::URI_PATH, b"hello")], ..Request::new(Code::GET) };
//! let id = client.send_request(now, s, &get, RequestParams::default()).unwrap();
//! loop {
//!     while let Some(t) = client.poll_transmit(now, &mut buf) {
//!         server.handle_datagram(now, c, LocalAddr::UNICAST, &buf[..t.size]);
//!     }
//!     while let Some(Event::Request(incoming)) = server.poll_event() {
//!         server.respond(now, incoming, &Response::with_payload(Code::CONTENT, b"world")).unwrap();
//!     }
//!     while let Some(t) = server.poll_transmit(now, &mut buf) {
//!         client.handle_datagram(now, s, LocalAddr::UNICAST, &buf[..t.size]);
//!     }
//!     if let Some(Event::Response { id: answered, key, .. }) = client.poll_event() {
//!         assert_eq!((answered, client.response(key).unwrap().payload()), (id, &b"world"[..]));
//!         break;
//!     }
//!     // Nothing left to do now: jump virtual time to the next timer (a retransmission, ...).
//!     now = client.poll_timeout().into_iter().chain(server.poll_timeout()).min().unwrap();
//!     client.handle_timeout(now);
//!     server.handle_timeout(now);
//! }
//! # Ok::<(), covey_proto::ConfigError>(())
//! ```
//!
//! The source tree follows the protocol's layers, each using only those below it (a test
//! checks the file graph): `storage` and the foundation files (time, config, events, `cc`);
//! `message` (RFC 7252 §4: encoding, deduplication, reply cache, confirmable transmissions,
//! empty ACK/RST, option recognition, the outbox); `exchange` (§5: client exchanges and their
//! NSTART queues, incoming exchanges); `observe` (RFC 7641) and `block` (RFC 7959); then the
//! `endpoint` facade, the `app` host and the [`Node`] drive loop.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(any(test, feature = "testing"))]
extern crate std;

pub mod amplification_limit;
pub mod app;
mod block;
pub mod cc;
pub mod config;
pub mod endpoint;
pub mod event;
mod exchange;
mod hash;
mod message;
mod node;
pub mod observe;
pub mod request;
mod rng;
// SipHash for the tables where foldhash is not used, and for the Echo MACs.
#[cfg(any(
    test,
    feature = "address-validation",
    not(all(target_has_atomic = "ptr", feature = "hash-tables"))
))]
mod sip;
pub mod stats;
mod storage;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;
pub mod transmission_parameters;

pub use amplification_limit::AmplificationLimit;
pub use app::{
    dispatch_events, App, AppContext, AppHosting, AppId, AppSet, GroupError, Host, LogLevel, Lone,
    NullHost, PeerIdentity,
};
pub use cc::Algorithm;
pub use config::{Config, ConfigError};
pub use endpoint::{
    Endpoint, LocalAddr, Received, Reception, RequestError, RespondError, Transmit,
};
pub use event::{Event, Failure, IncomingId, RequestId, ResponseKey, TimerId};
pub use node::{Apps, Node};
pub use observe::NotificationType;
pub use request::{opt, Request, RequestParams, Response};
pub use stats::{DropCause, Stats};
pub use storage::fair_share::Source as TrafficSource;
pub use time::{Duration, Instant};
pub use transmission_parameters::{RandomFactor, TransmissionParameters};
#[cfg(feature = "edhoc")]
pub use {covey_edhoc, endpoint::EdhocConfig};
#[cfg(feature = "oscore")]
pub use {
    covey_oscore,
    endpoint::SequenceReservation,
    exchange::oscore_contexts::{AddOscoreContextError, OscoreContextId},
};
