//! The demo and ETSI plugtest resources that `covey serve` offers, as covey-proto
//! [`App`](covey_proto::App)s any server can host: sans-IO, so the same code runs under the
//! tokio driver of the `covey` crate and on a simulated node.
//!
//! - [`demo::DemoApp`]: `/time` (observable, notified when the wall-clock second turns),
//!   `/sensors/temp` (text, JSON or SenML, observable), `/large` (block-wise) and `/echo`;
//!   listed in `/.well-known/core` by [`demo::LINKS`].
//! - [`plugtest::PlugtestApp`]: the ETSI CoAP plugtest set (`/test`, `/separate`, `/obs`,
//!   `/large*`, ...), listed by [`plugtest::links`].
//!
//! # Hosting them
//!
//! Give each App a [`wall_clock::WallClock`] ([`wall_clock::SystemClock`] on a real host),
//! add it to the server, and list its resources in `/.well-known/core`. With the `covey`
//! crate's server, as `covey serve --plugtest` does (the plugtest set first, so that its
//! `/large` is served instead of the demo's):
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use covey_demo::demo::{DemoApp, LINKS};
//! use covey_demo::plugtest::{self, PlugtestApp};
//! use covey_demo::wall_clock::SystemClock;
//!
//! # async fn host() -> Result<(), covey::Error> {
//! let period = Duration::from_secs(5); // how often the plugtest's /obs changes
//! let mut builder = covey::Server::builder()
//!     .bind("[::]:5683".parse().unwrap())
//!     .app(Box::new(PlugtestApp::new(period, Box::new(SystemClock))))
//!     .app(Box::new(DemoApp::new(Box::new(SystemClock))));
//! for link in plugtest::links(period) {
//!     builder = builder.app_link(&link);
//! }
//! for link in LINKS.iter().filter(|l| !l.starts_with("</large>")) {
//!     builder = builder.app_link(link);
//! }
//! let server = builder.start()?;
//! # server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! On a simulated node, hand the same Apps to the node's engine instead (the crate's tests
//! run them on covey-proto's in-memory network with a clock that follows virtual time).

mod clock_text;
pub mod demo;
#[cfg(test)]
mod demo_on_network;
mod negotiation;
mod path;
pub mod plugtest;
#[cfg(test)]
mod plugtest_on_network;
mod reply;
#[cfg(test)]
mod test_network;
pub mod wall_clock;
