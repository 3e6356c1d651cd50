//! An index of `u32` values (slab indices, sequence numbers) by a 64-bit digest of the key
//! they stand for, compared in full by the caller's `eq`, in a hash table: the `hash-tables`
//! feature's. Without it (a node's handful of entries) the tables scan their entries
//! themselves and keep no index.

/// The index the engine's tables use.
pub(crate) type DigestTable = HashedDigests;

/// Values in a hash table by digest; several may share one.
#[derive(Debug, Default)]
pub(crate) struct HashedDigests(hashbrown::HashTable<u32>);

impl HashedDigests {
    /// An empty index.
    pub fn new() -> HashedDigests {
        HashedDigests::default()
    }

    /// The value with digest `digest` that `eq` accepts.
    pub fn find(&self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<&u32> {
        self.0.find(digest, eq)
    }

    /// The value with digest `digest` that `eq` accepts, to change in place.
    pub fn find_mut(&mut self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<&mut u32> {
        self.0.find_mut(digest, eq)
    }

    /// Removes the value with digest `digest` that `eq` accepts; returns it.
    pub fn remove(&mut self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<u32> {
        self.0.find_entry(digest, eq).ok().map(|e| e.remove().0)
    }

    /// Adds `value` under `digest` without looking for an equal one; `rehash` gives the
    /// digest of a value already held, for the table to grow.
    pub fn insert_unique(&mut self, digest: u64, value: u32, rehash: impl Fn(&u32) -> u64) {
        self.0.insert_unique(digest, value, rehash);
    }

    /// Values held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.len()
    }
}
