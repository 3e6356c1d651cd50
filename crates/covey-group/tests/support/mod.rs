//! Test support for the Entity Manager: the shared in-memory network of covey-proto (its
//! `testing` feature: group membership that member apps change through `/mc`, node restarts),
//! and the client, EM and member apps these tests use.
#![allow(dead_code, unused_imports)]

pub mod client;
pub mod em;
pub mod member;

pub use covey_proto::testing::*;
