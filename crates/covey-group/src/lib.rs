//! The Covey Entity Manager (EM): clients create *entities* — groups of CoAP member
//! resources — and use each like one resource. The EM fans requests out to the members by
//! unicast (paced, CON or NON) or by one multicast request to a group it sets up, collects
//! the replies until `enr` arrived or the deadline, and answers with one combined reply
//! (text, JSON, CBOR, SenML JSON/CBOR). Entities nest, live in SQLite (feature `sqlite`,
//! default; without it in memory only), and the EM is a sans-IO [`covey_proto::App`], so it
//! runs under the tokio driver ([`gateway`], feature `gateway`, default) and in the simulator.
//!
//! ```no_run
//! use covey_group::{EmConfig, EntityManager, MemoryStore};
//! // Or `EntityManager::open(config, "entities.db")` for SQLite (feature `sqlite`).
//! let em = EntityManager::new(EmConfig::default(), Box::new(MemoryStore::new()))
//!     .expect("an empty store loads");
//! // Hand `em` to a driver as its App (e.g. `ServerBuilder::app(Box::new(em))`).
//! # let _ = em;
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admission;
pub mod authorization;
mod client_share;
pub mod config;
pub mod delay;
pub mod document;
pub mod entity;
mod entity_manager;
pub mod error_report;
mod fanout;
#[cfg(feature = "gateway")]
pub mod gateway;
mod incoming;
pub mod listing;
pub mod member;
mod member_context;
mod member_oscore;
pub mod member_value;
mod membership;
pub mod membership_resource;
pub mod multicast_pool;
pub mod operation;
pub mod plural;
mod precision;
mod probe;
pub mod profile;
pub mod query;
pub mod reply;
mod response;
pub mod senml;
pub(crate) mod sources;
pub mod store;
mod task_io;
mod timers;
pub mod validation;
pub mod visited;

pub use config::{EmConfig, CONCURRENT_QUERIES};
pub use entity::Entity;
pub use entity_manager::{EmError, EntityManager};
pub use error_report::{ErrorReport, Reason};
pub use member_context::{decode_hex, MemberContext};
pub use member_oscore::MemberReservation;
pub use membership_resource::GroupMembershipResource;
pub use multicast_pool::{GroupPool, MulticastPool};
pub use operation::Operation;
pub use profile::{Delay, Ect, Emt, Profile, ProfileDocument};
#[cfg(feature = "sqlite")]
pub use store::SqliteStore;
pub use store::{BackgroundStore, EntityRecord, MemoryStore, Store, StoreError};
