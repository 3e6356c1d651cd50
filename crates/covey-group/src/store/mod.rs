//! The entity registry behind a [`Store`] trait: `SqliteStore` (embedded, the default;
//! feature `sqlite`) and [`MemoryStore`] (tests and the simulator).
//!
//! A multicast creation is written twice: first as `Pending` (reserving the name and the
//! group address, in one transaction with the pool position), then made `Active` once every
//! member joined. An EM killed in between finds the pending record at its next start, asks
//! the members to leave and removes it, so a creation is never left half-made.

mod background;
mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use background::BackgroundStore;
pub use memory::MemoryStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

use std::collections::BTreeMap;
use std::net::Ipv6Addr;

/// Whether a stored entity is usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordState {
    /// A multicast creation whose members are still joining.
    Pending,
    /// Created.
    Active,
}

impl RecordState {
    /// The name stored in the database.
    pub fn name(self) -> &'static str {
        match self {
            RecordState::Pending => "pending",
            RecordState::Active => "active",
        }
    }

    /// The state of a stored name.
    pub fn from_name(name: &str) -> Option<RecordState> {
        match name {
            "pending" => Some(RecordState::Pending),
            "active" => Some(RecordState::Active),
            _ => None,
        }
    }
}

/// One stored entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityRecord {
    /// The entity name (unique).
    pub name: String,
    /// Pending or active.
    pub state: RecordState,
    /// The profile as given, a JSON document (see `Profile::to_stored_json`).
    pub profile: String,
    /// The group address of a multicast entity.
    pub group: Option<Ipv6Addr>,
    /// Member URIs found to be entities themselves.
    pub nested: Vec<String>,
}

/// Everything a store holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredState {
    /// Every entity, pending ones included.
    pub entities: Vec<EntityRecord>,
    /// Where the multicast pool continues.
    pub pool_cursor: Option<u32>,
    /// OSCORE sender sequence numbers reserved, by member context (RFC 8613 Appendix
    /// B.1.1): a context resumes at its reservation, whatever became of the entity.
    pub sequences: BTreeMap<String, u64>,
}

/// Why the store failed; one line naming the database and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened or written.
    #[error("entity database {path}: {message}")]
    Unusable {
        /// The database path.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The file is not a (healthy) SQLite database.
    #[error("entity database {path} is corrupt: {message}")]
    Corrupt {
        /// The database path.
        path: String,
        /// What SQLite said.
        message: String,
    },
    /// An entity of that name is already stored.
    #[error("entity \"{0}\" is already stored")]
    Duplicate(String),
    /// No entity of that name is stored.
    #[error("entity \"{0}\" is not stored")]
    Missing(String),
    /// The thread writing the store in the background stopped or could not start.
    #[error("entity store writer: {0}")]
    Writer(String),
}

/// Where entities are kept across restarts. Every write is one transaction. A store may
/// make accepted writes durable later (see [`Store::durable`]); the EM answers a client
/// only once the write its answer reports is durable.
pub trait Store: Send {
    /// Everything stored.
    fn load(&mut self) -> Result<StoredState, StoreError>;

    /// Adds a new entity, and saves the pool position with it when given.
    fn insert(&mut self, record: &EntityRecord, pool_cursor: Option<u32>)
        -> Result<(), StoreError>;

    /// Replaces a stored entity.
    fn update(&mut self, record: &EntityRecord) -> Result<(), StoreError>;

    /// Removes an entity (no error if absent).
    fn remove(&mut self, name: &str) -> Result<(), StoreError>;

    /// Stores that the sequence numbers of member context `key` below `limit` are taken;
    /// durable when it returns, as a context may use them once it has.
    fn reserve_sequence(&mut self, key: &str, limit: u64) -> Result<(), StoreError>;

    /// Writes accepted so far, counted by a store that makes them durable later; a store
    /// that writes before returning counts none.
    fn accepted(&self) -> u64 {
        0
    }

    /// How many of the accepted writes are durable, in order; an error once the store
    /// cannot write any more.
    fn durable(&mut self) -> Result<u64, StoreError> {
        Ok(self.accepted())
    }
}
