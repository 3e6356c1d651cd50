//! A store in memory: nothing survives the process.

use super::{EntityRecord, Store, StoreError, StoredState};
use std::collections::BTreeMap;

/// Entities kept in memory only.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    entities: BTreeMap<String, EntityRecord>,
    pool_cursor: Option<u32>,
    sequences: BTreeMap<String, u64>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// A store holding `state`.
    pub fn with_state(state: StoredState) -> MemoryStore {
        MemoryStore {
            entities: state
                .entities
                .into_iter()
                .map(|r| (r.name.clone(), r))
                .collect(),
            pool_cursor: state.pool_cursor,
            sequences: state.sequences,
        }
    }
}

impl Store for MemoryStore {
    fn load(&mut self) -> Result<StoredState, StoreError> {
        Ok(StoredState {
            entities: self.entities.values().cloned().collect(),
            pool_cursor: self.pool_cursor,
            sequences: self.sequences.clone(),
        })
    }

    fn insert(
        &mut self,
        record: &EntityRecord,
        pool_cursor: Option<u32>,
    ) -> Result<(), StoreError> {
        if self.entities.contains_key(&record.name) {
            return Err(StoreError::Duplicate(record.name.clone()));
        }
        self.entities.insert(record.name.clone(), record.clone());
        if pool_cursor.is_some() {
            self.pool_cursor = pool_cursor;
        }
        Ok(())
    }

    fn update(&mut self, record: &EntityRecord) -> Result<(), StoreError> {
        match self.entities.get_mut(&record.name) {
            Some(r) => {
                *r = record.clone();
                Ok(())
            }
            None => Err(StoreError::Missing(record.name.clone())),
        }
    }

    fn remove(&mut self, name: &str) -> Result<(), StoreError> {
        self.entities.remove(name);
        Ok(())
    }

    fn reserve_sequence(&mut self, key: &str, limit: u64) -> Result<(), StoreError> {
        self.sequences.insert(key.to_string(), limit);
        Ok(())
    }
}
