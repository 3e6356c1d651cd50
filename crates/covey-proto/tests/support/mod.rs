//! The shared in-memory network (covey-proto's `testing` feature).
#![allow(unused_imports)]

pub use covey_proto::testing::*;
