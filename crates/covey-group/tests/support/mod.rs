//! Test support for the Entity Manager: the shared in-memory network of covey-proto (its
//! `testing` feature: group membership that member apps change through `/mc`, node restarts),
//! and the client, EM and member apps these tests use.
#![allow(dead_code, unused_imports)]

pub mod client;
pub mod em;
pub mod member;

pub use covey_proto::testing::*;

/// A fresh `entities.db` path in a folder of its own under the system's temporary directory,
/// named after the test binary's `prefix`, the process and `name`.
pub fn temp_db(prefix: &str, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "covey-group-{prefix}-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("entities.db")
}

/// The URI of the sensor resource of test node `n`.
pub fn sensor_uri(n: u16) -> String {
    format!("coap://[2001:db8::{n:x}]/s/t")
}
